// Listings longer than one page through the real server and ctxsel-cli:
// `variants ls`, `nodes ls` and `devices ls` follow every page
// (CtxselClient::AllPages) and return each item exactly once.
#include <map>
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

// More of each than the server's default page (500), for several pages.
constexpr int kNodes = 1100;             // 2 devices each: 2,200 devices.
constexpr int kVariantsPerKernel = 600;  // 2 kernels: 1,200 variants.

// How often each key occurs.
using Counts = std::map<std::string, int>;

class PagingE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    // No heartbeats are sent: a long TTL keeps the nodes alive.
    auto server = ServerProcess::Start({"--node_ttl=10m"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    client_ = client::CtxselClient::Connect(server_->address());
  }

  // The --json output of a ctxsel-cli listing.
  json CliJson(std::vector<std::string> args) {
    args.insert(args.begin(), {CliPath(), "--insecure",
                               "--server=" + server_->address(), "--json"});
    CommandResult result = RunCommand(args);
    EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
    return json::parse(result.stdout_text, nullptr, /*allow_exceptions=*/false);
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::CtxselClient> client_;
};

// Each key once.
Counts Once(const std::vector<std::string>& keys) {
  Counts out;
  for (const std::string& key : keys) out[key] = 1;
  return out;
}

TEST_F(PagingE2E, VariantsLsFollowsEveryPage) {
  std::vector<std::string> all;
  std::vector<std::string> gemm;
  for (const std::string kernel : {"gemm", "saxpy"}) {
    v1::RegisterVariantsRequest request;
    request.set_kernel(kernel);
    for (int i = 0; i < kVariantsPerKernel; ++i) {
      v1::Variant* v = request.add_variants();
      v->set_name(absl::StrCat(kernel, "_v", i));
      v->set_selector(absl::StrCat("user={condition(N > ", i, ")}"));
      all.push_back(absl::StrCat(kernel, "/", v->name()));
      if (kernel == std::string("gemm")) gemm.push_back(all.back());
    }
    auto registered = client_->RegisterVariants(request);
    ASSERT_TRUE(registered.ok()) << registered.status();
  }
  // The server really pages this listing: its first page is not all.
  {
    grpc::ClientContext context;
    v1::ListVariantsResponse first;
    ASSERT_TRUE(v1::Variants::NewStub(client_->channel())
                    ->ListVariants(&context, v1::ListVariantsRequest(), &first)
                    .ok());
    EXPECT_LT(first.variants_size(), 2 * kVariantsPerKernel);
    EXPECT_FALSE(first.next_page_token().empty());
  }
  auto keys = [](const json& listing) {
    Counts out;
    for (const json& v : listing["variants"]) {
      ++out[absl::StrCat(v["kernel"].get<std::string>(), "/",
                         v["name"].get<std::string>())];
    }
    return out;
  };
  EXPECT_EQ(keys(CliJson({"variants", "ls"})), Once(all));
  EXPECT_EQ(keys(CliJson({"variants", "ls", "gemm"})), Once(gemm));
}

TEST_F(PagingE2E, NodesAndDevicesLsFollowEveryPage) {
  std::vector<std::string> nodes;
  std::vector<std::string> devices;
  std::vector<std::string> gpus;
  for (int i = 0; i < kNodes; ++i) {
    const std::string id = absl::StrCat("node", i);
    auto reported = client_->ReportNode(
        GpuNode(id, "nvidia", "nvptx", "nvidia_gpu_sm_90", /*gpus=*/1));
    ASSERT_TRUE(reported.ok()) << id << ": " << reported.status();
    nodes.push_back(id);
    devices.push_back(id + "#-1");
    devices.push_back(id + "#0");
    gpus.push_back(id + "#0");
  }
  {
    grpc::ClientContext context;
    v1::ListNodesResponse first;
    ASSERT_TRUE(v1::Inventory::NewStub(client_->channel())
                    ->ListNodes(&context, v1::ListNodesRequest(), &first)
                    .ok());
    EXPECT_LT(first.nodes_size(), kNodes);
    EXPECT_FALSE(first.next_page_token().empty());
  }
  json node_list = CliJson({"nodes", "ls"});
  Counts listed_nodes;
  for (const json& n : node_list["nodes"]) {
    ++listed_nodes[n["node"]["id"].get<std::string>()];
  }
  EXPECT_EQ(listed_nodes, Once(nodes));

  // A device is its node and index (a host CPU's index is -1).
  auto keys = [](const json& listing) {
    Counts out;
    for (const json& d : listing["devices"]) {
      ++out[absl::StrCat(d["node"].get<std::string>(), "#",
                         d.value("index", 0))];
    }
    return out;
  };
  EXPECT_EQ(keys(CliJson({"devices", "ls"})), Once(devices));
  // The selector filter applies across pages too.
  EXPECT_EQ(
      keys(CliJson({"devices", "ls", "--device_filter=device={kind(gpu)}"})),
      Once(gpus));
}

}  // namespace
}  // namespace ctxsel::testing
