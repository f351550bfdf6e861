#include "tests/testing/etcd_replicas.h"

#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ctxsel::testing {

absl::StatusOr<std::unique_ptr<EtcdReplicas>> EtcdReplicas::Start(
    const EtcdProcess& etcd, EtcdReplicasOptions options) {
  std::unique_ptr<EtcdReplicas> replicas(
      new EtcdReplicas(options, MakeTempDir("etcd_replicas")));
  if (options.proxied >= 0) {
    CTXSEL_ASSIGN_OR_RETURN(replicas->proxy_, TcpProxy::Start(etcd.endpoint()));
  }
  for (int i = 0; i < options.replicas; ++i) {
    std::vector<std::string> flags = etcd.ServerFlags();
    if (i == options.proxied) {
      for (std::string& flag : flags) {
        if (absl::StartsWith(flag, "--store=")) {
          flag = "--store=etcd://" + replicas->proxy_->address();
        }
      }
    }
    flags.push_back("--heartbeat_interval=" + options.heartbeat);
    CTXSEL_ASSIGN_OR_RETURN(std::unique_ptr<ServerProcess> server,
                            ServerProcess::Start(flags));
    replicas->replicas_.push_back(std::move(server));
  }
  return replicas;
}

std::string EtcdReplicas::List(int first) const {
  std::vector<std::string> list;
  const int n = static_cast<int>(replicas_.size());
  for (int i = 0; i < n; ++i) list.push_back(address((first + i) % n));
  return absl::StrJoin(list, ",");
}

absl::StatusOr<std::unique_ptr<Subprocess>> EtcdReplicas::StartAgent(
    const std::string& node, const std::string& devices_json, int first) const {
  const std::string file = absl::StrCat(dir_, "/", node, ".json");
  std::ofstream(file) << devices_json;
  return Subprocess::Start({RunfilePath("agent/ctxsel-agent"), "--insecure",
                            "--server=" + List(first), "--node_id=" + node,
                            "--backends=", "--devices_file=" + file,
                            "--heartbeat=" + options_.heartbeat},
                           "", absl::StrCat(dir_, "/", node, ".log"));
}

}  // namespace ctxsel::testing
