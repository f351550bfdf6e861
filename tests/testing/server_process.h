// Starts the real ctxsel-server binary on a free loopback port for a test and
// waits until its gRPC health check answers SERVING.
//
//   auto server = ServerProcess::Start({"--node_ttl=3s"});
//   ASSERT_TRUE(server.ok()) << server.status();
//   RunCli((*server)->address(), {"ping"});
#ifndef CTXSEL_TESTS_TESTING_SERVER_PROCESS_H_
#define CTXSEL_TESTS_TESTING_SERVER_PROCESS_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {

// Runfiles paths of the real binaries (the test must list them in `data`).
std::string ServerPath();
std::string CliPath();

// Runs the real ctxsel-cli, plaintext, against the server at `address`
// with `args` (a command and its flags) and waits for it to exit.
CommandResult RunCli(const std::string& address, std::vector<std::string> args);

// Polls the standard gRPC health service at `address` until it reports
// SERVING or `timeout` passes.
absl::Status WaitForServing(const std::string& address,
                            std::chrono::milliseconds timeout);

// Whether `service` ("" for the server as a whole, "ctxsel.store", ...) is
// SERVING in `address`'s health service; nullopt when the check fails or
// has no answer within `timeout`.
std::optional<bool> HealthServing(
    const std::string& address, const std::string& service,
    std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Starts a real ctxsel-agent (plaintext, no discovery backends) that
// reports `devices_file` as node `node_id` to `server`, and returns once
// `ctxsel-cli devices ls` there lists `device` ("NODE/NAME", e.g. the
// file's last device), or an error after 20 s. The test lists
// //agent:ctxsel-agent and the CLI in `data`.
absl::StatusOr<std::unique_ptr<Subprocess>> StartDevicesFileAgent(
    const std::string& server, const std::string& node_id,
    const std::string& devices_file, const std::string& device);

class ServerProcess {
 public:
  // Starts ctxsel-server with --listen=127.0.0.1:<port> (0 = a free port)
  // plus `extra_flags` — plus --insecure unless they hold --tls_cert — and
  // waits for SERVING (with TLS, for the port file only: the caller has
  // the credentials). Its log goes to log_path().
  // open_file_limit > 0 sets the server's soft and hard RLIMIT_NOFILE
  // (`ulimit -n`), so the server cannot raise it.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      const std::vector<std::string>& extra_flags = {}, int port = 0,
      int open_file_limit = 0);

  const std::string& address() const { return address_; }
  int port() const { return port_; }
  Subprocess& process() { return *process_; }
  const std::string& log_path() const { return log_path_; }
  std::string Log() const { return ReadFileOrEmpty(log_path_); }

 private:
  ServerProcess() = default;
  std::unique_ptr<Subprocess> process_;
  std::string address_;
  std::string log_path_;
  int port_ = 0;
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_SERVER_PROCESS_H_
