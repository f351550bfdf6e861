// The launcher contract end to end: a real ctxsel-agent reports a mixed node
// (one NVIDIA, one Intel, one AMD GPU; tools/fixtures/fleet/mixed.json) to a
// real ctxsel-server, and the real ctxsel-cli answers a shell launcher:
// each vendor's GPU is its runtime's device 0, `--format=env` exports reach a
// child process, a failed select stops a `set -e` script, and the issue's
// typos exit 2 naming the word.
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

class LauncherE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto agent = Subprocess::Start(
        {RunfilePath("agent/ctxsel-agent"), "--insecure",
         "--server=" + server_->address(), "--node_id=mixed", "--backends=",
         "--devices_file=" + RunfilePath("tools/fixtures/fleet/mixed.json")});
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    // Until the node's four devices are listed.
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      CommandResult ls = Cli({"devices", "ls", "--json"});
      if (ls.exit_code == 0 &&
          ls.stdout_text.find("mixed/gpu2") != std::string::npos) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    CommandResult reg =
        Cli({"variants", "register", "saxpy",
             "saxpy_nv=construct={target}, device={arch(nvptx)}",
             "saxpy_pvc=construct={target}, device={arch(intel_gpu_pvc)}",
             "saxpy_amd=construct={target}, device={arch(amdgcn)}, "
             "user={condition(N > 1024)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }
  void TearDown() override {
    if (agent_ && agent_->Running()) agent_->Signal(SIGTERM);
    if (agent_) agent_->Wait(std::chrono::seconds(5));
  }
  std::vector<std::string> CliArgs(std::vector<std::string> args) {
    args.insert(args.begin(),
                {CliPath(), "--insecure", "--server=" + server_->address()});
    return args;
  }
  CommandResult Cli(std::vector<std::string> args) {
    return RunCommand(CliArgs(std::move(args)));
  }
  // `script` run by /bin/sh with $CLI set to the CLI and its --server flag.
  CommandResult Shell(const std::string& script) {
    return RunCommand({"/bin/sh", "-c",
                       absl::StrCat("CLI='", CliPath(), " --insecure --server=",
                                    server_->address(), "'\n", script)});
  }

  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Subprocess> agent_;
};

TEST_F(LauncherE2E, EachVendorsGpuIsItsRuntimesDeviceZero) {
  const struct {
    const char* filter;
    const char* variant;
    const char* visibility;
  } cases[] = {
      {"device={vendor(nvidia)}", "saxpy_nv",
       "export CUDA_VISIBLE_DEVICES='0'"},
      {"device={vendor(intel)}", "saxpy_pvc", "export ZE_AFFINITY_MASK='0'"},
      {"device={vendor(amd), kind(gpu)}", "saxpy_amd",
       "export ROCR_VISIBLE_DEVICES='0'"},
  };
  for (const auto& c : cases) {
    CommandResult env =
        Cli({"select", "--kernel=saxpy", "--construct=target", "--var=N=4096",
             std::string("--device_filter=") + c.filter, "--format=env"});
    ASSERT_EQ(env.exit_code, 0) << c.filter << ": " << env.stderr_text;
    EXPECT_THAT(
        env.stdout_text,
        HasSubstr(absl::StrCat("export CTXSEL_VARIANT='", c.variant, "'")));
    EXPECT_THAT(env.stdout_text, HasSubstr(c.visibility)) << c.filter;
    EXPECT_THAT(env.stdout_text, HasSubstr("export OMP_DEFAULT_DEVICE='0'"));
  }
}

TEST_F(LauncherE2E, ExportsReachAChildAndFailureStopsSetE) {
  CommandResult child = Shell(
      "set -e\n"
      "env=\"$($CLI select --kernel=saxpy --construct=target --var=N=4096 "
      "--device_filter='device={vendor(intel)}' --format=env)\"\n"
      "eval \"$env\"\n"
      "/bin/sh -c 'echo \"$CTXSEL_VARIANT $ZE_AFFINITY_MASK\"'\n");
  ASSERT_EQ(child.exit_code, 0) << child.stderr_text;
  EXPECT_EQ(child.stdout_text, "saxpy_pvc 0\n");

  CommandResult failed = Shell(
      "set -e\n"
      "env=\"$($CLI select --kernel=nope --format=env)\"\n"
      "eval \"$env\"\n"
      "echo launched\n");
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_EQ(failed.stdout_text, "");
  CommandResult direct = Cli({"select", "--kernel=nope", "--format=env"});
  EXPECT_EQ(direct.exit_code, 2);
  EXPECT_EQ(direct.stdout_text, "");
}

TEST_F(LauncherE2E, TyposExitTwoNamingTheWord) {
  CommandResult spaced =
      Cli({"select", "--kernel=saxpy",
           "--construct=target, teams, parallel, for", "--var=N=4096"});
  EXPECT_EQ(spaced.exit_code, 0) << spaced.stderr_text;
  const struct {
    std::vector<std::string> flags;
    const char* word;
  } typos[] = {
      {{"--construct=target,paralel", "--var=N=1"}, "'paralel'"},
      {{"--construct=tget", "--var=N=1"}, "'tget'"},
      {{"--requires=unified_shared_mem", "--var=N=1"}, "'unified_shared_mem'"},
      {{"--var=n=4096"}, "missing N ('n' was given"},
  };
  for (const auto& t : typos) {
    std::vector<std::string> args = {"select", "--kernel=saxpy"};
    args.insert(args.end(), t.flags.begin(), t.flags.end());
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << t.word << ": " << r.stderr_text;
    EXPECT_THAT(r.stderr_text, HasSubstr(t.word));
    EXPECT_EQ(r.stdout_text, "");
  }
}

}  // namespace
}  // namespace ctxsel::testing
