// Real ctxsel-server replicas on one etcd (etcd_process.h), as tests of
// failover start them: each with the etcd's flags (TLS, client
// certificate) and one heartbeat interval; one of them may reach etcd
// through a TcpProxy (tcp_proxy.h), so the test can cut it off. Agents
// are given the replicas' list, rotated to start at the one they should
// report to first.
//
//   auto replicas = EtcdReplicas::Start(*etcd, {.heartbeat = "500ms",
//                                               .proxied = 0});
//   ASSERT_TRUE(replicas.ok()) << replicas.status();
//   auto agent = (*replicas)->StartAgent("node0", kDevicesJson, /*first=*/0);
//   (*replicas)->proxy()->Partition();  // replica 0 cut off from etcd
#ifndef CTXSEL_TESTS_TESTING_ETCD_REPLICAS_H_
#define CTXSEL_TESTS_TESTING_ETCD_REPLICAS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/testing/etcd_process.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/tcp_proxy.h"

namespace ctxsel::testing {

struct EtcdReplicasOptions {
  int replicas = 2;
  // Each replica's --heartbeat_interval, and the agents' --heartbeat.
  std::string heartbeat = "500ms";
  // The replica that reaches etcd through proxy(); -1: none.
  int proxied = -1;
};

class EtcdReplicas {
 public:
  // Starts the replicas (and the proxy) and waits until each is SERVING.
  // `etcd` must outlive them.
  static absl::StatusOr<std::unique_ptr<EtcdReplicas>> Start(
      const EtcdProcess& etcd, EtcdReplicasOptions options = {});

  ServerProcess& replica(int i) { return *replicas_[i]; }
  const std::string& address(int i) const { return replicas_[i]->address(); }
  // Every replica's address, comma-separated, starting at replica `first`.
  std::string List(int first = 0) const;
  // The proxy in front of replica options.proxied; null without one.
  TcpProxy* proxy() const { return proxy_.get(); }
  // A temporary directory of these replicas' test: the agents' files.
  const std::string& dir() const { return dir_; }

  // Starts a real ctxsel-agent (plaintext, no discovery backends) that
  // reports `devices_json` (a devices file's text) as node `node` to
  // List(first), beating every options.heartbeat; its log is
  // dir()/NODE.log. Returns once it runs: the caller waits for its devices.
  absl::StatusOr<std::unique_ptr<Subprocess>> StartAgent(
      const std::string& node, const std::string& devices_json,
      int first) const;

 private:
  EtcdReplicas(EtcdReplicasOptions options, std::string dir)
      : options_(std::move(options)), dir_(std::move(dir)) {}

  const EtcdReplicasOptions options_;
  const std::string dir_;
  std::unique_ptr<TcpProxy> proxy_;
  std::vector<std::unique_ptr<ServerProcess>> replicas_;
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_ETCD_REPLICAS_H_
