// Claims end to end: the real ctxsel-server, real ctxsel-agent processes
// reporting simulated GPUs from devices files, and the real ctxsel-cli.
// Concurrent claiming launchers never share a device, claims survive a
// kill -9 of the server, and `run` holds a claim exactly while its command
// runs.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kNodes = 2;
constexpr int kGpusPerNode = 4;  // 8 fitting GPUs in all
constexpr char kHeartbeat[] = "--heartbeat=200ms";

// A host CPU and kGpusPerNode H100s.
constexpr char kDevicesJson[] = R"({"devices": [
  {"sycl_architecture": "x86_64", "traits": {"isa": ["avx2"]}},
  {"sycl_architecture": "nvidia_gpu_sm_90"},
  {"sycl_architecture": "nvidia_gpu_sm_90"},
  {"sycl_architecture": "nvidia_gpu_sm_90"},
  {"sycl_architecture": "nvidia_gpu_sm_90"}
]})";

class ClaimsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("claims");
    StartServer(0);
    for (int i = 0; i < kNodes; ++i) {
      const std::string node = absl::StrCat("node", i);
      const std::string file = absl::StrCat(dir_, "/", node, ".json");
      std::ofstream(file) << kDevicesJson;
      auto agent = Subprocess::Start(
          {RunfilePath("agent/ctxsel-agent"), "--insecure",
           "--server=" + server_->address(), "--node_id=" + node,
           "--backends=", "--devices_file=" + file, kHeartbeat},
          "", absl::StrCat(dir_, "/", node, ".log"));
      ASSERT_TRUE(agent.ok()) << agent.status();
      agents_.push_back(*std::move(agent));
    }
    WaitForGpus();
    CommandResult reg =
        Cli({"variants", "register", "saxpy", "saxpy_nv=device={arch(nvptx)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }

  void TearDown() override {
    for (auto& agent : agents_) agent->Signal(SIGTERM);
    for (auto& agent : agents_) agent->Wait(std::chrono::seconds(5));
  }

  void StartServer(int port) {
    auto server = ServerProcess::Start({"--data_dir=" + dir_ + "/data"}, port);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // Until the agents have reported all GPUs (after a start or a restart).
  void WaitForGpus() {
    auto client = client::CtxselClient::Connect(server_->address());
    for (int i = 0; i < 500; ++i) {
      auto gpus = client->ListDevices("device={kind(gpu)}", "");
      if (gpus.ok() && gpus->size() == kNodes * kGpusPerNode) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
    FAIL() << "the agents never reported " << kNodes * kGpusPerNode << " GPUs";
  }

  std::vector<std::string> CliArgs(std::vector<std::string> args) {
    args.insert(args.begin(),
                {CliPath(), "--insecure", "--server=" + server_->address()});
    return args;
  }
  CommandResult Cli(std::vector<std::string> args) {
    return RunCommand(CliArgs(std::move(args)));
  }
  std::vector<std::string> ClaimArgs() {
    return {"select", "--kernel=saxpy", "--device_filter=device={kind(gpu)}",
            "--claim=5m", "--format=env"};
  }
  int ClaimCount() {
    auto claims =
        client::CtxselClient::Connect(server_->address())->ListClaims("");
    return claims.ok() ? static_cast<int>(claims->size()) : -1;
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
};

TEST_F(ClaimsE2E, SixteenParallelLaunchersOnEightGpus) {
  constexpr int kLaunchers = 16;
  const std::vector<std::vector<std::string>> launchers(kLaunchers,
                                                        CliArgs(ClaimArgs()));
  std::multiset<std::string> devices;
  int exhausted = 0;
  for (const CommandResult& launched :
       RunCommandsInParallel(launchers, std::chrono::seconds(30))) {
    ASSERT_FALSE(launched.timed_out);
    if (launched.exit_code == 0) {
      devices.insert(EnvValue(launched.stdout_text, "CTXSEL_DEVICE"));
      EXPECT_THAT(EnvValue(launched.stdout_text, "CTXSEL_CLAIM"),
                  ::testing::StartsWith("c-"));
    } else {
      EXPECT_EQ(launched.exit_code, 4) << launched.stderr_text;
      EXPECT_THAT(launched.stderr_text,
                  HasSubstr("RESOURCE_EXHAUSTED: all 8 fitting devices "
                            "are claimed; the first claim expires at"));
      ++exhausted;
    }
  }
  EXPECT_EQ(devices.size(), 8u);
  EXPECT_EQ(std::set<std::string>(devices.begin(), devices.end()).size(), 8u)
      << "a device was handed out twice";
  EXPECT_EQ(exhausted, 8);
  EXPECT_EQ(ClaimCount(), 8);

  // --wait queues a launcher until a claim is released.
  auto waiting = Subprocess::Start(
      CliArgs({"select", "--kernel=saxpy", "--device_filter=device={kind(gpu)}",
               "--claim=5m", "--wait=30s", "--format=env"}),
      dir_ + "/waiting.out", dir_ + "/waiting.err");
  ASSERT_TRUE(waiting.ok()) << waiting.status();
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_TRUE((*waiting)->Running());
  auto claims =
      client::CtxselClient::Connect(server_->address())->ListClaims("node1");
  ASSERT_TRUE(claims.ok() && !claims->empty());
  CommandResult release = Cli({"claims", "release", claims->front().id()});
  ASSERT_EQ(release.exit_code, 0) << release.stderr_text;
  EXPECT_EQ((*waiting)->Wait(std::chrono::seconds(10)), 0)
      << ReadFileOrEmpty(dir_ + "/waiting.err");
  EXPECT_EQ(EnvValue(ReadFileOrEmpty(dir_ + "/waiting.out"), "CTXSEL_DEVICE"),
            claims->front().device());
}

TEST_F(ClaimsE2E, ClaimsSurviveKillNineOfTheServer) {
  std::set<std::string> claimed;
  std::string last_claim, last_device;
  for (int i = 0; i < kNodes * kGpusPerNode; ++i) {
    CommandResult r = Cli(ClaimArgs());
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    last_device = EnvValue(r.stdout_text, "CTXSEL_DEVICE");
    last_claim = EnvValue(r.stdout_text, "CTXSEL_CLAIM");
    claimed.insert(last_device);
  }
  ASSERT_EQ(claimed.size(), 8u);

  const int port = server_->port();
  server_->process().Signal(SIGKILL);
  server_->process().Wait(std::chrono::seconds(5));
  StartServer(port);
  WaitForGpus();

  CommandResult ls = Cli({"claims", "ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.stderr_text;
  EXPECT_THAT(ls.stdout_text, HasSubstr(last_claim));
  CommandResult renew = Cli({"claims", "renew", last_claim, "--claim=10m"});
  ASSERT_EQ(renew.exit_code, 0) << renew.stderr_text;
  EXPECT_THAT(renew.stdout_text, HasSubstr("(in 9m5"));
  EXPECT_EQ(ClaimCount(), 8);
  CommandResult blocked = Cli(ClaimArgs());
  EXPECT_EQ(blocked.exit_code, 4) << blocked.stdout_text;
  EXPECT_THAT(blocked.stderr_text,
              ::testing::HasSubstr("\n  reason CLAIMS_EXHAUSTED count=1 "
                                   "first_expiry="));

  // Released, the device is free again, and only that one.
  CommandResult release = Cli({"claims", "release", last_claim});
  ASSERT_EQ(release.exit_code, 0) << release.stderr_text;
  CommandResult again = Cli(ClaimArgs());
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_EQ(EnvValue(again.stdout_text, "CTXSEL_DEVICE"), last_device);
  CommandResult gone = Cli({"claims", "release", last_claim});
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_THAT(gone.stderr_text,
              ::testing::HasSubstr(
                  "\n  reason CLAIM_NOT_FOUND claim_id=" + last_claim + "\n"));
}

TEST_F(ClaimsE2E, RunHoldsTheClaimWhileTheCommandRuns) {
  CommandResult run =
      Cli({"run", "--kernel=saxpy", "--device_filter=device={kind(gpu)}",
           "--nodes=node1", "--", "/usr/bin/env"});
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_EQ(EnvValue(run.stdout_text, "CTXSEL_NODE"), "node1");
  EXPECT_EQ(EnvValue(run.stdout_text, "CTXSEL_DEVICE"), "node1/gpu0");
  EXPECT_EQ(EnvValue(run.stdout_text, "CTXSEL_VARIANT"), "saxpy_nv");
  EXPECT_EQ(EnvValue(run.stdout_text, "CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_THAT(EnvValue(run.stdout_text, "CTXSEL_CLAIM"),
              ::testing::StartsWith("c-"));
  EXPECT_EQ(ClaimCount(), 0) << "the claim outlived the command";

  // The command's status comes back; 127 when there is no such command.
  EXPECT_EQ(
      Cli({"run", "--kernel=saxpy", "--", "sh", "-c", "exit 7"}).exit_code, 7);
  EXPECT_EQ(Cli({"run", "--kernel=saxpy", "--", "/nonexistent"}).exit_code,
            127);
  EXPECT_EQ(ClaimCount(), 0);
}

TEST_F(ClaimsE2E, RunHereStaysOnThisNode) {
  // An agent with no --node_id goes by the host name, as `--here` does.
  const std::string file = dir_ + "/here.json";
  std::ofstream(file) << kDevicesJson;
  auto agent =
      Subprocess::Start({RunfilePath("agent/ctxsel-agent"), "--insecure",
                         "--server=" + server_->address(),
                         "--backends=", "--devices_file=" + file, kHeartbeat},
                        "", dir_ + "/here.log");
  ASSERT_TRUE(agent.ok()) << agent.status();
  agents_.push_back(*std::move(agent));
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  CommandResult run;
  for (int i = 0; i < 250; ++i) {
    run = Cli({"run", "--kernel=saxpy", "--here", "--", "/usr/bin/env"});
    if (run.exit_code == 0) break;
    absl::SleepFor(absl::Milliseconds(20));  // until the agent has reported
  }
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  EXPECT_EQ(EnvValue(run.stdout_text, "CTXSEL_NODE"), host);
  EXPECT_EQ(
      Cli({"run", "--here", "--nodes=node0", "--kernel=saxpy", "--", "true"})
          .exit_code,
      2);
}

TEST_F(ClaimsE2E, RunForwardsSigtermAndReleases) {
  auto run = Subprocess::Start(
      CliArgs({"run", "--kernel=saxpy", "--claim=3s", "--", "sleep", "60"}));
  ASSERT_TRUE(run.ok()) << run.status();
  for (int i = 0; i < 500 && ClaimCount() != 1; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(ClaimCount(), 1);
  // Renewed every second: still held well after its first 3s.
  absl::SleepFor(absl::Seconds(4));
  EXPECT_EQ(ClaimCount(), 1) << "the claim was not renewed";
  (*run)->Signal(SIGTERM);
  EXPECT_EQ((*run)->Wait(std::chrono::seconds(10)), 128 + SIGTERM);
  EXPECT_EQ(ClaimCount(), 0);
}

}  // namespace
}  // namespace ctxsel::testing
