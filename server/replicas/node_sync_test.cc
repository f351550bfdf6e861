// NodeSync against a real etcd: two "replicas" (an inventory and a NodeSync
// each, on one prefix), an agent's report on one seen by the other, the
// utilisation write rule, and a removal everywhere.
#include "server/replicas/node_sync.h"

#include "ctxsel/v1/ctxsel.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/fleet/device_filter.h"
#include "server/placement/placer.h"
#include "server/placement/placer_bridge.h"
#include "server/store/etcd/etcd_store.h"
#include "tests/testing/etcd_process.h"
#include "tests/testing/eventually.h"

namespace ctxsel::server::etcd {
namespace {

using ::ctxsel::testing::Eventually;

NodeState GpuNode(const std::string& id) {
  NodeState node;
  node.id = id;
  Device gpu;
  gpu.index = 0;
  gpu.sycl_architecture = "nvidia_gpu_sm_90";
  gpu.traits.kind = {"gpu"};
  gpu.traits.arch = {"nvptx"};
  node.devices.push_back(gpu);
  return node;
}

// One replica's inventory side. The sync is destroyed first: its threads
// call the inventory.
struct Replica {
  Replica(EtcdStore* store, NodeSyncOptions options)
      : inventory(InventoryOptions{}, &bridge, &sync),
        sync(store, &bridge, options) {}
  placement::Placer placer;
  PlacerBridge bridge{&placer};
  Inventory inventory;
  NodeSync sync;
};

class NodeSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto etcd = ctxsel::testing::EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status();
    etcd_ = *std::move(etcd);
    for (auto* store : {&store_a_, &store_b_}) {
      auto opened = EtcdStore::Open({etcd_->endpoint()}, "/t/",
                                    etcd_->cluster().ClientOptions());
      ASSERT_TRUE(opened.ok()) << opened.status();
      *store = *std::move(opened);
    }
  }
  // The stored record of `node`: its version (1 = written once) and its
  // first device's utilisation; version 0 when absent.
  std::pair<int64_t, double> Stored(const std::string& node) {
    auto kv = store_a_->client().Range("/t/nodes/" + node, "");
    if (!kv.ok() || kv->kvs_size() == 0) return {0, 0};
    v1::Node record;
    record.ParseFromString(kv->kvs(0).value());
    return {kv->kvs(0).version(), record.devices(0).utilisation()};
  }
  int GpuCount(Inventory& inventory) {
    auto gpus = DeviceFilter::Parse("device={kind(gpu)}", "match");
    if (!gpus.ok()) return -1;
    auto page = inventory.ListDevices(*gpus, "", 0, "");
    return page.ok() ? static_cast<int>(page->items.size()) : -1;
  }

  std::unique_ptr<ctxsel::testing::EtcdProcess> etcd_;
  std::unique_ptr<EtcdStore> store_a_;
  std::unique_ptr<EtcdStore> store_b_;
};

TEST_F(NodeSyncTest, AReportOnOneReplicaIsOnEveryReplicaUntilRemoved) {
  NodeSyncOptions options;
  options.tick = absl::Milliseconds(20);
  Replica a(store_a_.get(), options);
  Replica b(store_b_.get(), options);
  ASSERT_TRUE(a.sync.Start(&a.inventory).ok());
  ASSERT_TRUE(b.sync.Start(&b.inventory).ok());

  ASSERT_TRUE(a.inventory.Report(GpuNode("n1")).ok());
  ASSERT_TRUE(Eventually([&] { return GpuCount(b.inventory) == 1; }));
  // B does not write A's node back: written once, by A.
  EXPECT_EQ(Stored("n1").first, 1);

  ASSERT_TRUE(a.inventory.Deregister("n1").ok());
  ASSERT_TRUE(Eventually([&] { return GpuCount(b.inventory) == 0; }));
  EXPECT_EQ(Stored("n1").first, 0);
}

TEST_F(NodeSyncTest, UtilisationIsWrittenOnlyWhenItMovedByTheDelta) {
  NodeSyncOptions options;
  options.tick = absl::Milliseconds(20);
  options.utilisation_delta = 0.1;
  options.utilisation_interval = absl::ZeroDuration();  // the delta alone
  Replica a(store_a_.get(), options);
  ASSERT_TRUE(a.sync.Start(&a.inventory).ok());
  ASSERT_TRUE(a.inventory.Report(GpuNode("n1")).ok());
  ASSERT_TRUE(Eventually([&] { return Stored("n1").first == 1; }));

  // After each beat a new node is reported: once its record is in etcd,
  // the sync has made every write due at that beat (n1's first: writes
  // go in node order).
  int probes = 0;
  auto beat_and_sync = [&](double utilisation) {
    ASSERT_TRUE(a.inventory.Heartbeat("n1", {{"n1/gpu0", utilisation}}).ok());
    const std::string probe = "probe" + std::to_string(++probes);
    ASSERT_TRUE(a.inventory.Report(GpuNode(probe)).ok());
    ASSERT_TRUE(Eventually([&] { return Stored(probe).first == 1; }));
  };
  beat_and_sync(0.05);  // moved 0.05 from the stored 0: not written
  EXPECT_EQ(Stored("n1").first, 1);
  beat_and_sync(0.09);  // still under 0.1 from what is stored
  EXPECT_EQ(Stored("n1").first, 1);
  beat_and_sync(0.25);  // material
  EXPECT_EQ(Stored("n1").first, 2);
  EXPECT_DOUBLE_EQ(Stored("n1").second, 0.25);
  beat_and_sync(0.3);  // 0.05 from the stored 0.25
  EXPECT_EQ(Stored("n1").first, 2);
  beat_and_sync(0.1);  // 0.15 below it
  EXPECT_EQ(Stored("n1").first, 3);
  EXPECT_DOUBLE_EQ(Stored("n1").second, 0.1);
}

TEST_F(NodeSyncTest, ADeadReplicasNodesGoWithItsLease) {
  NodeSyncOptions options;
  options.tick = absl::Milliseconds(20);
  options.lease_ttl = absl::Seconds(1);
  Replica b(store_b_.get(), options);
  ASSERT_TRUE(b.sync.Start(&b.inventory).ok());
  {
    Replica a(store_a_.get(), options);
    ASSERT_TRUE(a.sync.Start(&a.inventory).ok());
    ASSERT_TRUE(a.inventory.Report(GpuNode("n1")).ok());
    ASSERT_TRUE(Eventually([&] { return GpuCount(b.inventory) == 1; }));
  }  // A stops renewing its lease, as after kill -9
  ASSERT_TRUE(Eventually([&] { return GpuCount(b.inventory) == 0; }));
}

// A node record that does not decode: counted (and logged) on a watch
// event, DATA_LOSS naming the key at start (both used to skip it silently).
TEST_F(NodeSyncTest, ACorruptNodeRecordIsDataLossAtStartAndNeverSilent) {
  NodeSyncOptions options;
  options.tick = absl::Milliseconds(20);
  Replica a(store_a_.get(), options);
  ASSERT_TRUE(a.sync.Start(&a.inventory).ok());
  // One byte of a varint that never ends: no ctxsel.v1.Node.
  ASSERT_TRUE(store_b_->client().Put("/t/nodes/bad", "\xff").ok());
  ASSERT_TRUE(Eventually([&] { return store_a_->corrupt_records() == 1; }));

  Replica b(store_b_.get(), options);
  absl::Status started = b.sync.Start(&b.inventory);
  EXPECT_EQ(started.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(started.message(), ::testing::HasSubstr("/t/nodes/bad"));
}

}  // namespace
}  // namespace ctxsel::server::etcd
