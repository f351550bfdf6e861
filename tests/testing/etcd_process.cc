#include "tests/testing/etcd_process.h"

#include <chrono>

#include "base/status_macros.h"

namespace ctxsel::testing {

absl::StatusOr<std::unique_ptr<EtcdProcess>> EtcdProcess::Start(
    EtcdOptions options) {
  CTXSEL_ASSIGN_OR_RETURN(std::unique_ptr<EtcdCluster> cluster,
                          EtcdCluster::Start(1, options));
  return std::unique_ptr<EtcdProcess>(new EtcdProcess(std::move(cluster)));
}

absl::Status EtcdProcess::Restart() {
  CTXSEL_RETURN_IF_ERROR(cluster_->Restart(0));
  return cluster_->WaitForLeader(std::chrono::seconds(20));
}

}  // namespace ctxsel::testing
