// Operators' cordons end to end (issue 24, item 4): a real ctxsel-server on
// SQLite or on a 3-member etcd cluster, a real ctxsel-agent with a devices
// file, and the real CLI. A cordoned device is not chosen; the cordon
// survives kill -9 of the server (SQLite) and the loss of a replica and of
// the etcd leader (etcd); a drained device's claim renewal fails with
// DEVICE_DRAINED and `ctxsel-cli run`'s command receives SIGTERM.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/etcd_cluster.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

constexpr absl::Duration kHeartbeat = absl::Milliseconds(200);

// Two H100s: gpu0 idle, gpu1 half busy, so least_loaded picks gpu0.
std::string DevicesFile(const std::string& dir) {
  const std::string path = dir + "/node.json";
  std::ofstream(path) << R"({"devices": [
      {"sycl_architecture": "nvidia_gpu_sm_90", "utilisation": 0.0},
      {"sycl_architecture": "nvidia_gpu_sm_90", "utilisation": 0.5}]})";
  return path;
}

CommandResult CliOn(const std::string& address, std::vector<std::string> args) {
  return RunCli(address, std::move(args));
}

// The device a plain Select on `address` picks; "" when none fits.
std::string PickedOn(const std::string& address) {
  CommandResult s =
      CliOn(address, {"select", "--kernel=saxpy", "--construct=target",
                      "--require=gpu", "-o", "json"});
  if (s.exit_code != 0) return "";
  nlohmann::json answer = nlohmann::json::parse(s.stdout_text, nullptr,
                                                /*allow_exceptions=*/false);
  if (!answer.is_object() || !answer.contains("placement")) return "";
  return answer["placement"]["device"].value("id", "");
}

// Polls PickedOn(address) until it is `want`.
bool PickedBecomes(const std::string& address, const std::string& want,
                   absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (PickedOn(address) == want) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

std::unique_ptr<Subprocess> StartAgent(const std::string& address,
                                       const std::string& dir) {
  auto agent = Subprocess::Start(
      {RunfilePath("agent/ctxsel-agent"), "--insecure", "--server=" + address,
       "--node_id=node", "--backends=", "--devices_file=" + DevicesFile(dir),
       absl::StrCat("--heartbeat=", absl::FormatDuration(kHeartbeat))},
      "", dir + "/agent.log");
  EXPECT_TRUE(agent.ok()) << agent.status();
  return agent.ok() ? *std::move(agent) : nullptr;
}

void Register(const std::string& address) {
  CommandResult reg =
      CliOn(address, {"variants", "register", "saxpy",
                      "saxpy_nv=construct={target}, device={arch(nvptx)}"});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
}

TEST(CordonE2E, SurvivesKillDashNineOfTheServerAndDrainStopsRun) {
  const std::string dir = MakeTempDir("cordon");
  const std::vector<std::string> flags = {
      "--data_dir=" + dir + "/store",
      absl::StrCat("--heartbeat_interval=", absl::FormatDuration(kHeartbeat))};
  auto server = ServerProcess::Start(flags);
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = (*server)->address();
  Register(address);
  std::unique_ptr<Subprocess> agent = StartAgent(address, dir);
  ASSERT_TRUE(PickedBecomes(address, "node/gpu0", absl::Seconds(20)));

  // A watcher sees the cordon as a change of the node: the live node
  // first (--initial), then the cordon's event.
  auto watch =
      Subprocess::Start({CliPath(), "--insecure", "--server=" + address,
                         "watch", "--initial", "--max_events=2", "-o", "json"},
                        dir + "/watch.out", dir + "/watch.err");
  ASSERT_TRUE(watch.ok()) << watch.status();
  for (absl::Time end = absl::Now() + absl::Seconds(20);
       absl::Now() < end &&
       !absl::StrContains(ReadFileOrEmpty(dir + "/watch.out"), "KIND_ADDED");) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  CommandResult cordon = CliOn(
      address, {"devices", "cordon", "node/gpu0", "--reason=fan failing"});
  ASSERT_EQ(cordon.exit_code, 0) << cordon.stderr_text;
  EXPECT_EQ(PickedOn(address), "node/gpu1");
  EXPECT_EQ((*watch)->Wait(std::chrono::seconds(10)), 0);
  const std::string events = ReadFileOrEmpty(dir + "/watch.out");
  EXPECT_TRUE(absl::StrContains(events, "cordons changed")) << events;
  EXPECT_TRUE(absl::StrContains(events, "\"cordon_reason\":\"fan failing\""))
      << events;
  CommandResult ls = CliOn(address, {"devices", "ls"});
  EXPECT_TRUE(absl::StrContains(ls.stdout_text, "cordoned")) << ls.stdout_text;
  CommandResult explain = CliOn(
      address,
      {"explain", "--kernel=saxpy", "--construct=target", "--require=gpu"});
  EXPECT_TRUE(absl::StrContains(explain.stdout_text, "1 cordoned left out"))
      << explain.stdout_text;
  CommandResult listed = CliOn(address, {"devices", "cordons", "-o", "json"});
  EXPECT_TRUE(absl::StrContains(listed.stdout_text, "fan failing"))
      << listed.stdout_text;

  // kill -9 and a restart on the same data: the cordon is still there.
  const int port = (*server)->port();
  (*server)->process().Signal(SIGKILL);
  (*server)->process().Wait(std::chrono::seconds(5));
  server = ServerProcess::Start(flags, port);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE(PickedBecomes(address, "node/gpu1", absl::Seconds(20)));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(PickedOn(address), "node/gpu1");

  CommandResult uncordon = CliOn(address, {"devices", "uncordon", "node/gpu0"});
  ASSERT_EQ(uncordon.exit_code, 0) << uncordon.stderr_text;
  EXPECT_EQ(PickedOn(address), "node/gpu0");
  CommandResult again = CliOn(address, {"devices", "uncordon", "node/gpu0"});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(again.stderr_text, "CORDON_NOT_FOUND"))
      << again.stderr_text;

  // Drain: `run` holds gpu0 with a 3 s claim renewed every second; a drain
  // makes the next renewal fail, and run sends its command SIGTERM.
  const std::string marker = dir + "/got_term";
  auto run = Subprocess::Start(
      {CliPath(), "--insecure", "--server=" + address, "run", "--kernel=saxpy",
       "--construct=target", "--require=gpu", "--claim=3s", "--holder=job1",
       "--", "/bin/sh", "-c",
       absl::StrCat("trap 'echo TERM > ", marker,
                    "; exit 0' TERM; while :; do sleep 0.05; done")},
      dir + "/run.out", dir + "/run.err");
  ASSERT_TRUE(run.ok()) << run.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline &&
         !absl::StrContains(CliOn(address, {"claims", "ls"}).stdout_text,
                            "job1")) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  CommandResult drain =
      CliOn(address, {"devices", "cordon", "--node=node", "--drain",
                      "--reason=maintenance at noon"});
  ASSERT_EQ(drain.exit_code, 0) << drain.stderr_text;
  const absl::Time drained = absl::Now();
  std::optional<int> code = (*run)->Wait(std::chrono::seconds(15));
  ASSERT_TRUE(code.has_value()) << "run did not stop after the drain";
  std::printf("run stopped %s after the drain\n",
              absl::FormatDuration(absl::Now() - drained).c_str());
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(absl::StripAsciiWhitespace(ReadFileOrEmpty(marker)), "TERM")
      << "the command got no SIGTERM; run said: "
      << ReadFileOrEmpty(dir + "/run.err");
  const std::string run_err = ReadFileOrEmpty(dir + "/run.err");
  EXPECT_TRUE(absl::StrContains(run_err, "DEVICE_DRAINED")) << run_err;
  EXPECT_TRUE(absl::StrContains(run_err, "maintenance at noon")) << run_err;
  // The whole node is cordoned: nothing fits.
  EXPECT_EQ(PickedOn(address), "");

  agent->Signal(SIGTERM);
  agent->Wait(std::chrono::seconds(5));
}

// Two replicas on a 3-member etcd cluster: a cordon made through one is
// obeyed by the other, and survives losing the first replica and the etcd
// leader; a replica started afterwards knows it too.
TEST(CordonE2E, SurvivesReplicaAndEtcdLeaderFailover) {
  auto etcd = EtcdCluster::Start(3);
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  std::vector<std::string> flags = (*etcd)->ServerFlags();  // TLS to etcd
  flags.push_back(
      absl::StrCat("--heartbeat_interval=", absl::FormatDuration(kHeartbeat)));
  auto a = ServerProcess::Start(flags);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = ServerProcess::Start(flags);
  ASSERT_TRUE(b.ok()) << b.status();
  Register((*a)->address());
  const std::string dir = MakeTempDir("cordon_etcd");
  // The agent moves to the next replica of its list when one goes.
  std::unique_ptr<Subprocess> agent =
      StartAgent((*a)->address() + "," + (*b)->address(), dir);
  ASSERT_TRUE(PickedBecomes((*b)->address(), "node/gpu0", absl::Seconds(30)));

  CommandResult cordon = CliOn(
      (*a)->address(), {"devices", "cordon", "node/gpu0", "--reason=ecc"});
  ASSERT_EQ(cordon.exit_code, 0) << cordon.stderr_text;
  EXPECT_TRUE(PickedBecomes((*b)->address(), "node/gpu1", absl::Seconds(5)))
      << "the other replica never learned the cordon";

  (*a)->process().Signal(SIGKILL);
  (*a)->process().Wait(std::chrono::seconds(5));
  absl::StatusOr<int> leader = (*etcd)->Leader();
  ASSERT_TRUE(leader.ok()) << leader.status();
  (*etcd)->Kill(*leader);
  ASSERT_TRUE((*etcd)->WaitForLeader(std::chrono::seconds(20)).ok());
  auto c = ServerProcess::Start(flags);
  ASSERT_TRUE(c.ok()) << c.status();
  CommandResult listed =
      CliOn((*c)->address(), {"devices", "cordons", "-o", "json"});
  EXPECT_TRUE(absl::StrContains(listed.stdout_text, "node/gpu0"))
      << listed.stdout_text << listed.stderr_text;
  for (const auto* replica : {&*b, &*c}) {
    // The agent's node is shared through etcd once it reports again.
    EXPECT_TRUE(
        PickedBecomes((*replica)->address(), "node/gpu1", absl::Seconds(30)));
    EXPECT_EQ(PickedOn((*replica)->address()), "node/gpu1");
  }
  agent->Signal(SIGTERM);
  agent->Wait(std::chrono::seconds(5));
}

}  // namespace
}  // namespace ctxsel::testing
