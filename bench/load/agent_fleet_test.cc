#include "bench/load/agent_fleet.h"

#include <grpcpp/grpcpp.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/load/proc_status.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::load {
namespace {

constexpr int kNodes = 300;

// Reads a WatchInventory stream until it has seen `removed` REMOVED events
// or the stream ends; counts ADDED and REMOVED.
struct Watcher {
  explicit Watcher(const std::string& address)
      : stub(v1::Inventory::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    reader = stub->WatchInventory(&context, v1::WatchInventoryRequest());
    thread = std::thread([this] {
      v1::InventoryEvent event;
      while (removed < kNodes && reader->Read(&event)) {
        const bool added_event = event.kind() == v1::InventoryEvent::KIND_ADDED;
        if (absl::StartsWith(event.node().id(), "sentinel-")) {
          if (added_event) ++sentinels_added;
          continue;
        }
        if (added_event) ++added;
        if (event.kind() == v1::InventoryEvent::KIND_REMOVED) ++removed;
      }
    });
  }
  ~Watcher() {
    context.TryCancel();
    thread.join();
  }
  std::unique_ptr<v1::Inventory::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::InventoryEvent>> reader;
  // The fleet's nodes; sentinel nodes (the watch is in place) apart.
  std::atomic<int> added{0}, removed{0}, sentinels_added{0};
  std::thread thread;
};

TEST(AgentFleetTest, ManyStreamsAreServedWithoutAThreadEach) {
  // A long TTL: with the default (3 x 200ms) a loaded machine that takes
  // longer than 600ms to report the fleet expires the first nodes before
  // they beat, and their re-reports are not what this test counts.
  auto server = testing::ServerProcess::Start(
      {"--heartbeat_interval=200ms", "--node_ttl=60s"});
  ASSERT_TRUE(server.ok()) << server.status();
  const pid_t pid = (*server)->process().pid();
  auto before = ReadProcStatus(pid);
  ASSERT_TRUE(before.ok()) << before.status();
  Watcher watcher((*server)->address());
  // The watch starts at the server's latest event when the server takes
  // the call, which may be after the fleet's first reports: a sentinel
  // node seen added shows the watch is in place first. A new sentinel each
  // try, since a report of a node already known (one reported before the
  // watch was in place) is no ADDED event; that race failed the test on a
  // loaded machine when one sentinel was re-reported.
  {
    std::vector<std::string> sentinels;
    const absl::Time seen_deadline = absl::Now() + absl::Seconds(20);
    while (watcher.sentinels_added == 0 && absl::Now() < seen_deadline) {
      v1::ReportNodeRequest sentinel;
      sentinels.push_back(absl::StrCat("sentinel-", sentinels.size()));
      sentinel.mutable_node()->set_id(sentinels.back());
      v1::Device* cpu = sentinel.mutable_node()->add_devices();
      cpu->set_index(-1);
      cpu->mutable_traits()->add_kind("cpu");
      cpu->mutable_traits()->add_kind("host");
      grpc::ClientContext context;
      v1::ReportNodeResponse response;
      watcher.stub->ReportNode(&context, sentinel, &response);
      absl::SleepFor(absl::Milliseconds(50));
    }
    ASSERT_GE(watcher.sentinels_added, 1);
    for (const std::string& node : sentinels) {
      grpc::ClientContext context;
      v1::DeregisterRequest request;
      request.set_node(node);
      v1::DeregisterResponse response;
      watcher.stub->Deregister(&context, request, &response);
    }
  }

  AgentFleetOptions options;
  options.server = (*server)->address();
  options.nodes = kNodes;
  options.devices_per_node = 2;
  options.channels = 4;
  auto fleet = AgentFleet::Start(options);
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  // Every agent beats a few times.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while ((*fleet)->Stats().beats_answered < 3 * kNodes &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  const AgentStats stats = (*fleet)->Stats();
  EXPECT_GE(stats.beats_answered, 3 * kNodes);
  EXPECT_EQ(stats.rereports, 0);
  EXPECT_EQ(stats.streams_failed, 0);
  EXPECT_GT(stats.beat_latency.p50, absl::ZeroDuration());

  // A synchronous server would hold one thread per open stream.
  auto during = ReadProcStatus(pid);
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_LT(during->threads - before->threads, kNodes / 4)
      << "threads before " << before->threads << ", with " << kNodes
      << " streams " << during->threads;

  ASSERT_TRUE((*fleet)->Stop().ok());
  const absl::Time watch_deadline = absl::Now() + absl::Seconds(20);
  while (watcher.removed < kNodes && absl::Now() < watch_deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(watcher.added, kNodes);
  EXPECT_EQ(watcher.removed, kNodes);
}

}  // namespace
}  // namespace ctxsel::load
