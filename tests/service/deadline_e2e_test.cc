// Deadlines through the real server: a filtered ListDevices over a 5,000
// device fleet under a deadline already spent ends DEADLINE_EXCEEDED with no
// device; under a short one it ends either DEADLINE_EXCEEDED with no device
// or complete, never with a partial page or another code; and the server
// answers the same listing in full when given time. Whether 500 µs is enough
// depends on the machine (a page of 5,000 non-matching devices takes about
// 150 µs on an idle host since listings match per class), so no outcome is
// assumed of it: that the handler stops between devices
// (server/rpc/call_interrupt.h) is counted, not timed, by
// InventoryTest.ListDevicesStopsWhenCancelled.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/ctxsel_client.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

constexpr int kNodes = 50;
constexpr int kGpusPerNode = 99;  // and a host CPU: 100 devices a node

TEST(DeadlineE2E, FilteredListDevicesStopsAtTheDeadline) {
  auto server = ServerProcess::Start({"--node_ttl=10m"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = client::CtxselClient::Connect((*server)->address(),
                                              std::chrono::seconds(30));
  for (int n = 0; n < kNodes; ++n) {
    ASSERT_TRUE(
        client
            ->ReportNode(GpuNode(absl::StrCat("n", n), "nvidia", "nvptx",
                                 "nvidia_gpu_sm_90", kGpusPerNode))
            .ok())
        << n;
  }
  auto inventory = v1::Inventory::NewStub(grpc::CreateChannel(
      (*server)->address(), grpc::InsecureChannelCredentials()));
  v1::ListDevicesRequest request;
  // Matches no device: the listing examines all 5,000 for one page.
  request.set_device_filter("device={arch(amdgcn)}");

  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() -
                         std::chrono::milliseconds(1));
    v1::ListDevicesResponse response;
    grpc::Status status = inventory->ListDevices(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << status.error_message();
    EXPECT_EQ(response.devices_size(), 0);
  }
  for (const auto deadline :
       {std::chrono::microseconds(50), std::chrono::microseconds(500)}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    v1::ListDevicesResponse response;
    grpc::Status status = inventory->ListDevices(&context, request, &response);
    EXPECT_TRUE(status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                status.ok())
        << deadline.count() << "us: " << status.error_code() << " "
        << status.error_message();
    // Whole or nothing: this filter matches no device and the fleet fits
    // one page, so a complete answer has no device and no next page.
    EXPECT_EQ(response.devices_size(), 0) << deadline.count() << "us";
    EXPECT_TRUE(response.next_page_token().empty()) << deadline.count() << "us";
  }

  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  v1::ListDevicesResponse response;
  grpc::Status status = inventory->ListDevices(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.devices_size(), 0);
  EXPECT_TRUE(response.next_page_token().empty());
  auto all = client->ListDevices("device={kind(gpu)}", "");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), static_cast<size_t>(kNodes * kGpusPerNode));
}

}  // namespace
}  // namespace ctxsel::testing
