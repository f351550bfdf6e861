// Replies near the 4 MiB message limit through the real server: a
// registration batch just under the limit gets a small reply (it used to
// echo the batch, a reply over the limit for a batch already stored), and
// listings whose default page (500 items) would pass the limit end their
// pages by bytes, so `variants ls` and `devices ls` still list everything.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using nlohmann::json;

constexpr size_t kMessageLimit = 4 << 20;  // the server's default

// A valid selector padded with blanks to `bytes`.
std::string PaddedSelector(size_t bytes) {
  std::string selector = "device={kind(gpu)}";
  selector.resize(bytes, ' ');
  return selector;
}

// `count` variants named <prefix>0, <prefix>1, ... of `kernel`, each with a
// selector of `selector_bytes`.
v1::RegisterVariantsRequest Batch(const std::string& kernel,
                                  const std::string& prefix, int count,
                                  size_t selector_bytes) {
  v1::RegisterVariantsRequest request;
  request.set_kernel(kernel);
  for (int i = 0; i < count; ++i) {
    v1::Variant* v = request.add_variants();
    v->set_name(absl::StrCat(prefix, i));
    v->set_selector(PaddedSelector(selector_bytes));
  }
  return request;
}

class LargeRepliesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start({"--node_ttl=10m"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    client_ = client::CtxselClient::Connect(server_->address(),
                                            std::chrono::seconds(30));
  }

  CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(),
                {CliPath(), "--insecure", "--server=" + server_->address(),
                 "--timeout=30s"});
    return RunCommand(args);
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::CtxselClient> client_;
};

TEST_F(LargeRepliesE2E, BatchJustUnderTheLimitGetsASmallReply) {
  // 1,000 variants (the default batch limit) filling the request to 1 KiB
  // under the limit; stored, each carries its kernel, order and revision
  // too, more than 1 KiB in all.
  v1::RegisterVariantsRequest request = Batch("full", "v", 1000, 1);
  const size_t per_variant =
      (kMessageLimit - 1024 - request.ByteSizeLong()) / 1000;
  request = Batch("full", "v", 1000, per_variant);
  ASSERT_LT(request.ByteSizeLong(), kMessageLimit);
  ASSERT_GT(request.ByteSizeLong(), kMessageLimit - 4096);

  absl::StatusOr<v1::RegisterVariantsResponse> reply =
      client_->RegisterVariants(request);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->registered_count(), 1000);
  EXPECT_LT(reply->ByteSizeLong(), 64u);
  absl::StatusOr<std::vector<v1::Variant>> stored =
      client_->ListVariants("full");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->size(), 1000u);
}

TEST_F(LargeRepliesE2E, VariantsLsListsPagesOverTheLimit) {
  // 900 variants of 9 KB: a default page of 500 would be 4.5 MB.
  for (const char* prefix : {"a", "b"}) {
    absl::StatusOr<v1::RegisterVariantsResponse> reply =
        client_->RegisterVariants(Batch("wide", prefix, 450, 9000));
    ASSERT_TRUE(reply.ok()) << reply.status();
  }
  CommandResult ls = Cli({"--json", "variants", "ls", "wide"});
  ASSERT_EQ(ls.exit_code, 0) << ls.stderr_text;
  json listing = json::parse(ls.stdout_text, nullptr, false);
  ASSERT_FALSE(listing.is_discarded());
  std::vector<std::string> names;
  for (const json& v : listing["variants"]) {
    names.push_back(v["name"].get<std::string>());
  }
  ASSERT_EQ(names.size(), 900u);
  EXPECT_EQ(names.front(), "a0");
  EXPECT_EQ(names.back(), "b449");
}

TEST_F(LargeRepliesE2E, DevicesLsListsPagesOverTheLimit) {
  // 600 nodes, each with a CPU carrying 9 KB of extension traits (200 names,
  // within --max_traits_per_device): a default page of 500 devices would be
  // over 4 MB.
  for (int i = 0; i < 600; ++i) {
    v1::Node node = CpuNode(absl::StrCat("n", 1000 + i));
    v1::DeviceTraits* traits = node.mutable_devices(0)->mutable_traits();
    for (int e = 0; e < 200; ++e) {
      traits->add_extension(
          absl::StrCat("extension_with_a_rather_longer_name_", e, "_padding"));
    }
    ASSERT_TRUE(client_->ReportNode(node).ok()) << i;
  }
  absl::StatusOr<std::vector<v1::Device>> devices =
      client_->ListDevices("", "");
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ(devices->size(), 600u);
  absl::StatusOr<std::vector<v1::NodeSummary>> nodes =
      client_->ListNodes(/*include_devices=*/true);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->size(), 600u);
}

}  // namespace
}  // namespace ctxsel::testing
