// A simulated fleet: 50 real ctxsel-agent processes with devices files
// against one real ctxsel-server on loopback. Checks that the inventory
// follows the fleet through a server crash and restart, an agent crash
// (expiry after the TTL), a clean agent shutdown (immediate deregistration)
// and a device-set change.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel {
namespace {

using testing::MakeTempDir;
using testing::RunfilePath;
using testing::ServerProcess;
using testing::Subprocess;

constexpr int kNodes = 50;
constexpr absl::Duration kHeartbeat = absl::Milliseconds(200);
constexpr absl::Duration kTtl = absl::Seconds(3);

// Node id -> number of devices, as the server's inventory lists them.
using Fleet = std::map<std::string, int>;

Fleet ListFleet(const std::string& address) {
  auto stub = v1::Inventory::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(2));
  v1::ListNodesRequest request;
  request.set_page_size(1000);
  v1::ListNodesResponse response;
  Fleet fleet;
  if (!stub->ListNodes(&context, request, &response).ok()) return fleet;
  for (const v1::NodeSummary& n : response.nodes()) {
    fleet[n.node().id()] = n.device_count();
  }
  return fleet;
}

// Polls until `done` holds or `timeout` passes; returns the time it took,
// or nullopt on timeout.
std::optional<absl::Duration> WaitFor(const std::function<bool()>& done,
                                      absl::Duration timeout) {
  absl::Time start = absl::Now();
  while (absl::Now() - start < timeout) {
    if (done()) return absl::Now() - start;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return std::nullopt;
}

std::string NodeId(int i) { return absl::StrFormat("node%02d", i); }

// Node i: a host CPU and 1 to 3 GPUs of different vendors.
std::string DevicesJson(int gpus, int i) {
  const char* archs[] = {"nvidia_gpu_sm_90", "amd_gpu_gfx90a", "intel_gpu_pvc"};
  std::string devices = R"({"sycl_architecture": "x86_64",
                            "traits": {"isa": ["avx2"], "vendor": ["amd"]}})";
  for (int g = 0; g < gpus; ++g) {
    absl::StrAppend(
        &devices, ",\n",
        absl::StrFormat(
            R"({"sycl_architecture": "%s", "memory_bytes": %d,
            "compute_units": 100, "utilisation": 0.%d})",
            archs[(i + g) % 3], int64_t{g + 1} << 30, (i + g) % 10));
  }
  return absl::StrCat(R"({"devices": [)", devices, "]}");
}

class AgentFleetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fleet");
    StartServer(0);
    for (int i = 0; i < kNodes; ++i) {
      expected_[NodeId(i)] = 1 + Gpus(i);
      WriteDevices(i, Gpus(i));
      agents_.push_back(StartAgent(i));
    }
  }

  void TearDown() override {
    for (auto& agent : agents_) {
      if (agent && agent->Running()) agent->Signal(SIGTERM);
    }
    for (auto& agent : agents_) {
      if (agent) agent->Wait(std::chrono::seconds(5));
    }
  }

  static int Gpus(int i) { return 1 + i % 3; }

  void StartServer(int port) {
    auto server = ServerProcess::Start(
        {absl::StrCat("--heartbeat_interval=",
                      absl::FormatDuration(kHeartbeat)),
         absl::StrCat("--node_ttl=", absl::FormatDuration(kTtl))},
        port);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  void WriteDevices(int i, int gpus) {
    std::string path = absl::StrCat(dir_, "/", NodeId(i), ".json");
    std::string tmp = path + ".tmp";
    std::ofstream(tmp) << DevicesJson(gpus, i);
    std::rename(tmp.c_str(), path.c_str());  // agents never see half a file
  }

  std::unique_ptr<Subprocess> StartAgent(int i) {
    std::string log = absl::StrCat(dir_, "/", NodeId(i), ".log");
    auto agent = Subprocess::Start(
        {RunfilePath("agent/ctxsel-agent"), "--insecure",
         "--server=" + server_->address(), "--node_id=" + NodeId(i),
         "--backends=",
         absl::StrCat("--devices_file=", dir_, "/", NodeId(i), ".json"),
         absl::StrCat("--heartbeat=", absl::FormatDuration(kHeartbeat))},
        "", log);
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  bool FleetIs(const Fleet& want) {
    return ListFleet(server_->address()) == want;
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
  Fleet expected_;
};

TEST_F(AgentFleetTest, InventoryFollowsTheFleet) {
  auto up = WaitFor([&] { return FleetIs(expected_); }, absl::Seconds(20));
  ASSERT_TRUE(up) << "fleet never complete; have "
                  << ListFleet(server_->address()).size();
  std::printf("all %d nodes reported in %s\n", kNodes,
              absl::FormatDuration(*up).c_str());

  // The server crashes and comes back on the same port: every node is back
  // within two heartbeats of the new server answering.
  int port = server_->port();
  server_->process().Signal(SIGKILL);
  server_->process().Wait(std::chrono::seconds(5));
  absl::SleepFor(2 * kHeartbeat);  // agents notice and start retrying
  StartServer(port);
  auto back = WaitFor([&] { return FleetIs(expected_); }, absl::Seconds(10));
  ASSERT_TRUE(back) << "after restart: " << ListFleet(server_->address()).size()
                    << " nodes";
  std::printf("all %d nodes back %s after the restarted server was SERVING\n",
              kNodes, absl::FormatDuration(*back).c_str());
  EXPECT_LE(*back, 2 * kHeartbeat);

  // A changed device set is reported as a change.
  WriteDevices(7, Gpus(7) + 2);
  expected_[NodeId(7)] += 2;
  auto changed = WaitFor([&] { return FleetIs(expected_); }, absl::Seconds(5));
  ASSERT_TRUE(changed);
  EXPECT_LE(*changed, 2 * kHeartbeat + absl::Milliseconds(100));

  // SIGTERM: the agent deregisters at once, long before the TTL.
  absl::Time term_sent = absl::Now();
  agents_[3]->Signal(SIGTERM);
  expected_.erase(NodeId(3));
  auto gone = WaitFor([&] { return FleetIs(expected_); }, kTtl * 2);
  ASSERT_TRUE(gone);
  EXPECT_LT(absl::Now() - term_sent, kTtl / 2);
  EXPECT_EQ(agents_[3]->Wait(std::chrono::seconds(5)), 0);

  // kill -9: no deregistration, the node expires after the TTL.
  absl::Time killed = absl::Now();
  agents_[5]->Signal(SIGKILL);
  agents_[5]->Wait(std::chrono::seconds(5));
  expected_.erase(NodeId(5));
  auto expired = WaitFor([&] { return FleetIs(expected_); }, kTtl * 3);
  ASSERT_TRUE(expired);
  absl::Duration expired_after = absl::Now() - killed;
  std::printf("killed agent expired after %s (TTL %s)\n",
              absl::FormatDuration(expired_after).c_str(),
              absl::FormatDuration(kTtl).c_str());
  EXPECT_GE(expired_after, kTtl - kHeartbeat);

  // Every other agent leaves cleanly on SIGTERM.
  for (auto& agent : agents_) {
    if (agent->Running()) agent->Signal(SIGTERM);
  }
  for (auto& agent : agents_) {
    if (agent.get() == agents_[5].get()) continue;
    EXPECT_EQ(agent->Wait(std::chrono::seconds(10)), 0);
  }
  EXPECT_TRUE(WaitFor([&] { return FleetIs({}); }, kTtl / 2));
}

}  // namespace
}  // namespace ctxsel
