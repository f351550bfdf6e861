// node_sync.h: shares the fleet between replicas on etcd (docs/deployment.md,
// "Inventory"). Each agent holds its heartbeat stream to one replica; that
// replica writes the node's record (ctxsel.v1.Node, devices and their
// utilisation) under PREFIX/nodes/NODE on a lease of its own, which it keeps
// alive while it runs (one lease per replica, TTL = NodeLeaseTtl()). Every
// replica watches PREFIX/nodes/ and applies the other replicas' nodes to
// its own inventory, keeping them alive there while their key exists. So:
//   * a dead agent: its replica expires it and deletes the key; every
//     replica drops its devices;
//   * a dead replica: its lease expires after its TTL and its nodes'
//     keys go with it — unless their agents have reported to another
//     replica first, which writes them again on its own lease (an agent
//     that fails over within the TTL keeps its devices everywhere);
//   * utilisation is written no more often than it changes materially: a
//     node's record is rewritten when one of its devices' utilisation has
//     moved by at least `utilisation_delta` since the record was written,
//     and then at most once per `utilisation_interval` per node, the
//     nodes' intervals spread at random (etcd is not built for one write
//     per heartbeat: 10,000 nodes beating each second would be 10,000
//     writes/s; with the defaults, 0.1 and 30 s, they make at most 333/s).
//
// NodeSync is the inventory's observer: it writes what this replica's
// agents reported, reading their devices and utilisation from the device
// store. Changes it applies from etcd are not written back.
//
// Three threads, so that no etcd call delays another kind of work: one
// keeps the other replicas' nodes alive in the inventory (no etcd call: an
// etcd member that hangs must not make the fleet expire here), one writes
// the records, one renews the lease (a write stuck on a paused member must
// not let the lease lapse).
//
//   NodeSync sync(store, &bridge, options);
//   Inventory inventory(inventory_options, &bridge, &sync);
//   sync.Start(&inventory);
#ifndef CTXSEL_SERVER_REPLICAS_NODE_SYNC_H_
#define CTXSEL_SERVER_REPLICAS_NODE_SYNC_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/fleet/inventory.h"
#include "server/store/etcd/etcd_client.h"
#include "server/store/etcd/etcd_store.h"

namespace ctxsel::server::etcd {

// The lease a replica's node records live on, for a node TTL of
// `node_ttl`: the node TTL, but never shorter than kMinNodeLease. An etcd
// leader election (a killed or paused leader: etcd's election timeout, 1 s
// by default, and more under load) passes while a lease is renewed through
// another member; a lease shorter than that would let every node of the
// replica vanish from every replica. The cost: nodes of an agent that died
// with its replica stay listed elsewhere up to kMinNodeLease.
inline constexpr absl::Duration kMinNodeLease = absl::Seconds(5);
absl::Duration NodeLeaseTtl(absl::Duration node_ttl);

struct NodeSyncOptions {
  // The lease on this replica's node records (NodeLeaseTtl()); renewed
  // every fifth of it.
  absl::Duration lease_ttl = absl::Seconds(5);
  // How often other replicas' nodes are kept alive in the local inventory
  // and due writes are made: the heartbeat interval.
  absl::Duration tick = absl::Seconds(1);
  double utilisation_delta = 0.1;
  absl::Duration utilisation_interval = absl::Seconds(30);
};

class NodeSync final : public InventoryObserver {
 public:
  // `store` and `devices` (the inventory's device store) must outlive the
  // sync.
  NodeSync(EtcdStore* store, const DeviceStore* devices,
           NodeSyncOptions options);
  ~NodeSync() override;

  // Takes a lease, loads the nodes other replicas hold into `inventory`
  // (which must outlive the sync) and follows them. The store's error;
  // DATA_LOSS for a node record that does not decode
  // (EtcdStore::CorruptRecord), which a running sync leaves out.
  absl::Status Start(Inventory* inventory);

  // False while its watch of the nodes in etcd is broken (etcd away, or
  // the watch reconnecting after it came back): the replica cannot learn
  // meanwhile that another replica took one of its nodes, so it must not
  // expire them (the server's housekeeping waits for this and for
  // ReplicaSync::stale(); each watch reconnects on its own).
  bool following() const { return following_.load(); }

  void NodeReported(const NodeState& node) override;
  void NodeRemoved(const std::string& node, const std::string& reason) override;
  void NodeBeat(const std::string& node) override;

 private:
  // A node whose agent reports to this replica.
  struct LocalNode {
    std::string agent_version;
    std::map<std::string, double> written;  // device -> utilisation stored
    absl::Time last_written = absl::InfinitePast();
    bool beaten = false;    // since the loop last read its utilisation
    bool material = false;  // moved by >= delta since written
  };
  void OnEvents(const etcdserverpb::WatchResponse& response);
  void ApplyRemote(NodeState node);
  // The three threads' loops.
  void WriteLoop();
  void LeaseLoop();
  void BeatLoop();
  // False once the sync stops; else after `wait`, or earlier when
  // `wake_on_pending` and a write is pending.
  bool WaitFor(absl::Duration wait, bool wake_on_pending);
  void WriteDue();
  void KeepLeaseAlive();
  void BeatRemoteNodes();

  EtcdStore* const store_;
  const DeviceStore* const devices_;
  const NodeSyncOptions options_;
  Inventory* inventory_ = nullptr;
  mutable absl::Mutex mu_;
  int64_t lease_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, LocalNode> local_ ABSL_GUARDED_BY(mu_);
  // Other replicas' nodes as last applied.
  std::map<std::string, NodeState> remote_ ABSL_GUARDED_BY(mu_);
  // Node -> true: put its record; false: delete it.
  std::map<std::string, bool> pending_ ABSL_GUARDED_BY(mu_);
  absl::BitGen bits_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread write_loop_;
  std::thread lease_loop_;
  std::thread beat_loop_;
  std::atomic<bool> following_{true};
  std::unique_ptr<EtcdWatch> watch_;
};

}  // namespace ctxsel::server::etcd

#endif  // CTXSEL_SERVER_REPLICAS_NODE_SYNC_H_
