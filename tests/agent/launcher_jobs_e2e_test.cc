// Jobs as launchers see them (issue 20), end to end: a real ctxsel-server,
// real ctxsel-agents reporting devices files (node4: a CPU and four H100s
// whose vendor indices run opposite to their device numbers, with UUIDs;
// node3: a CPU and three H100s) and the real ctxsel-cli, run with the
// environment a launcher (Slurm, a Kubernetes device plugin) sets. Each test
// gets a fresh server, so that no claim outlives it.
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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
using ::testing::IsEmpty;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

// nodeK/gpuN has vendor index K - 1 - N and UUID Uuid(K - 1 - N, K).
std::string Uuid(int vendor_index, int node = 4) {
  return absl::StrCat("GPU-6c1d0e8a-0000-4000-8000-00000000000", node,
                      vendor_index);
}

// `name` is "node<gpus>".
std::string DevicesFile(const std::string& dir, const std::string& name,
                        int gpus) {
  std::string json = absl::StrCat(
      R"({"devices": [{"sycl_architecture": "x86_64", "compute_units": 64, )",
      R"("traits": {"isa": ["avx2", "avx512f", "x86_64_v4"], )",
      R"("vendor": ["intel"]}})");
  for (int i = 0; i < gpus; ++i) {
    const int vendor_index = gpus - 1 - i;
    absl::StrAppend(&json, R"(, {"sycl_architecture": "nvidia_gpu_sm_90", )",
                    R"("compute_units": 132, "vendor_index": )", vendor_index,
                    R"(, "uuid": ")", Uuid(vendor_index, gpus), R"("})");
  }
  json += "]}";
  const std::string path = absl::StrCat(dir, "/", name, ".json");
  std::ofstream(path) << json;
  return path;
}

// What one `select -o json` answered, rank by rank.
struct Rank {
  std::string device;
  std::string claim;
  std::string variant;
  bool base = false;
};
std::vector<Rank> Ranks(const std::string& json_text) {
  std::vector<Rank> out;
  const nlohmann::json answer = nlohmann::json::parse(json_text);
  for (const nlohmann::json& r : answer.at("ranks")) {
    const nlohmann::json& p = r.at("placement");
    out.push_back({p.at("device").at("id"),
                   r.contains("claim") ? r["claim"].value("id", "") : "",
                   p.at("variant"), p.at("base")});
  }
  return out;
}

class LaunchersE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    const std::string dir = MakeTempDir("fleet");
    for (const auto& [node, gpus] : {std::pair{"node4", 4}, {"node3", 3}}) {
      auto agent = Subprocess::Start(
          {RunfilePath("agent/ctxsel-agent"), "--insecure",
           "--server=" + server_->address(), std::string("--node_id=") + node,
           "--backends=", "--devices_file=" + DevicesFile(dir, node, gpus)});
      ASSERT_TRUE(agent.ok()) << agent.status();
      agents_.push_back(*std::move(agent));
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      CommandResult ls = Cli({"devices", "ls", "-o", "name"});
      if (absl::StrContains(ls.stdout_text, "node4/gpu3") &&
          absl::StrContains(ls.stdout_text, "node3/gpu2")) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    CommandResult reg = Cli(
        {"variants", "register", "saxpy",
         "saxpy_nv=construct={target}, device={arch(nvptx)}",
         "saxpy_cpu=construct={parallel}, device={kind(cpu), isa(avx512f)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }
  void TearDown() override {
    for (auto& agent : agents_) {
      if (agent->Running()) agent->Signal(SIGTERM);
      agent->Wait(std::chrono::seconds(5));
    }
  }

  // The CLI's argv, run in an environment of `env` ("NAME=value") alone, as
  // a launcher would set it.
  std::vector<std::string> CliArgs(std::vector<std::string> args,
                                   const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {"/usr/bin/env", "-i",
                                     "PATH=/usr/bin:/bin"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(),
                {CliPath(), "--insecure", "--server=" + server_->address()});
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  CommandResult Cli(std::vector<std::string> args,
                    const std::vector<std::string>& env = {}) {
    return RunCommand(CliArgs(std::move(args), env));
  }
  // `select --kernel=saxpy --construct=target -o json` with `flags`.
  std::vector<std::string> Select(std::vector<std::string> flags) {
    std::vector<std::string> args = {"select", "--kernel=saxpy",
                                     "--construct=target", "-o", "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    return args;
  }
  // holder -> devices of the live claims.
  std::map<std::string, std::multiset<std::string>> Claims() {
    CommandResult ls = Cli({"claims", "ls", "-o", "json"});
    EXPECT_EQ(ls.exit_code, 0) << ls.stderr_text;
    std::map<std::string, std::multiset<std::string>> out;
    for (const nlohmann::json& c :
         nlohmann::json::parse(ls.stdout_text)
             .value("claims", nlohmann::json::array())) {
      out[c.at("holder")].insert(c.at("device").get<std::string>());
    }
    return out;
  }

  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
};

// Slurm gave one job GPUs 0-1 and another 2-3 of node4; ctxsel used to
// send each job to the other's GPUs.
TEST_F(LaunchersE2E, DisjointAllocationsGetDevicesInsideTheirOwn) {
  const std::set<std::string> first = {"node4/gpu0", "node4/gpu1"};
  const std::set<std::string> second = {"node4/gpu2", "node4/gpu3"};
  // The second allocation by UUID, as CUDA_VISIBLE_DEVICES may give it.
  const std::string by_id = "--devices=node4/gpu0,node4/gpu1";
  const std::string by_uuid = absl::StrCat("--devices=", Uuid(1), ",", Uuid(0));
  std::vector<std::vector<std::string>> launchers;
  for (int i = 0; i < 2; ++i) {
    launchers.push_back(CliArgs(Select({by_id, "--claim=1m"})));
    launchers.push_back(CliArgs(Select({by_uuid, "--claim=1m"})));
  }
  std::set<std::string> granted;
  std::vector<CommandResult> results =
      RunCommandsInParallel(launchers, std::chrono::seconds(30));
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_EQ(results[i].exit_code, 0) << results[i].stderr_text;
    std::vector<Rank> ranks = Ranks(results[i].stdout_text);
    ASSERT_EQ(ranks.size(), 1u);
    EXPECT_EQ((i % 2 == 0 ? first : second).count(ranks[0].device), 1u)
        << ranks[0].device << " is outside launcher " << i << "'s allocation";
    granted.insert(ranks[0].device);
  }
  EXPECT_EQ(granted.size(), 4u);
  // Without claims too, and a fifth claim finds the allocation full.
  for (int i = 0; i < 3; ++i) {
    CommandResult plain = Cli(Select({by_id}));
    ASSERT_EQ(plain.exit_code, 0) << plain.stderr_text;
    EXPECT_EQ(first.count(Ranks(plain.stdout_text)[0].device), 1u);
  }
  EXPECT_EQ(Cli(Select({by_id, "--claim=1m"})).exit_code, 4);
}

TEST_F(LaunchersE2E, CountIsAllOrNothing) {
  // node3 has three GPUs: four never fit.
  CommandResult three = Cli(
      Select({"--nodes=node3", "--count=4", "--require=gpu", "--claim=1m"}));
  EXPECT_EQ(three.exit_code, 1) << three.stderr_text;
  EXPECT_EQ(three.stdout_text, "");
  // node4 with one GPU claimed: three free, refused whole.
  ASSERT_EQ(
      Cli(Select({"--devices=node4/gpu2", "--claim=1m", "--holder=other"}))
          .exit_code,
      0);
  CommandResult busy = Cli(
      Select({"--nodes=node4", "--count=4", "--require=gpu", "--claim=1m"}));
  EXPECT_EQ(busy.exit_code, 4) << busy.stderr_text;
  EXPECT_THAT(Claims(),
              UnorderedElementsAre(::testing::Pair(
                  "other", std::multiset<std::string>{"node4/gpu2"})));
  // All four free: four distinct devices, four claims, one answer.
  ASSERT_EQ(Cli({"claims", "release", "--holder=other"}).exit_code, 0);
  CommandResult four =
      Cli(Select({"--nodes=node4", "--count=4", "--require=gpu", "--claim=1m",
                  "--holder=job"}));
  ASSERT_EQ(four.exit_code, 0) << four.stderr_text;
  std::set<std::string> devices, claims;
  for (const Rank& r : Ranks(four.stdout_text)) {
    devices.insert(r.device);
    claims.insert(r.claim);
  }
  EXPECT_THAT(devices, UnorderedElementsAre("node4/gpu0", "node4/gpu1",
                                            "node4/gpu2", "node4/gpu3"));
  EXPECT_EQ(claims.size(), 4u);
  EXPECT_EQ(Claims()["job"].size(), 4u);
}

// Twelve launchers at once, two GPUs each, seven GPUs in the fleet: no
// device is granted twice and no launcher gets one GPU of its two.
TEST_F(LaunchersE2E, ConcurrentCountsNeverShareOrSplit) {
  std::vector<std::vector<std::string>> launchers;
  for (int i = 0; i < 12; ++i) {
    launchers.push_back(
        CliArgs(Select({"--count=2", "--require=gpu", "--claim=1m",
                        absl::StrCat("--holder=launcher-", i)})));
  }
  std::multiset<std::string> granted;
  int placed = 0;
  for (const CommandResult& r :
       RunCommandsInParallel(launchers, std::chrono::seconds(60))) {
    if (r.exit_code != 0) {
      EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
      continue;
    }
    ++placed;
    std::vector<Rank> ranks = Ranks(r.stdout_text);
    ASSERT_EQ(ranks.size(), 2u);
    for (const Rank& rank : ranks) {
      EXPECT_THAT(rank.device, ::testing::ContainsRegex("^node[34]/gpu"));
      EXPECT_THAT(rank.claim, StartsWith("c-"));
      granted.insert(rank.device);
    }
  }
  EXPECT_EQ(placed, 3);
  EXPECT_EQ(std::set<std::string>(granted.begin(), granted.end()).size(),
            granted.size());
  int claims = 0;
  for (const auto& [holder, devices] : Claims()) {
    EXPECT_EQ(devices.size(), 2u) << holder;
    claims += devices.size();
  }
  EXPECT_EQ(claims, 2 * placed);
}

TEST_F(LaunchersE2E, FromAllocationMapsTheLaunchersIndices) {
  const std::vector<std::string> job = {"--from_allocation", "--nodes=node4",
                                        "--require=gpu"};
  auto devices = [&](const std::vector<std::string>& env, int count) {
    std::vector<std::string> flags = job;
    flags.push_back(absl::StrCat("--count=", count));
    CommandResult r = Cli(Select(flags), env);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    std::set<std::string> out;
    if (r.exit_code == 0) {
      for (const Rank& rank : Ranks(r.stdout_text)) out.insert(rank.device);
    }
    return out;
  };
  // Slurm's GRES indices are vendor indices: 0 is node4/gpu3. They win over
  // CUDA_VISIBLE_DEVICES, which cgroups renumber from 0.
  EXPECT_THAT(devices({"SLURM_STEP_GPUS=0,2", "CUDA_VISIBLE_DEVICES=0,1"}, 2),
              UnorderedElementsAre("node4/gpu3", "node4/gpu1"));
  EXPECT_THAT(devices({"SLURM_JOB_GPUS=3"}, 1),
              UnorderedElementsAre("node4/gpu0"));
  EXPECT_THAT(devices({"CUDA_VISIBLE_DEVICES=" + Uuid(1)}, 1),
              UnorderedElementsAre("node4/gpu2"));

  CommandResult unmapped =
      Cli(Select(job), {"SLURM_STEP_GPUS=0,7", "CUDA_VISIBLE_DEVICES=7"});
  EXPECT_EQ(unmapped.exit_code, 2);
  EXPECT_EQ(unmapped.stdout_text, "");
  EXPECT_THAT(unmapped.stderr_text, HasSubstr("SLURM_STEP_GPUS=0,7: '7'"));
  CommandResult none = Cli(Select(job));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.stderr_text, HasSubstr("SLURM_STEP_GPUS"));
  EXPECT_THAT(none.stderr_text, HasSubstr("is set"));
}

// A TaskProlog's stdout and env files take values literally.
TEST_F(LaunchersE2E, SlurmAndDotenvFormatsAreUnquoted) {
  const std::vector<std::string> select = {"select",
                                           "--kernel=saxpy",
                                           "--construct=target",
                                           "--count=2",
                                           "--devices=node4/gpu0,node4/gpu1",
                                           "--claim=1m",
                                           "--holder=prolog"};
  for (const auto& [format, prefix] :
       {std::pair{"slurm", "export "}, {"dotenv", ""}}) {
    std::vector<std::string> args = select;
    args.push_back(absl::StrCat("--format=", format));
    CommandResult r = Cli(args, {"SLURM_PROCID=1"});
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    EXPECT_THAT(r.stdout_text,
                HasSubstr(absl::StrCat(prefix, "CTXSEL_VARIANT=saxpy_nv\n")));
    EXPECT_THAT(r.stdout_text,
                HasSubstr(absl::StrCat(prefix, "CUDA_VISIBLE_DEVICES=GPU-")));
    for (absl::string_view line :
         absl::StrSplit(r.stdout_text, '\n', absl::SkipEmpty())) {
      EXPECT_THAT(std::string(line), StartsWith(prefix));
      EXPECT_EQ(line.find_first_not_of(
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789_.,:/@+=- "),
                absl::string_view::npos)
          << line;
    }
    // Rank 1's environment (SLURM_PROCID): its claim is on its device.
    const std::string text = r.stdout_text;
    auto value = [&](const std::string& name) {
      const std::string key = absl::StrCat(prefix, name, "=");
      const size_t at = text.find(key);
      if (at == std::string::npos) return std::string();
      const size_t end = text.find('\n', at);
      return text.substr(at + key.size(), end - at - key.size());
    };
    CommandResult ls = Cli({"claims", "ls", "-o", "json"});
    const std::string claim = value("CTXSEL_CLAIM");
    bool found = false;
    const nlohmann::json listed = nlohmann::json::parse(ls.stdout_text);
    for (const nlohmann::json& c : listed.at("claims")) {
      if (c.at("id").get<std::string>() == claim) {
        found = true;
        EXPECT_EQ(c.at("device").get<std::string>(), value("CTXSEL_DEVICE"));
      }
    }
    EXPECT_TRUE(found) << claim << " is not in " << ls.stdout_text;
    ASSERT_EQ(Cli({"claims", "release", "--holder=prolog"}).exit_code, 0);
  }
  CommandResult quoted =
      Cli({"select", "--kernel=saxpy", "--construct=target", "--format=env"});
  EXPECT_THAT(quoted.stdout_text,
              HasSubstr("export CTXSEL_VARIANT='saxpy_nv'"));
  CommandResult no_rank = Cli({"select", "--kernel=saxpy", "--construct=target",
                               "--count=2", "--format=slurm"},
                              {"SLURM_PROCID=2"});
  EXPECT_EQ(no_rank.exit_code, 2);
  // The message is wrapped at 120 columns (ctxsel-cli's text_fit.h).
  EXPECT_THAT(no_rank.stderr_text,
              ::testing::ContainsRegex("2 is not a rank of\\s+--count=2"));
}

TEST_F(LaunchersE2E, RequireGpuNeverAnswersACpu) {
  std::vector<std::vector<std::string>> launchers(
      6, CliArgs(Select({"--nodes=node4", "--require=gpu", "--claim=1m",
                         "--holder=gpu-jobs"})));
  int placed = 0;
  for (const CommandResult& r :
       RunCommandsInParallel(launchers, std::chrono::seconds(30))) {
    if (r.exit_code == 0) {
      ++placed;
      EXPECT_THAT(Ranks(r.stdout_text)[0].device, StartsWith("node4/gpu"));
    } else {
      EXPECT_EQ(r.exit_code, 4) << r.stderr_text;
      EXPECT_EQ(r.stdout_text, "");
    }
  }
  EXPECT_EQ(placed, 4);
  // Without --require the same job falls back to the CPU, and says so in
  // every format.
  for (const char* format : {"--format=table", "--format=env"}) {
    CommandResult fallback =
        Cli({"select", "--kernel=saxpy", "--construct=target", "--nodes=node4",
             "--claim=1m", "--holder=fallback", format});
    ASSERT_EQ(fallback.exit_code, 0) << fallback.stderr_text;
    EXPECT_THAT(fallback.stderr_text,
                HasSubstr("ctxsel-cli: note: placed the base function of "
                          "saxpy on the host CPU node4/cpu0"));
    EXPECT_THAT(fallback.stderr_text, HasSubstr("--require=gpu"));
    ASSERT_EQ(Cli({"claims", "release", "--holder=fallback"}).exit_code, 0);
  }
  // Only the base function fits a `teams` region: --require_variant fails.
  CommandResult base = Cli({"select", "--kernel=saxpy", "--construct=teams",
                            "--nodes=node3", "--require=gpu"});
  EXPECT_EQ(base.exit_code, 0) << base.stderr_text;
  EXPECT_THAT(base.stderr_text,
              HasSubstr("note: placed the base function of saxpy (no variant "
                        "fits); add --require_variant to fail instead"));
  CommandResult strict =
      Cli({"select", "--kernel=saxpy", "--construct=teams", "--nodes=node3",
           "--require=gpu", "--require_variant"});
  EXPECT_EQ(strict.exit_code, 1) << strict.stderr_text;
  EXPECT_EQ(strict.stdout_text, "");
}

// A TaskEpilog does not see the prolog's exports: it releases by holder.
TEST_F(LaunchersE2E, ReleaseByHolderFreesEveryClaimOfAJob) {
  const std::vector<std::string> step = {"SLURM_JOB_ID=7", "SLURM_STEP_ID=0"};
  ASSERT_EQ(
      Cli(Select({"--nodes=node4", "--count=2", "--claim=1m"}), step).exit_code,
      0);
  ASSERT_EQ(Cli(Select({"--nodes=node3", "--claim=1m"}), step).exit_code, 0);
  ASSERT_EQ(
      Cli(Select({"--nodes=node3", "--claim=1m", "--holder=other"})).exit_code,
      0);
  EXPECT_EQ(Claims()["slurm-7.0"].size(), 3u);
  CommandResult released = Cli({"claims", "release", "--holder=slurm-7.0"});
  EXPECT_EQ(released.exit_code, 0) << released.stderr_text;
  EXPECT_EQ(released.stdout_text, "released 3 claims of slurm-7.0\n");
  std::map<std::string, std::multiset<std::string>> left = Claims();
  EXPECT_EQ(left.count("slurm-7.0"), 0u);
  EXPECT_EQ(left["other"].size(), 1u);
  CommandResult again = Cli({"claims", "release", "--holder=slurm-7.0"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.stdout_text, "released 0 claims of slurm-7.0\n");
}

// `srun -n4 ctxsel-cli run --from_allocation ...`: each rank claims its own
// GPU of the step's allocation; `run --count=2` runs one command per rank.
TEST_F(LaunchersE2E, SrunRanksGetDistinctDevices) {
  const std::vector<std::string> run = {
      "run",
      "--kernel=saxpy",
      "--construct=target",
      "--nodes=node4",
      "--from_allocation",
      "--require=gpu",
      "--",
      "/bin/sh",
      "-c",
      "echo \"$CTXSEL_DEVICE $CUDA_VISIBLE_DEVICES\"; sleep 2"};
  std::vector<std::vector<std::string>> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    ranks.push_back(
        CliArgs(run, {absl::StrCat("SLURM_PROCID=", rank), "SLURM_JOB_ID=8",
                      "SLURM_STEP_ID=0", "SLURM_STEP_GPUS=0,1,2,3"}));
  }
  std::set<std::string> devices;
  for (const CommandResult& r :
       RunCommandsInParallel(ranks, std::chrono::seconds(30))) {
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    EXPECT_THAT(r.stdout_text, StartsWith("node4/gpu"));
    EXPECT_THAT(r.stdout_text, HasSubstr(" GPU-"));
    devices.insert(r.stdout_text);
  }
  EXPECT_EQ(devices.size(), 4u);
  EXPECT_THAT(Claims(), IsEmpty());  // each released when its task ended

  CommandResult both = Cli({"run", "--kernel=saxpy", "--construct=target",
                            "--nodes=node3", "--count=2", "--require=gpu", "--",
                            "/bin/sh", "-c", "echo $CTXSEL_DEVICE"});
  ASSERT_EQ(both.exit_code, 0) << both.stderr_text;
  std::vector<std::string> lines =
      absl::StrSplit(both.stdout_text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0], lines[1]);
  EXPECT_THAT(Claims(), IsEmpty());
}

// Each code of the table (client/cli/command.h) from the case it names.
TEST_F(LaunchersE2E, EachExitCodeFromItsCase) {
  EXPECT_EQ(Cli(Select({"--nodes=node3"})).exit_code, 0);
  EXPECT_EQ(Cli(Select({"--nodes=nowhere"})).exit_code, 1);
  EXPECT_EQ(Cli(Select({"--count=-1"})).exit_code, 2);
  EXPECT_EQ(Cli(Select({"--holder=someone"})).exit_code, 2);
  std::vector<std::string> unreachable = CliArgs(Select({}));
  for (std::string& arg : unreachable) {
    if (absl::StartsWith(arg, "--server=")) arg = "--server=127.0.0.1:1";
  }
  CommandResult down = RunCommand(unreachable);
  EXPECT_EQ(down.exit_code, 3) << down.stderr_text;
  ASSERT_EQ(
      Cli(Select({"--nodes=node3", "--count=3", "--claim=1m", "--require=gpu"}))
          .exit_code,
      0);
  EXPECT_EQ(
      Cli(Select({"--nodes=node3", "--claim=1m", "--require=gpu"})).exit_code,
      4);
  // TLS at a plaintext server: the handshake fails, and retrying will not
  // mend it.
  std::vector<std::string> tls_args = CliArgs(Select({}));
  tls_args.erase(std::find(tls_args.begin(), tls_args.end(), "--insecure"));
  CommandResult tls = RunCommand(tls_args);
  EXPECT_EQ(tls.exit_code, 5) << tls.stderr_text;
  EXPECT_THAT(tls.stderr_text, HasSubstr("--ca (or $CTXSEL_CA)"));
  EXPECT_THAT(tls.stderr_text, HasSubstr("--insecure"));
}

// Credentials the server rejects exit 5, naming what to fix.
TEST(LaunchersSecurityE2E, RejectedCredentialsExitFive) {
  const std::string dir = MakeTempDir("pki");
  const std::string rogue = MakeTempDir("rogue");
  for (const std::string& d : {dir, rogue}) {
    CommandResult made =
        RunCommand({"/bin/bash", RunfilePath("tools/make_certs.sh"), d});
    ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
  }
  CommandResult token = RunCommand(
      {CliPath(), "admin", "token", "--role=reader", "--name=dashboard"});
  ASSERT_EQ(token.exit_code, 0) << token.stderr_text;
  std::ofstream(dir + "/tokens") << token.stderr_text;
  std::ofstream(dir + "/reader.token") << token.stdout_text;
  std::ofstream(dir + "/revoked.token") << "not-a-token-the-server-knows\n";
  auto server = ServerProcess::Start(
      {"--data_dir=" + MakeTempDir("data"), "--tls_cert=" + dir + "/server.pem",
       "--tls_key=" + dir + "/server.key", "--tokens_file=" + dir + "/tokens"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto cli = [&](const std::string& ca, const std::string& token_file,
                 const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        CliPath(), "--server=" + (*server)->address(), "--ca=" + ca,
        "--token_file=" + token_file};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  };
  const std::vector<std::string> select = {"select", "--kernel=saxpy"};
  CommandResult revoked = cli(dir + "/ca.pem", dir + "/revoked.token", select);
  EXPECT_EQ(revoked.exit_code, 5) << revoked.stderr_text;
  EXPECT_THAT(revoked.stderr_text, HasSubstr("UNAUTHENTICATED"));
  EXPECT_THAT(revoked.stderr_text,
              HasSubstr("--token_file (or $CTXSEL_TOKEN_FILE)"));
  CommandResult reader =
      cli(dir + "/ca.pem", dir + "/reader.token",
          {"variants", "register", "saxpy", "saxpy_nv=construct={target}"});
  EXPECT_EQ(reader.exit_code, 5) << reader.stderr_text;
  EXPECT_THAT(reader.stderr_text, HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(reader.stderr_text, HasSubstr("--token_file"));
  CommandResult wrong_ca =
      cli(rogue + "/ca.pem", dir + "/reader.token", select);
  EXPECT_EQ(wrong_ca.exit_code, 5) << wrong_ca.stderr_text;
  EXPECT_THAT(wrong_ca.stderr_text, HasSubstr("--ca (or $CTXSEL_CA)"));
}

// A rate limit is transient (exit 3), not "every device claimed" (4): told
// apart by ErrorInfo.reason RATE_LIMITED. Limits apply to authenticated
// principals, so the server runs TLS with tokens.
TEST(LaunchersRateLimitE2E, RateLimitIsTransient) {
  const std::string dir = MakeTempDir("pki");
  CommandResult made =
      RunCommand({"/bin/bash", RunfilePath("tools/make_certs.sh"), dir});
  ASSERT_EQ(made.exit_code, 0) << made.stderr_text;
  CommandResult token =
      RunCommand({CliPath(), "admin", "token", "--role=admin", "--name=dev"});
  ASSERT_EQ(token.exit_code, 0) << token.stderr_text;
  std::ofstream(dir + "/tokens") << token.stderr_text;
  std::ofstream(dir + "/dev.token") << token.stdout_text;
  auto server = ServerProcess::Start(
      {"--data_dir=" + MakeTempDir("data"), "--tls_cert=" + dir + "/server.pem",
       "--tls_key=" + dir + "/server.key", "--tokens_file=" + dir + "/tokens",
       "--max_registrations_per_minute=1"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto reg = [&] {
    return RunCommand({CliPath(), "--server=" + (*server)->address(),
                       "--ca=" + dir + "/ca.pem",
                       "--token_file=" + dir + "/dev.token", "variants",
                       "register", "saxpy", "saxpy_nv=construct={target}",
                       "--replace"});
  };
  CommandResult first = reg();
  EXPECT_EQ(first.exit_code, 0) << first.stderr_text;
  CommandResult limited = reg();
  EXPECT_EQ(limited.exit_code, 3) << limited.stderr_text;
  EXPECT_THAT(limited.stderr_text, HasSubstr("RESOURCE_EXHAUSTED"));
  EXPECT_THAT(limited.stderr_text, HasSubstr("slow down"));
}

}  // namespace
}  // namespace ctxsel::testing
