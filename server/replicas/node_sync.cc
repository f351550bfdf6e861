#include "server/replicas/node_sync.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ctxsel/v1/ctxsel.pb.h"
#include "server/fleet/node_proto.h"
#include "server/fleet/node_report.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server::etcd {
namespace {

// Set while this thread applies another replica's node to the inventory:
// the observer calls that come back are not written to etcd again.
thread_local bool applying_remote = false;

class ApplyingRemote {
 public:
  ApplyingRemote() { applying_remote = true; }
  ~ApplyingRemote() { applying_remote = false; }
};

std::string NodeRecord(const std::string& id, const std::string& agent_version,
                       const std::vector<Device>& devices) {
  NodeState node;
  node.id = id;
  node.agent_version = agent_version;
  node.devices = devices;
  v1::Node proto;
  NodeToProto(node, /*with_devices=*/true, &proto);
  return proto.SerializeAsString();
}

// A node record as stored, or DATA_LOSS.
absl::StatusOr<v1::Node> NodeFromValue(const std::string& value) {
  v1::Node proto;
  if (!proto.ParseFromString(value)) {
    return absl::DataLossError("not a stored node (ctxsel.v1.Node)");
  }
  return proto;
}

}  // namespace

absl::Duration NodeLeaseTtl(absl::Duration node_ttl) {
  return std::max(node_ttl, kMinNodeLease);
}

NodeSync::NodeSync(EtcdStore* store, const DeviceStore* devices,
                   NodeSyncOptions options)
    : store_(store), devices_(devices), options_(options) {}

NodeSync::~NodeSync() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread* loop : {&write_loop_, &lease_loop_, &beat_loop_}) {
    if (loop->joinable()) loop->join();
  }
  watch_.reset();
}

absl::Status NodeSync::Start(Inventory* inventory) {
  inventory_ = inventory;
  EtcdClient& client = store_->client();
  CTXSEL_ASSIGN_OR_RETURN(int64_t lease, client.LeaseGrant(options_.lease_ttl));
  {
    absl::MutexLock lock(&mu_);
    lease_ = lease;
  }
  const std::string prefix = store_->keys().Nodes();
  CTXSEL_ASSIGN_OR_RETURN(etcdserverpb::RangeResponse nodes,
                          client.Range(prefix, PrefixEnd(prefix)));
  for (const mvccpb::KeyValue& kv : nodes.kvs()) {
    absl::StatusOr<v1::Node> proto = NodeFromValue(kv.value());
    if (!proto.ok()) return store_->CorruptRecord(kv.key(), proto.status());
    ApplyRemote(NodeFromProto(*proto));
  }
  EtcdClient::WatchCallbacks callbacks;
  callbacks.on_events = [this](const etcdserverpb::WatchResponse& response) {
    OnEvents(response);
  };
  callbacks.on_state = [this](bool connected) { following_.store(connected); };
  watch_ = client.Watch(prefix, PrefixEnd(prefix),
                        nodes.header().revision() + 1, std::move(callbacks));
  write_loop_ = std::thread([this] { WriteLoop(); });
  lease_loop_ = std::thread([this] { LeaseLoop(); });
  beat_loop_ = std::thread([this] { BeatLoop(); });
  return absl::OkStatus();
}

void NodeSync::NodeReported(const NodeState& node) {
  if (applying_remote) return;
  absl::MutexLock lock(&mu_);
  LocalNode& local = local_[node.id];
  local.agent_version = node.agent_version;
  local.written.clear();
  local.material = false;
  local.beaten = false;
  // As if written at a random point of the last interval: nodes reported
  // together (a replica's agents after its restart) then spread their
  // utilisation writes over the interval instead of writing together.
  local.last_written = absl::Now() - absl::Uniform(bits_, 0.0, 1.0) *
                                         options_.utilisation_interval;
  remote_.erase(node.id);
  pending_[node.id] = true;
}

void NodeSync::NodeRemoved(const std::string& node, const std::string&) {
  if (applying_remote) return;
  absl::MutexLock lock(&mu_);
  if (local_.erase(node) > 0) pending_[node] = false;
}

void NodeSync::NodeBeat(const std::string& node) {
  if (applying_remote) return;
  // On the heartbeat's thread: only a mark; the loop reads utilisation.
  absl::MutexLock lock(&mu_);
  auto it = local_.find(node);
  if (it != local_.end()) it->second.beaten = true;
}

void NodeSync::ApplyRemote(NodeState node) {
  const std::string id = node.id;
  bool same = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = remote_.find(id);
    same = it != remote_.end() && SameDevices(it->second.devices, node.devices);
    remote_[id] = node;
  }
  ApplyingRemote guard;
  if (same) {
    std::vector<std::pair<std::string, double>> utilisation;
    for (const Device& d : node.devices) {
      utilisation.emplace_back(d.id, d.properties.utilisation);
    }
    absl::StatusOr<Inventory::BeatAnswer> beat =
        inventory_->Heartbeat(id, utilisation);
    if (beat.ok() && *beat == Inventory::BeatAnswer::kRecorded) return;
  }
  if (absl::Status s = inventory_->Report(std::move(node)); !s.ok()) {
    spdlog::warn("node {} from etcd not taken: {}", id, s.ToString());
  }
}

void NodeSync::OnEvents(const etcdserverpb::WatchResponse& response) {
  const std::string prefix = store_->keys().Nodes();
  for (const mvccpb::Event& event : response.events()) {
    const mvccpb::KeyValue& kv = event.kv();
    const std::string id = NameAfter(prefix, kv.key());
    if (event.type() == mvccpb::Event::PUT) {
      {
        absl::MutexLock lock(&mu_);
        if (kv.lease() == lease_) continue;  // this replica's own write
        // Another replica holds the agent now.
        local_.erase(id);
        pending_.erase(id);
      }
      absl::StatusOr<v1::Node> proto = NodeFromValue(kv.value());
      if (!proto.ok()) {
        store_->CorruptRecord(kv.key(), proto.status()).IgnoreError();
        continue;
      }
      ApplyRemote(NodeFromProto(*proto));
      continue;
    }
    bool was_remote = false;
    {
      absl::MutexLock lock(&mu_);
      if (local_.count(id)) {
        // Our record went (the lease lapsed while etcd was away): again.
        pending_[id] = true;
        continue;
      }
      was_remote = remote_.erase(id) > 0;
    }
    if (was_remote) {
      ApplyingRemote guard;
      inventory_->Deregister(id).IgnoreError();
    }
  }
}

bool NodeSync::WaitFor(absl::Duration wait, bool wake_on_pending) {
  absl::MutexLock lock(&mu_);
  auto wake = [this, wake_on_pending]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || (wake_on_pending && !pending_.empty());
  };
  mu_.AwaitWithTimeout(absl::Condition(&wake), wait);
  return !stopping_;
}

void NodeSync::WriteLoop() {
  while (WaitFor(options_.tick, /*wake_on_pending=*/true)) WriteDue();
}

void NodeSync::LeaseLoop() {
  while (WaitFor(options_.lease_ttl / 5, /*wake_on_pending=*/false)) {
    KeepLeaseAlive();
  }
}

void NodeSync::BeatLoop() {
  while (WaitFor(options_.tick, /*wake_on_pending=*/false)) BeatRemoteNodes();
}

void NodeSync::WriteDue() {
  std::vector<std::pair<std::string, std::string>> puts;  // key, value
  std::vector<std::string> deletes;
  int64_t lease = 0;
  {
    absl::MutexLock lock(&mu_);
    lease = lease_;
    const absl::Time now = absl::Now();
    for (auto& [id, local] : local_) {
      if (local.beaten) {
        local.beaten = false;
        for (const Device& d : devices_->NodeDevices(id)) {
          auto written = local.written.find(d.id);
          const double stored =
              written == local.written.end() ? 0 : written->second;
          if (std::abs(d.properties.utilisation - stored) >=
              options_.utilisation_delta) {
            local.material = true;
          }
        }
      }
      if (local.material &&
          now - local.last_written >= options_.utilisation_interval) {
        pending_[id] = true;
      }
    }
    for (const auto& [id, put] : pending_) {
      if (!put) {
        deletes.push_back(id);
        continue;
      }
      auto it = local_.find(id);
      if (it == local_.end()) continue;
      LocalNode& local = it->second;
      const std::vector<Device> devices = devices_->NodeDevices(id);
      puts.emplace_back(id, NodeRecord(id, local.agent_version, devices));
      for (const Device& d : devices) {
        local.written[d.id] = d.properties.utilisation;
      }
      local.material = false;
      // A report's own write keeps its spread-out start.
      if (local.last_written <= now - options_.utilisation_interval) {
        local.last_written = now;
      }
    }
    pending_.clear();
  }
  EtcdClient& client = store_->client();
  std::vector<std::pair<std::string, bool>> failed;
  bool reachable = true;  // after one UNAVAILABLE, the rest wait too
  for (const auto& [id, value] : puts) {
    absl::Status put =
        reachable ? client.Put(store_->keys().Node(id), value, lease).status()
                  : absl::UnavailableError("etcd unreachable");
    if (!put.ok()) {
      reachable = reachable && !absl::IsUnavailable(put);
      failed.emplace_back(id, true);
    }
  }
  for (const std::string& id : deletes) {
    // Only our own record: another replica may hold the node by now.
    etcdserverpb::TxnRequest txn;
    auto* compare = txn.add_compare();
    compare->set_key(store_->keys().Node(id));
    compare->set_target(etcdserverpb::Compare::LEASE);
    compare->set_result(etcdserverpb::Compare::EQUAL);
    compare->set_lease(lease);
    txn.add_success()->mutable_request_delete_range()->set_key(
        store_->keys().Node(id));
    absl::Status deleted = reachable
                               ? client.Txn(txn).status()
                               : absl::UnavailableError("etcd unreachable");
    if (!deleted.ok()) {
      reachable = reachable && !absl::IsUnavailable(deleted);
      failed.emplace_back(id, false);
    }
  }
  if (!failed.empty()) {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, put] : failed) pending_.try_emplace(id, put);
  }
}

void NodeSync::KeepLeaseAlive() {
  EtcdClient& client = store_->client();
  int64_t lease = 0;
  {
    absl::MutexLock lock(&mu_);
    lease = lease_;
  }
  absl::StatusOr<absl::Duration> ttl = client.LeaseKeepAlive(lease);
  if (ttl.ok() || !absl::IsNotFound(ttl.status())) return;
  // Lapsed (etcd was away longer than the TTL): a new lease, every record
  // of ours again.
  absl::StatusOr<int64_t> fresh = client.LeaseGrant(options_.lease_ttl);
  if (!fresh.ok()) return;
  spdlog::warn("etcd lease of this replica's nodes lapsed; writing them again");
  absl::MutexLock lock(&mu_);
  lease_ = *fresh;
  for (const auto& [id, local] : local_) pending_[id] = true;
}

void NodeSync::BeatRemoteNodes() {
  std::vector<NodeState> nodes;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, node] : remote_) nodes.push_back(node);
  }
  ApplyingRemote guard;
  for (NodeState& node : nodes) {
    absl::StatusOr<Inventory::BeatAnswer> beat =
        inventory_->Heartbeat(node.id, {});
    if (beat.ok() && *beat == Inventory::BeatAnswer::kUnknownNode) {
      inventory_->Report(std::move(node)).IgnoreError();
    }
  }
}

}  // namespace ctxsel::server::etcd
