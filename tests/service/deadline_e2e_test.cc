// Deadlines through the real server: a filtered ListDevices over a 5,000
// device fleet with a deadline too short for it ends DEADLINE_EXCEEDED (the
// handler checks the call between devices, server/call_interrupt.h), and
// the server answers the same listing in full when given time. The code is
// asserted, never a duration.
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

  for (const auto deadline :
       {std::chrono::microseconds(1), std::chrono::microseconds(500)}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    v1::ListDevicesResponse response;
    grpc::Status status = inventory->ListDevices(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
        << deadline.count() << "us: " << status.error_message();
    EXPECT_EQ(response.devices_size(), 0);
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
