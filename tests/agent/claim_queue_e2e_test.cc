// The server's claim queue (ClaimRequest.wait, issue 24), end to end: a real
// ctxsel-server, a real ctxsel-agent reporting a devices file with four
// H100s, and real `ctxsel-cli select --claim --wait` launchers waiting on
// them. Waiters are served in arrival order within a priority as claims are
// released, `claims ls --waiting` shows them in that order, a launcher that
// goes away leaves the queue, and a wait that runs out says so.
#include <signal.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kGpus = 4;
constexpr int kWaiters = 50;

std::string DevicesFile(const std::string& dir) {
  std::string json = R"({"devices": [)";
  for (int i = 0; i < kGpus; ++i) {
    absl::StrAppend(&json, i == 0 ? "" : ", ",
                    R"({"sycl_architecture": "nvidia_gpu_sm_90", )",
                    R"("compute_units": 132, "vendor_index": )", i, "}");
  }
  json += "]}";
  const std::string path = dir + "/node.json";
  std::ofstream(path) << json;
  return path;
}

class ClaimQueueE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = MakeTempDir("data");
    metrics_port_file_ = dir + "/metrics_port";
    auto server = ServerProcess::Start(
        {"--data_dir=" + dir + "/store", "--metrics_listen=127.0.0.1:0",
         "--metrics_port_file=" + metrics_port_file_});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto agent = StartDevicesFileAgent(server_->address(), "node",
                                       DevicesFile(MakeTempDir("fleet")),
                                       absl::StrCat("node/gpu", kGpus - 1));
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    CommandResult reg =
        Cli({"variants", "register", "saxpy",
             "saxpy_nv=construct={target}, device={arch(nvptx)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
    // Every GPU claimed, by holders g0..g3.
    for (int i = 0; i < kGpus; ++i) {
      CommandResult c = Cli(Select(absl::StrCat("g", i), {}));
      ASSERT_EQ(c.exit_code, 0) << c.stderr_text;
    }
  }
  void TearDown() override {
    waiters_.clear();  // killed before the agent and server go
    if (agent_ != nullptr && agent_->Running()) agent_->Signal(SIGTERM);
    if (agent_ != nullptr) agent_->Wait(std::chrono::seconds(5));
  }

  std::vector<std::string> CliArgs(std::vector<std::string> args) {
    std::vector<std::string> argv = {CliPath(), "--insecure",
                                     "--server=" + server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  CommandResult Cli(std::vector<std::string> args) {
    return RunCommand(CliArgs(std::move(args)));
  }
  // A claiming select on a GPU for `holder`, with `flags`.
  std::vector<std::string> Select(const std::string& holder,
                                  std::vector<std::string> flags) {
    std::vector<std::string> args = {"select",
                                     "--kernel=saxpy",
                                     "--construct=target",
                                     "--require=gpu",
                                     "--claim=5m",
                                     "--holder=" + holder,
                                     "-o",
                                     "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    return args;
  }
  // `claims ls --waiting -o json`'s waiters.
  nlohmann::json Waiting() {
    CommandResult ls = Cli({"claims", "ls", "--waiting", "-o", "json"});
    EXPECT_EQ(ls.exit_code, 0) << ls.stderr_text;
    nlohmann::json answer = nlohmann::json::parse(ls.stdout_text, nullptr,
                                                  /*allow_exceptions=*/false);
    if (!answer.is_object() || !answer.contains("waiters")) {
      return nlohmann::json::array();
    }
    return answer["waiters"];
  }
  // Starts a waiting launcher and returns once the server has queued it,
  // so that arrival order is the order of these calls.
  void StartWaiter(const std::string& holder, std::vector<std::string> flags) {
    const size_t before = Waiting().size();
    const std::string dir = MakeTempDir("waiter");
    flags.push_back("--wait=2m");
    auto waiter = Subprocess::Start(CliArgs(Select(holder, flags)),
                                    dir + "/out", dir + "/err");
    ASSERT_TRUE(waiter.ok()) << waiter.status();
    waiters_.push_back(*std::move(waiter));
    outputs_.push_back(dir + "/out");
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (Waiting().size() == before) {
      ASSERT_LT(absl::Now(), deadline) << holder << " never queued";
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  // Releases `holder`'s claims.
  void Release(const std::string& holder) {
    CommandResult r = Cli({"claims", "release", "--holder=" + holder});
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  }
  // The claim id that waiter `i` printed (it must have exited 0).
  std::string ClaimOf(size_t i) {
    std::optional<int> code = waiters_[i]->Wait(std::chrono::seconds(20));
    EXPECT_EQ(code, 0) << "waiter " << i;
    const nlohmann::json answer = nlohmann::json::parse(
        ReadFileOrEmpty(outputs_[i]), nullptr, /*allow_exceptions=*/false);
    if (!answer.is_object()) return "";
    return answer["claim"].value("id", "");
  }

  // The server's /metrics text.
  std::string Metrics() {
    const std::string port = ReadFileOrEmpty(metrics_port_file_);
    CommandResult get = RunCommand(
        {"/usr/bin/python3", "-c",
         "import sys, urllib.request; sys.stdout.write(urllib.request."
         "urlopen(sys.argv[1]).read().decode())",
         absl::StrCat("http://127.0.0.1:", absl::StripAsciiWhitespace(port),
                      "/metrics")});
    EXPECT_EQ(get.exit_code, 0) << get.stderr_text;
    return get.stdout_text;
  }

  std::string metrics_port_file_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Subprocess> agent_;
  std::vector<std::unique_ptr<Subprocess>> waiters_;
  std::vector<std::string> outputs_;
};

TEST_F(ClaimQueueE2E, FiftyWaitersAreServedInArrivalOrder) {
  for (int i = 0; i < kWaiters; ++i) StartWaiter(absl::StrCat("w", i), {});
  nlohmann::json listed = Waiting();
  ASSERT_EQ(listed.size(), static_cast<size_t>(kWaiters));
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_EQ(listed[i].value("position", 0), i + 1);
    EXPECT_EQ(listed[i].value("holder", ""), absl::StrCat("w", i));
    EXPECT_EQ(listed[i].value("kernel", ""), "saxpy");
  }
  CommandResult table = Cli({"claims", "ls", "--waiting"});
  EXPECT_THAT(table.stdout_text, HasSubstr("POSITION"));
  EXPECT_THAT(table.stdout_text, HasSubstr("w49"));

  // Each release serves the head of the queue, and only it.
  std::vector<std::string> holders = {"g0", "g1", "g2", "g3"};
  for (int i = 0; i < kWaiters; ++i) {
    Release(holders[i % kGpus]);
    ASSERT_FALSE(ClaimOf(i).empty()) << "w" << i;
    holders[i % kGpus] = absl::StrCat("w", i);
    if (i + 1 < kWaiters) {
      EXPECT_TRUE(waiters_[i + 1]->Running()) << "w" << i + 1 << " too early";
    }
    EXPECT_EQ(Waiting().size(), static_cast<size_t>(kWaiters - i - 1));
  }
}

TEST_F(ClaimQueueE2E, PriorityCancelAndExpiry) {
  StartWaiter("low0", {});
  StartWaiter("low1", {});
  StartWaiter("high", {"--priority=5"});
  nlohmann::json listed = Waiting();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].value("holder", ""), "high");
  EXPECT_EQ(listed[0].value("priority", 0), 5);
  EXPECT_EQ(listed[1].value("holder", ""), "low0");
  EXPECT_THAT(Metrics(), HasSubstr("ctxsel_claim_waiters 3"));

  // A launcher that goes away leaves the queue.
  waiters_[0]->Signal(SIGKILL);
  waiters_[0]->Wait(std::chrono::seconds(5));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Waiting().size() != 2u && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  listed = Waiting();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].value("holder", ""), "low1");

  Release("g0");
  EXPECT_FALSE(ClaimOf(2).empty());  // high, before low1
  EXPECT_TRUE(waiters_[1]->Running());
  Release("g1");
  EXPECT_FALSE(ClaimOf(1).empty());

  // Nothing is released: the wait runs out, and says so.
  CommandResult late = Cli(Select("late", {"--wait=1s"}));
  EXPECT_EQ(late.exit_code, 4) << late.stderr_text;
  EXPECT_THAT(late.stderr_text, HasSubstr("in the claim queue"));
  EXPECT_EQ(Waiting().size(), 0u);
  const std::string metrics = Metrics();
  EXPECT_THAT(metrics, HasSubstr("ctxsel_claim_waiters 0"));
  for (const auto& [outcome, count] :
       {std::pair{"granted", 2}, {"cancelled", 1}, {"expired", 1}}) {
    EXPECT_THAT(metrics,
                HasSubstr(absl::StrCat("ctxsel_claim_wait_seconds_count{",
                                       "outcome=\"", outcome, "\"} ", count)));
  }
}

// Priority above 0 is the admin's: a launcher token asking for it is
// refused with its own reason (TLS with tokens, as roles need).
TEST(ClaimQueuePriorityE2E, LaunchersMayNotRaiseTheirPriority) {
  const std::string dir = MakeTempDir("pki");
  CommandResult made =
      RunCommand({"/bin/bash", RunfilePath("tools/make_certs.sh"), dir});
  ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
  CommandResult token = RunCommand(
      {CliPath(), "admin", "token", "--role=launcher", "--name=slurm"});
  ASSERT_EQ(token.exit_code, 0) << token.stderr_text;
  std::ofstream(dir + "/tokens") << token.stderr_text;
  std::ofstream(dir + "/slurm.token") << token.stdout_text;
  auto server = ServerProcess::Start(
      {"--data_dir=" + MakeTempDir("data"), "--tls_cert=" + dir + "/server.pem",
       "--tls_key=" + dir + "/server.key", "--tokens_file=" + dir + "/tokens"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto select = [&](const std::string& priority) {
    return RunCommand({CliPath(), "--server=" + (*server)->address(),
                       "--ca=" + dir + "/ca.pem",
                       "--token_file=" + dir + "/slurm.token", "select",
                       "--kernel=saxpy", "--construct=target", "--claim=1m",
                       "--wait=1s", "--priority=" + priority});
  };
  CommandResult raised = select("5");
  EXPECT_NE(raised.exit_code, 0);
  EXPECT_THAT(raised.stderr_text, HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(raised.stderr_text, HasSubstr("PRIORITY_NOT_ALLOWED"));
  // The default priority passes the check (and finds no kernel).
  CommandResult plain = select("0");
  EXPECT_THAT(plain.stderr_text, HasSubstr("NOT_FOUND"));
}

}  // namespace
}  // namespace ctxsel::testing
