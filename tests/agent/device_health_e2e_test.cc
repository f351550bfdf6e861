// Device health and partitions end to end (issue 24, items 3 and 5): a real
// ctxsel-server, real ctxsel-agents reporting a devices file or the fake
// NVML library, and the real CLI. A device marked unhealthy (the devices
// file edited, or an Xid from the fake NVML) is not chosen within one
// heartbeat and is chosen again once it recovers; a degraded device serves
// only when no healthy one can; launchers racing on a MIG GPU and its
// instances never hold both; an AMD GPU in a compute partition mode (a
// sysfs fixture) is the board and its partitions, claimed the same way.
#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

constexpr absl::Duration kHeartbeat = absl::Milliseconds(200);
// One heartbeat, plus the time a report and a CLI call take on a loaded
// 2-core machine.
const absl::Duration kOneBeat = kHeartbeat + absl::Milliseconds(800);

void WriteFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp) << text;
  std::rename(tmp.c_str(), path.c_str());  // agents never see half a file
}

class DeviceHealthE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("health");
    auto server =
        ServerProcess::Start({"--data_dir=" + dir_ + "/store",
                              absl::StrCat("--heartbeat_interval=",
                                           absl::FormatDuration(kHeartbeat))});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    CommandResult reg =
        Cli({"variants", "register", "saxpy",
             "saxpy_nv=construct={target}, device={arch(nvptx)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }
  void TearDown() override {
    if (agent_ != nullptr && agent_->Running()) agent_->Signal(SIGTERM);
    if (agent_ != nullptr) agent_->Wait(std::chrono::seconds(5));
    unsetenv("FAKE_NVML_STATE");
    unsetenv("FAKE_NVML_GPUS");
  }

  void StartAgent(std::vector<std::string> flags) {
    std::vector<std::string> argv = {
        RunfilePath("agent/ctxsel-agent"), "--insecure",
        "--server=" + server_->address(), "--node_id=node",
        absl::StrCat("--heartbeat=", absl::FormatDuration(kHeartbeat))};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto agent = Subprocess::Start(argv, "", dir_ + "/agent.log");
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
  }

  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }

  // The device a plain (least loaded) Select picks; "" when none fits.
  std::string Picked() {
    CommandResult s = Cli({"select", "--kernel=saxpy", "--construct=target",
                           "--require=gpu", "-o", "json"});
    if (s.exit_code != 0) return "";
    nlohmann::json answer = nlohmann::json::parse(s.stdout_text, nullptr,
                                                  /*allow_exceptions=*/false);
    if (!answer.is_object() || !answer.contains("placement")) return "";
    return answer["placement"]["device"].value("id", "");
  }

  // Polls Picked() until it is `want`; how long that took, or nullopt.
  std::optional<absl::Duration> PickedBecomes(const std::string& want,
                                              absl::Duration timeout) {
    const absl::Time start = absl::Now();
    while (absl::Now() - start < timeout) {
      if (Picked() == want) return absl::Now() - start;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return std::nullopt;
  }

  // `devices ls -o json`'s device `id`.
  nlohmann::json Device(const std::string& id) {
    CommandResult ls = Cli({"devices", "ls", "-o", "json"});
    nlohmann::json answer = nlohmann::json::parse(ls.stdout_text, nullptr,
                                                  /*allow_exceptions=*/false);
    if (!answer.is_object()) return nullptr;
    for (const nlohmann::json& d : answer.value("devices", nlohmann::json())) {
      if (d.value("id", "") == id) return d;
    }
    return nullptr;
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Subprocess> agent_;
};

// Two H100s: gpu0 idle, gpu1 half busy, each with `health0` / `health1`.
std::string TwoGpus(const std::string& health0, const std::string& health1) {
  auto gpu = [](double load, const std::string& health) {
    std::string d = absl::StrCat(
        R"({"sycl_architecture": "nvidia_gpu_sm_90", "utilisation": )", load);
    if (!health.empty()) {
      absl::StrAppend(&d, R"(, "health": ")", health,
                      R"(", "health_reason": "test says )", health, R"(")");
    }
    return d + "}";
  };
  return absl::StrCat(R"({"devices": [)", gpu(0.0, health0), ", ",
                      gpu(0.5, health1), "]}");
}

TEST_F(DeviceHealthE2E, DevicesFileHealthSteersPlacementWithinOneBeat) {
  const std::string file = dir_ + "/node.json";
  WriteFile(file, TwoGpus("", ""));
  StartAgent({"--backends=", "--devices_file=" + file});
  ASSERT_TRUE(PickedBecomes("node/gpu0", absl::Seconds(20)));

  // Unhealthy: never picked, and the listing says why.
  WriteFile(file, TwoGpus("unhealthy", ""));
  auto moved = PickedBecomes("node/gpu1", absl::Seconds(10));
  ASSERT_TRUE(moved) << "gpu0 still picked after it turned unhealthy";
  std::printf("unhealthy gpu0 left out after %s\n",
              absl::FormatDuration(*moved).c_str());
  EXPECT_LE(*moved, kOneBeat);
  nlohmann::json gpu0 = Device("node/gpu0");
  EXPECT_EQ(gpu0.value("health", ""), "DEVICE_HEALTH_UNHEALTHY") << gpu0;
  EXPECT_EQ(gpu0.value("health_reason", ""), "test says unhealthy") << gpu0;
  CommandResult explain =
      Cli({"explain", "--kernel=saxpy", "--construct=target", "--require=gpu"});
  EXPECT_TRUE(absl::StrContains(explain.stdout_text, "1 unhealthy left out"))
      << explain.stdout_text << explain.stderr_text;

  // Degraded serves only when no healthy device can: the busier healthy
  // gpu1 wins over the idle degraded gpu0.
  WriteFile(file, TwoGpus("degraded", ""));
  absl::SleepFor(2 * kOneBeat);
  EXPECT_EQ(Picked(), "node/gpu1");
  WriteFile(file, TwoGpus("degraded", "unhealthy"));
  EXPECT_TRUE(PickedBecomes("node/gpu0", absl::Seconds(5)))
      << "the degraded device did not serve when it was the only one";

  // Both unhealthy: nothing fits.
  WriteFile(file, TwoGpus("unhealthy", "unhealthy"));
  EXPECT_TRUE(PickedBecomes("", absl::Seconds(5)));

  // Recovered, without a restart of anything.
  WriteFile(file, TwoGpus("", ""));
  auto back = PickedBecomes("node/gpu0", absl::Seconds(10));
  ASSERT_TRUE(back) << "gpu0 not picked again after it recovered";
  EXPECT_LE(*back, kOneBeat);
  EXPECT_EQ(Device("node/gpu0").value("health_reason", "x"), "");
}

// The fake NVML's H100 (75% busy) and A100 (idle): an Xid on the A100
// makes it unhealthy for --xid_hold, then it serves again.
TEST_F(DeviceHealthE2E, XidFromNvmlMakesAGpuUnhealthyUntilTheHoldEnds) {
  const std::string state = dir_ + "/nvml_state";
  WriteFile(state, "");
  setenv("FAKE_NVML_STATE", state.c_str(), 1);
  setenv("FAKE_NVML_GPUS", "2", 1);
  StartAgent(
      {"--backends=nvml", "--xid_hold=3s",
       "--nvml_library=" + RunfilePath("agent/testdata/libfake_nvml.so")});
  ASSERT_TRUE(PickedBecomes("node/gpu1", absl::Seconds(20)));

  WriteFile(state, "xid 1 79\n");  // fallen off the bus
  const absl::Time xid = absl::Now();
  auto moved = PickedBecomes("node/gpu0", absl::Seconds(10));
  ASSERT_TRUE(moved) << "the A100 still picked after its Xid";
  EXPECT_LE(*moved, kOneBeat);
  nlohmann::json a100 = Device("node/gpu1");
  EXPECT_EQ(a100.value("health", ""), "DEVICE_HEALTH_UNHEALTHY") << a100;
  EXPECT_TRUE(absl::StartsWith(a100.value("health_reason", ""), "Xid 79 at"))
      << a100;

  // An application's Xid (31, a page fault) is not the GPU's fault.
  WriteFile(state, "xid 1 79\nxid 0 31\n");
  auto back = PickedBecomes("node/gpu1", absl::Seconds(15));
  ASSERT_TRUE(back) << "the A100 never recovered";
  EXPECT_GE(absl::Now() - xid, absl::Seconds(3) - absl::Milliseconds(100));
  EXPECT_EQ(Device("node/gpu0").value("health", ""), "DEVICE_HEALTH_HEALTHY");

  // Retired pages pending: degraded, so the busier H100 wins.
  WriteFile(state, "xid 1 79\nxid 0 31\nretired_pending 1\n");
  ASSERT_TRUE(PickedBecomes("node/gpu0", absl::Seconds(10)));
  EXPECT_EQ(Device("node/gpu1").value("health", ""), "DEVICE_HEALTH_DEGRADED");
}

// The fake H100 in MIG mode with two instances: 32 launchers race to claim
// the GPU (half of them name it, so the parent is tried) and its instances;
// nobody ever holds the GPU and an instance at once.
TEST_F(DeviceHealthE2E, ClaimsOnAMigGpuAndItsInstancesExcludeEachOther) {
  const std::string state = dir_ + "/nvml_state";
  WriteFile(state, "mig 0 2\n");
  setenv("FAKE_NVML_STATE", state.c_str(), 1);
  setenv("FAKE_NVML_GPUS", "1", 1);
  StartAgent(
      {"--backends=nvml",
       "--nvml_library=" + RunfilePath("agent/testdata/libfake_nvml.so")});
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline && Device("node/gpu2").is_null()) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  nlohmann::json mig = Device("node/gpu2");
  ASSERT_FALSE(mig.is_null()) << "the MIG instances never reported";
  EXPECT_EQ(mig.value("parent", ""), "node/gpu0") << mig;
  EXPECT_TRUE(absl::StartsWith(mig.value("uuid", ""), "MIG-")) << mig;
  EXPECT_EQ(mig.value("memory_bytes", uint64_t{0}), uint64_t{10} << 30) << mig;
  EXPECT_EQ(mig.value("compute_units", 0), 16) << mig;

  const std::set<std::string> children = {"node/gpu1", "node/gpu2"};
  for (int round = 0; round < 4; ++round) {
    std::vector<std::vector<std::string>> launchers;
    for (int i = 0; i < 32; ++i) {
      std::vector<std::string> argv = {
          CliPath(),
          "--insecure",
          "--server=" + server_->address(),
          "select",
          "--kernel=saxpy",
          "--construct=target",
          "--require=gpu",
          "--claim=1m",
          absl::StrCat("--holder=r", round, "l", i),
          "-o",
          "json"};
      // Rounds 0 and 2: the even launchers want the whole GPU only.
      if (round % 2 == 0 && i % 2 == 0) argv.push_back("--devices=GPU-0000");
      launchers.push_back(argv);
    }
    std::vector<CommandResult> results =
        RunCommandsInParallel(launchers, std::chrono::seconds(60));
    std::set<std::string> held;
    for (const CommandResult& r : results) {
      if (r.exit_code != 0) continue;
      nlohmann::json answer = nlohmann::json::parse(r.stdout_text, nullptr,
                                                    /*allow_exceptions=*/false);
      ASSERT_TRUE(answer.is_object()) << r.stdout_text;
      held.insert(answer["placement"]["device"].value("id", ""));
    }
    std::string list;
    for (const std::string& d : held) absl::StrAppend(&list, d, " ");
    std::printf("round %d: held %s\n", round, list.c_str());
    ASSERT_FALSE(held.empty());
    if (held.count("node/gpu0") != 0) {
      EXPECT_EQ(held.size(), 1u)
          << "the GPU and an instance both held: " << list;
    } else {
      EXPECT_EQ(held, children);
    }
    CommandResult ls = Cli({"claims", "ls", "-o", "json"});
    ASSERT_EQ(ls.exit_code, 0) << ls.stderr_text;
    nlohmann::json claims = nlohmann::json::parse(ls.stdout_text, nullptr,
                                                  /*allow_exceptions=*/false);
    ASSERT_TRUE(claims.is_object()) << ls.stdout_text;
    std::set<std::string> claimed;
    for (const nlohmann::json& c : claims.value("claims", nlohmann::json())) {
      claimed.insert(c.value("device", ""));
      CommandResult release = Cli({"claims", "release", c.value("id", "")});
      ASSERT_EQ(release.exit_code, 0) << release.stderr_text;
    }
    EXPECT_EQ(claimed, held);
  }
}

// An MI300X in DPX mode beside an MI250X, from a sysfs fixture through
// the agent's KFD backend: the board (gpu0) and its two partitions (gpu1,
// gpu2) with the board as parent, each partition pinned by ROCm's number;
// a claim on a partition leaves the board unclaimable and the reverse.
TEST_F(DeviceHealthE2E, AmdComputePartitionsAreClaimedLikeMigInstances) {
  StartAgent({"--backends=kfd",
              "--sysfs_root=" + RunfilePath("agent/testdata/sysfs_amd_dpx")});
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline && Device("node/gpu3").is_null()) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_FALSE(Device("node/gpu3").is_null()) << "the devices never reported";
  EXPECT_EQ(Device("node/gpu0").value("parent", ""), "");
  EXPECT_EQ(Device("node/gpu1").value("parent", ""), "node/gpu0");
  EXPECT_EQ(Device("node/gpu2").value("parent", ""), "node/gpu0");
  EXPECT_EQ(Device("node/gpu3").value("parent", ""), "");  // the MI250X
  EXPECT_EQ(Device("node/gpu0").value("memory_bytes", uint64_t{0}),
            uint64_t{192} << 30);
  auto claim = [&](const std::string& device) {
    return Cli({"select", "--kernel=saxpy", "--construct=target",
                "--devices=" + device, "--claim=1m", "--holder=" + device,
                "--format=env"});
  };
  CommandResult part = claim("node/gpu2");
  ASSERT_EQ(part.exit_code, 0) << part.stderr_text;
  EXPECT_TRUE(
      absl::StrContains(part.stdout_text, "export ROCR_VISIBLE_DEVICES='1'"))
      << part.stdout_text;
  EXPECT_EQ(claim("node/gpu0").exit_code, 4);  // its partition is held
  ASSERT_EQ(Cli({"claims", "release", "--holder=node/gpu2"}).exit_code, 0);
  CommandResult board = claim("node/gpu0");
  ASSERT_EQ(board.exit_code, 0) << board.stderr_text;
  EXPECT_EQ(claim("node/gpu1").exit_code, 4);  // the board is held
  EXPECT_EQ(claim("node/gpu3").exit_code, 0);  // another GPU
}

}  // namespace
}  // namespace ctxsel::testing
