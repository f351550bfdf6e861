// Starts a real single-member etcd (Debian's etcd-server, tools/setup.sh) on
// loopback for a test, in a fresh data directory (mode 0700), and waits
// until it answers. etcd cannot listen on port 0, so free ports are found
// by binding 127.0.0.1:0 and closing; a start that loses its port to
// another process (seen by etcd exiting, or by another etcd answering on
// the client port) is retried with new ones. Restart() reuses the ports and
// fails if one was taken meanwhile.
//
//   auto etcd = EtcdProcess::Start();
//   ASSERT_TRUE(etcd.ok()) << etcd.status();
//   ServerProcess::Start({"--store=etcd://" + (*etcd)->endpoint()});
//   (*etcd)->Kill();               // etcd unreachable
//   ASSERT_TRUE((*etcd)->Restart().ok());  // same ports, same data
#ifndef CTXSEL_TESTS_TESTING_ETCD_PROCESS_H_
#define CTXSEL_TESTS_TESTING_ETCD_PROCESS_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {

class EtcdProcess {
 public:
  static absl::StatusOr<std::unique_ptr<EtcdProcess>> Start();

  // host:port of the client API, e.g. "127.0.0.1:41234".
  const std::string& endpoint() const { return endpoint_; }
  // SIGKILL, and wait for the process to be gone.
  void Kill();
  // Starts etcd again on the same ports and data directory (after Kill).
  absl::Status Restart();
  std::string Log() const { return ReadFileOrEmpty(log_path_); }

 private:
  EtcdProcess() = default;
  absl::Status Launch();

  std::string dir_;
  std::string log_path_;
  int client_port_ = 0;
  int peer_port_ = 0;
  std::string endpoint_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_ETCD_PROCESS_H_
