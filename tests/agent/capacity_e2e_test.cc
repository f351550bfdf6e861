// Capacity in matching (issue 24, item 1), end to end: a real ctxsel-server,
// a real ctxsel-agent reporting a devices file with two H100s that differ
// only in memory (80 GiB and 40 GiB), and the real CLI. They are two device
// classes; --min_memory picks only the big one and Explain names the
// capacity that ruled the small one out; a kernel whose selectors read
// ctxsel_device_memory_gib runs its big-batch variant on the full GPU and
// its small one on the small GPU, in one request's answer. Shares (item 2):
// 16 launchers claiming 20 GiB of the 80 GiB GPU at once get exactly 4.
// Quotas (item 6): a launcher token over its tokens-file cap gets
// RESOURCE_EXHAUSTED with reason CLAIM_QUOTA_EXCEEDED.
#include <signal.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

constexpr uint64_t kGiB = uint64_t{1} << 30;

std::string DevicesFile(const std::string& dir) {
  std::string json = R"({"devices": [)";
  for (uint64_t gib : {80, 40}) {
    absl::StrAppend(&json, gib == 80 ? "" : ", ",
                    R"({"sycl_architecture": "nvidia_gpu_sm_90", )",
                    R"("compute_units": 132, "memory_bytes": )", gib * kGiB,
                    "}");
  }
  json += "]}";
  const std::string path = dir + "/node.json";
  std::ofstream(path) << json;
  return path;
}

class CapacityE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto agent =
        StartDevicesFileAgent(server_->address(), "node",
                              DevicesFile(MakeTempDir("fleet")), "node/gpu1");
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    CommandResult reg =
        Cli({"variants", "register", "train",
             "train_big=device={arch(nvptx)}, "
             "user={condition(ctxsel_device_memory_gib >= 60)}",
             "train_small=device={arch(nvptx)}, "
             "user={condition(ctxsel_device_memory_gib >= 8)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
    reg = Cli({"variants", "register", "saxpy",
               "saxpy_nv=construct={target}, device={arch(nvptx)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }
  void TearDown() override {
    if (agent_ != nullptr && agent_->Running()) agent_->Signal(SIGTERM);
    if (agent_ != nullptr) agent_->Wait(std::chrono::seconds(5));
  }

  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }
  nlohmann::json Json(const CommandResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return nlohmann::json::parse(r.stdout_text, nullptr,
                                 /*allow_exceptions=*/false);
  }

  std::vector<std::string> CliArgs(std::vector<std::string> args) {
    std::vector<std::string> argv = {CliPath(), "--insecure",
                                     "--server=" + server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Subprocess> agent_;
};

TEST_F(CapacityE2E, SixteenTwentyGibShareClaimsOnAnEightyGibGpuGrantFour) {
  constexpr int kLaunchers = 16;
  std::vector<std::unique_ptr<Subprocess>> launchers;
  std::vector<std::string> outputs;
  for (int i = 0; i < kLaunchers; ++i) {
    const std::string dir = MakeTempDir("share");
    auto launcher = Subprocess::Start(
        CliArgs({"select", "--kernel=saxpy", "--construct=target",
                 "--devices=node/gpu0", "--claim=5m", "--memory=20GiB",
                 "--holder=" + absl::StrCat("s", i), "--format=env"}),
        dir + "/out", dir + "/err");
    ASSERT_TRUE(launcher.ok()) << launcher.status();
    launchers.push_back(*std::move(launcher));
    outputs.push_back(dir + "/out");
  }
  int granted = 0;
  for (int i = 0; i < kLaunchers; ++i) {
    std::optional<int> code = launchers[i]->Wait(std::chrono::seconds(60));
    ASSERT_TRUE(code.has_value());
    if (*code != 0) {
      EXPECT_EQ(*code, 4) << "launcher " << i;  // every place is claimed
      continue;
    }
    ++granted;
    // A quarter of the device: what MPS would be told.
    EXPECT_THAT(ReadFileOrEmpty(outputs[i]),
                HasSubstr("export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE='25'"));
  }
  EXPECT_EQ(granted, 4);
  nlohmann::json claims = Json(Cli({"claims", "ls", "-o", "json"}));
  uint64_t held = 0;
  for (const nlohmann::json& c : claims["claims"]) {
    EXPECT_EQ(c.value("device", ""), "node/gpu0");
    held += c.value("memory_bytes", uint64_t{0});
  }
  EXPECT_EQ(held, 80 * kGiB) << claims.dump();
  // Shares and the whole device exclude each other.
  CommandResult whole = Cli({"select", "--kernel=saxpy", "--construct=target",
                             "--devices=node/gpu0", "--claim=1m"});
  EXPECT_EQ(whole.exit_code, 4) << whole.stderr_text;
  CommandResult gpu1_whole =
      Cli({"select", "--kernel=saxpy", "--construct=target",
           "--devices=node/gpu1", "--claim=1m", "--holder=w"});
  ASSERT_EQ(gpu1_whole.exit_code, 0) << gpu1_whole.stderr_text;
  CommandResult on_whole =
      Cli({"select", "--kernel=saxpy", "--construct=target",
           "--devices=node/gpu1", "--claim=1m", "--compute_percent=10"});
  EXPECT_EQ(on_whole.exit_code, 4) << on_whole.stderr_text;
  // A share larger than any device never fits (not "claimed").
  CommandResult huge = Cli({"select", "--kernel=saxpy", "--construct=target",
                            "--claim=1m", "--memory=100GiB", "--require=gpu"});
  EXPECT_NE(huge.exit_code, 0);
  EXPECT_NE(huge.exit_code, 4);
  EXPECT_THAT(huge.stderr_text, HasSubstr("min_memory: needs 100 GiB"));
}

TEST_F(CapacityE2E, MemoryMakesTwoClassesAndMinMemoryPicksTheBigOne) {
  nlohmann::json explain =
      Json(Cli({"explain", "--kernel=saxpy", "--construct=target",
                "--require=gpu", "--min_memory=60GiB", "-o", "json"}));
  std::vector<std::string> reasons;
  int gpu_classes = 0;
  for (const nlohmann::json& c : explain["classes"]) {
    if (c.value("device_class_short_name", "") != "nvidia_gpu_sm_90") continue;
    ++gpu_classes;
    const uint64_t memory = c.value("memory_bytes", uint64_t{0});
    if (memory == 40 * kGiB) {
      EXPECT_FALSE(c.value("eligible", true));
      EXPECT_EQ(c.value("reason", ""),
                "min_memory: needs 60 GiB, the class has 40 GiB");
    } else {
      EXPECT_EQ(memory, 80 * kGiB);
      EXPECT_TRUE(c.value("eligible", false)) << c.dump();
    }
  }
  EXPECT_EQ(gpu_classes, 2) << explain.dump();
  // Least loaded would take the idle gpu1 as often as gpu0; the minimum
  // leaves gpu0 only, and once it is claimed nothing.
  nlohmann::json pick = Json(Cli(
      {"select", "--kernel=saxpy", "--construct=target", "--require=gpu",
       "--min_memory=60GiB", "--claim=1m", "--holder=first", "-o", "json"}));
  EXPECT_EQ(pick["placement"]["device"].value("id", ""), "node/gpu0");
  CommandResult none =
      Cli({"select", "--kernel=saxpy", "--construct=target", "--require=gpu",
           "--min_memory=60GiB", "--claim=1m", "--holder=again"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.stderr_text, HasSubstr("claimed"));
  CommandResult too_big = Cli({"select", "--kernel=saxpy", "--construct=target",
                               "--require=gpu", "--min_memory=100GiB"});
  EXPECT_NE(too_big.exit_code, 0);
  // (The CLI wraps its message at 120 columns.)
  EXPECT_THAT(too_big.stderr_text, HasSubstr("min_memory: needs 100"));
  EXPECT_THAT(too_big.stderr_text, HasSubstr("the class has 80 GiB"));
  CommandResult units = Cli({"select", "--kernel=saxpy", "--construct=target",
                             "--require=gpu", "--min_compute_units=200"});
  EXPECT_THAT(units.stderr_text,
              HasSubstr("min_compute_units: needs 200, the class has "
                        "132 compute units"));
  CommandResult bad = Cli(
      {"select", "--kernel=saxpy", "--construct=target", "--min_memory=60 GB"});
  EXPECT_EQ(bad.exit_code, 2) << bad.stderr_text;
  EXPECT_THAT(bad.stderr_text, HasSubstr("--min_memory"));
}

TEST_F(CapacityE2E, ASelectorReadingDeviceMemoryPicksTheVariantPerGpu) {
  for (const auto& [device, variant] :
       {std::pair{"node/gpu0", "train_big"}, {"node/gpu1", "train_small"}}) {
    nlohmann::json pick =
        Json(Cli({"select", "--kernel=train",
                  "--devices=" + std::string(device), "-o", "json"}));
    EXPECT_EQ(pick["placement"].value("variant", ""), variant) << device;
    EXPECT_EQ(pick["placement"]["device"].value("id", ""), device);
  }
  // Both classes in one request: each its own verdict.
  nlohmann::json explain =
      Json(Cli({"explain", "--kernel=train", "--require=gpu", "-o", "json"}));
  int seen = 0;
  for (const nlohmann::json& c : explain["classes"]) {
    const uint64_t memory = c.value("memory_bytes", uint64_t{0});
    if (memory == 80 * kGiB) {
      EXPECT_EQ(c.value("selected_variant", ""), "train_big");
      ++seen;
    } else if (memory == 40 * kGiB) {
      EXPECT_EQ(c.value("selected_variant", ""), "train_small");
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2) << explain.dump();
  // The job cannot set them: they are the device's.
  CommandResult own =
      Cli({"select", "--kernel=train", "--var=ctxsel_device_memory_gib=99"});
  EXPECT_NE(own.exit_code, 0);
  EXPECT_THAT(own.stderr_text, HasSubstr("ctxsel_device_"));
}

// TLS with tokens, as roles need: a launcher token capped at 2 live claims
// and a holder prefix capped at 1, in the tokens file.
TEST(QuotaE2E, ALauncherOverItsQuotaGetsItsOwnReason) {
  const std::string dir = MakeTempDir("pki");
  CommandResult made = RunCommand(
      {"/bin/bash", RunfilePath("tools/make_certs.sh"), dir, "node"});
  ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
  std::string tokens;
  for (const char* role : {"admin", "launcher"}) {
    CommandResult token =
        RunCommand({CliPath(), "admin", "token", std::string("--role=") + role,
                    std::string("--name=") + role});
    ASSERT_EQ(token.exit_code, 0) << token.stderr_text;
    std::string line = token.stderr_text;
    while (!line.empty() && line.back() == '\n') line.pop_back();
    if (std::string(role) == "launcher") line += " max_claims=2";
    tokens += line + "\n";
    std::ofstream(dir + "/" + role + ".token") << token.stdout_text;
  }
  tokens += "quota holder_prefix=job7. max_claims=1\n";
  std::ofstream(dir + "/tokens") << tokens;
  auto server = ServerProcess::Start(
      {"--data_dir=" + MakeTempDir("data"), "--tls_cert=" + dir + "/server.pem",
       "--tls_key=" + dir + "/server.key", "--client_ca=" + dir + "/ca.pem",
       "--tokens_file=" + dir + "/tokens"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto agent = Subprocess::Start(
      {RunfilePath("agent/ctxsel-agent"), "--server=" + (*server)->address(),
       "--ca=" + dir + "/ca.pem", "--tls_cert=" + dir + "/node.pem",
       "--tls_key=" + dir + "/node.key", "--node_id=node",
       "--backends=", "--devices_file=" + DevicesFile(MakeTempDir("fleet"))});
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto cli = [&](const std::string& role, std::vector<std::string> args) {
    std::vector<std::string> argv = {
        CliPath(), "--server=" + (*server)->address(),
        "--ca=" + dir + "/ca.pem",
        "--token_file=" + dir + "/" + role + ".token"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  };
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline &&
         !absl::StrContains(
             cli("admin", {"devices", "ls", "-o", "name"}).stdout_text,
             "node/gpu1")) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  CommandResult reg =
      cli("admin", {"variants", "register", "saxpy",
                    "saxpy_nv=construct={target}, device={arch(nvptx)}"});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  auto claim = [&](const std::string& holder) {
    return cli("launcher", {"select", "--kernel=saxpy", "--construct=target",
                            "--require=gpu", "--claim=5m", "--memory=1GiB",
                            "--holder=" + holder});
  };
  ASSERT_EQ(claim("job7.0").exit_code, 0);
  CommandResult prefix = claim("job7.1");
  EXPECT_EQ(prefix.exit_code, 4) << prefix.stderr_text;
  EXPECT_THAT(prefix.stderr_text, HasSubstr("CLAIM_QUOTA_EXCEEDED"));
  EXPECT_THAT(prefix.stderr_text, HasSubstr("holders 'job7.*'"));
  ASSERT_EQ(claim("a").exit_code, 0);
  // Devices are free (shares of 1 GiB), but the principal is at its cap;
  // --wait does not queue it.
  CommandResult over =
      cli("launcher",
          {"select", "--kernel=saxpy", "--construct=target", "--require=gpu",
           "--claim=5m", "--memory=1GiB", "--holder=b", "--wait=30s"});
  EXPECT_EQ(over.exit_code, 4) << over.stderr_text;
  EXPECT_THAT(over.stderr_text, HasSubstr("RESOURCE_EXHAUSTED"));
  EXPECT_THAT(over.stderr_text, HasSubstr("CLAIM_QUOTA_EXCEEDED"));
  EXPECT_THAT(over.stderr_text,
              HasSubstr("principal 'launcher' holds 2 live claims of at most "
                        "2"));
  // An admin is not capped by the launcher's quota.
  CommandResult admin =
      cli("admin",
          {"select", "--kernel=saxpy", "--construct=target", "--require=gpu",
           "--claim=5m", "--memory=1GiB", "--holder=ops"});
  EXPECT_EQ(admin.exit_code, 0) << admin.stderr_text;
  (*agent)->Signal(SIGTERM);
  (*agent)->Wait(std::chrono::seconds(5));
}

}  // namespace
}  // namespace ctxsel::testing
