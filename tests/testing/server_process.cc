#include "tests/testing/server_process.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace ctxsel::testing {

std::string ServerPath() { return RunfilePath("server/ctxsel-server"); }
std::string CliPath() { return RunfilePath("client/cli/ctxsel-cli"); }

CommandResult RunCli(const std::string& address,
                     std::vector<std::string> args) {
  args.insert(args.begin(), {CliPath(), "--insecure", "--server=" + address});
  return RunCommand(args);
}

absl::Status WaitForServing(const std::string& address,
                            std::chrono::milliseconds timeout) {
  auto channel =
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  const auto deadline = std::chrono::system_clock::now() + timeout;
  std::string last_error = "no answer";
  while (std::chrono::system_clock::now() < deadline) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(500));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = health->Check(&context, request, &response);
    if (status.ok() &&
        response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
      return absl::OkStatus();
    }
    last_error = status.ok() ? "not SERVING" : status.error_message();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(
      absl::StrCat(address, " not SERVING in time: ", last_error));
}

std::optional<bool> HealthServing(const std::string& address,
                                  const std::string& service,
                                  std::chrono::milliseconds timeout) {
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  if (!health->Check(&context, request, &response).ok()) return std::nullopt;
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::vector<std::string>& extra_flags, int port,
    int open_file_limit) {
  std::unique_ptr<ServerProcess> server(new ServerProcess());
  const std::string dir = MakeTempDir("server");
  const std::string port_file = dir + "/port";
  server->log_path_ = dir + "/server.log";
  std::vector<std::string> argv;
  if (open_file_limit > 0) {
    argv = {"/bin/bash", "-c",
            absl::StrCat("ulimit -n ", open_file_limit, " && exec \"$@\""),
            "bash"};
  }
  argv.insert(argv.end(),
              {ServerPath(), absl::StrCat("--listen=127.0.0.1:", port),
               "--port_file=" + port_file});
  const bool tls = std::any_of(
      extra_flags.begin(), extra_flags.end(),
      [](const std::string& flag) { return flag.rfind("--tls_cert", 0) == 0; });
  if (!tls) argv.push_back("--insecure");
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  auto process = Subprocess::Start(argv, server->log_path_, server->log_path_);
  if (!process.ok()) return process.status();
  server->process_ = std::move(*process);

  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!absl::SimpleAtoi(
      absl::StripAsciiWhitespace(ReadFileOrEmpty(port_file)), &server->port_)) {
    if (!server->process_->Running() ||
        std::chrono::steady_clock::now() > deadline) {
      return absl::UnavailableError(
          absl::StrCat("ctxsel-server did not start; log:\n", server->Log()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  server->address_ = absl::StrCat("127.0.0.1:", server->port_);
  if (tls) return server;  // serving: the port file follows the bind
  CTXSEL_RETURN_IF_ERROR(
      WaitForServing(server->address_, std::chrono::seconds(10)));
  return server;
}

absl::StatusOr<std::unique_ptr<Subprocess>> StartDevicesFileAgent(
    const std::string& server, const std::string& node_id,
    const std::string& devices_file, const std::string& device) {
  CTXSEL_ASSIGN_OR_RETURN(
      std::unique_ptr<Subprocess> agent,
      Subprocess::Start({RunfilePath("agent/ctxsel-agent"), "--insecure",
                         "--server=" + server, "--node_id=" + node_id,
                         "--backends=", "--devices_file=" + devices_file}));
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!absl::StrContains(
      RunCommand({CliPath(), "--insecure", "--server=" + server, "devices",
                  "ls", "-o", "name"})
          .stdout_text,
      device)) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(server, " did not list ", device, " within 20 s"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return agent;
}

}  // namespace ctxsel::testing
