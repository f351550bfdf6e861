// Starts a real single-member etcd (Debian's etcd-server, tools/setup.sh) on
// loopback for a test, in a fresh data directory (mode 0700), and waits
// until it answers: an EtcdCluster (etcd_cluster.h) of one member, which
// says how ports are found. Restart() reuses the ports and fails if one
// was taken meanwhile.
//
//   auto etcd = EtcdProcess::Start();
//   ASSERT_TRUE(etcd.ok()) << etcd.status();
//   ServerProcess::Start((*etcd)->ServerFlags());  // --store, --etcd_ca, ...
//   (*etcd)->Kill();               // etcd unreachable
//   ASSERT_TRUE((*etcd)->Restart().ok());  // same ports, same data
#ifndef CTXSEL_TESTS_TESTING_ETCD_PROCESS_H_
#define CTXSEL_TESTS_TESTING_ETCD_PROCESS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/testing/etcd_cluster.h"

namespace ctxsel::testing {

class EtcdProcess {
 public:
  // TLS with client certificates unless `options` says plaintext
  // (EtcdCluster).
  static absl::StatusOr<std::unique_ptr<EtcdProcess>> Start(
      EtcdOptions options = {});

  // host:port of the client API, e.g. "127.0.0.1:41234".
  const std::string& endpoint() const { return cluster_->endpoint(0); }
  // SIGKILL, and wait for the process to be gone.
  void Kill() { cluster_->Kill(0); }
  // Starts etcd again on the same ports and data directory (after Kill),
  // and waits until it leads itself.
  absl::Status Restart();
  std::string Log() const { return cluster_->Log(0); }
  // EtcdCluster's: --store and the TLS flags; the certificates' directory.
  std::vector<std::string> ServerFlags() const {
    return cluster_->ServerFlags();
  }
  const std::string& pki_dir() const { return cluster_->pki_dir(); }
  EtcdCluster& cluster() { return *cluster_; }

 private:
  explicit EtcdProcess(std::unique_ptr<EtcdCluster> cluster)
      : cluster_(std::move(cluster)) {}

  std::unique_ptr<EtcdCluster> cluster_;
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_ETCD_PROCESS_H_
