// WatchInventory resuming on the same real server (docs/api.md, "Watching
// the inventory"): a watcher that reconnects with resume_after and
// resume_epoch gets exactly the events it missed, then live ones; a
// position from another numbering gets a resync snapshot; an impossible one
// INVALID_ARGUMENT naming the field. And CtxselClient::WatchInventory on a
// server list failing over to another server: the caller sees the
// difference as one stream.
#include <signal.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/grpc_status.h"
#include "base/status_details.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::ElementsAre;

class WatchResumeE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    // No agents beat here: nodes must outlive the test.
    auto server = ServerProcess::Start({"--node_ttl=120s"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    client_ = client::CtxselClient::Connect(server_->address());
    inventory_ = v1::Inventory::NewStub(client_->channel());
  }

  // The first `count` events of a stream opened with `request`, each as
  // "KIND_X node @sequence"; the epoch of the last in `epoch`.
  std::vector<std::string> Read(const v1::WatchInventoryRequest& request,
                                int count, std::string* epoch = nullptr) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    auto reader = inventory_->WatchInventory(&context, request);
    std::vector<std::string> seen;
    v1::InventoryEvent event;
    while (static_cast<int>(seen.size()) < count && reader->Read(&event)) {
      seen.push_back(absl::StrCat(v1::InventoryEvent::Kind_Name(event.kind()),
                                  " ", event.node().id(), " @",
                                  event.sequence()));
      if (epoch != nullptr) *epoch = event.stream_epoch();
    }
    context.TryCancel();
    reader->Finish().ok();  // CANCELLED: this side stopped
    return seen;
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::CtxselClient> client_;
  std::unique_ptr<v1::Inventory::Stub> inventory_;
};

TEST_F(WatchResumeE2E, ResumeReplaysExactlyTheMissedEventsThenGoesOnLive) {
  ASSERT_TRUE(client_->ReportNode(CpuNode("n1")).ok());
  v1::WatchInventoryRequest initial;
  initial.set_initial(true);
  std::string epoch;
  ASSERT_THAT(Read(initial, 1, &epoch), ElementsAre("KIND_ADDED n1 @1"));
  ASSERT_FALSE(epoch.empty());
  // Missed while away: three changes.
  ASSERT_TRUE(client_->ReportNode(CpuNode("n2")).ok());
  ASSERT_TRUE(
      client_
          ->ReportNode(GpuNode("n1", "nvidia", "nvptx", "nvidia_gpu_sm_90", 1))
          .ok());
  ASSERT_TRUE(client_->Deregister("n2").ok());

  v1::WatchInventoryRequest resume;
  resume.set_resume_after(1);
  resume.set_resume_epoch(epoch);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(client_->ReportNode(CpuNode("n3")).ok());
  });
  EXPECT_THAT(Read(resume, 4),
              ElementsAre("KIND_ADDED n2 @2", "KIND_CHANGED n1 @3",
                          "KIND_REMOVED n2 @4", "KIND_ADDED n3 @5"));
  later.join();

  // A numbering this server does not use: the live nodes, then the end.
  resume.set_resume_epoch("another-replica");
  EXPECT_THAT(Read(resume, 3),
              ElementsAre("KIND_RESYNC n1 @5", "KIND_RESYNC n3 @5",
                          "KIND_RESYNC_END  @5"));
}

TEST_F(WatchResumeE2E, AResumePastTheLatestEventIsABadRequest) {
  ASSERT_TRUE(client_->ReportNode(CpuNode("n1")).ok());
  v1::WatchInventoryRequest initial;
  initial.set_initial(true);
  std::string epoch;
  ASSERT_THAT(Read(initial, 1, &epoch), ElementsAre("KIND_ADDED n1 @1"));

  v1::WatchInventoryRequest resume;
  resume.set_resume_after(2);
  resume.set_resume_epoch(epoch);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(10));
  auto reader = inventory_->WatchInventory(&context, resume);
  v1::InventoryEvent event;
  EXPECT_FALSE(reader->Read(&event));
  const absl::Status status = FromGrpcStatus(reader->Finish());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  auto bad = GetDetail<google::rpc::BadRequest>(status);
  ASSERT_TRUE(bad.has_value()) << status;
  EXPECT_EQ(bad->field_violations(0).field(), "resume_after");
}

// The client library's side: a watch on a list "A,B" whose server A dies
// goes on at B; B's nodes are not A's, so the caller gets the difference
// (B's node added, A's removed, reason "resync") and no KIND_RESYNC. A dies
// after a live event, so the watch has a position to resume from (a
// snapshot cut short would be answered as "initial" again).
TEST(WatchFailoverE2E, AWatchOnAServerListGoesOnAtTheNextServer) {
  auto a = ServerProcess::Start({"--node_ttl=120s"});
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = ServerProcess::Start({"--node_ttl=120s"});
  ASSERT_TRUE(b.ok()) << b.status();
  auto to_a = client::CtxselClient::Connect((*a)->address());
  ASSERT_TRUE(to_a->ReportNode(CpuNode("on-a")).ok());
  ASSERT_TRUE(client::CtxselClient::Connect((*b)->address())
                  ->ReportNode(CpuNode("on-b"))
                  .ok());
  auto both = client::CtxselClient::Connect(
      absl::StrCat((*a)->address(), ",", (*b)->address()));
  std::vector<std::string> seen;
  const absl::Status status = both->WatchInventory(
      /*initial=*/true,
      [&](const v1::InventoryEvent& event) {
        seen.push_back(absl::StrCat(v1::InventoryEvent::Kind_Name(event.kind()),
                                    " ", event.node().id(), " (",
                                    event.reason(), ")"));
        if (event.kind() != v1::InventoryEvent::KIND_ADDED) {
          // The end: A's nodes removed.
        } else if (event.node().id() == "on-a") {
          // pick_first chose A, the list's first.
          EXPECT_TRUE(to_a->ReportNode(CpuNode("later-a")).ok());
        } else if (event.node().id() == "later-a") {
          (*a)->process().Signal(SIGKILL);
          (*a)->process().Wait(std::chrono::seconds(10));
        }
        return event.kind() != v1::InventoryEvent::KIND_REMOVED ||
               event.node().id() != "on-a";
      },
      std::chrono::seconds(30));
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_THAT(
      seen,
      ElementsAre("KIND_ADDED on-a (initial)", "KIND_ADDED later-a (reported)",
                  "KIND_ADDED on-b (resync)", "KIND_REMOVED later-a (resync)",
                  "KIND_REMOVED on-a (resync)"));
}

}  // namespace
}  // namespace ctxsel::testing
