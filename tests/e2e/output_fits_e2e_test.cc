// Output that fits a terminal (issue 27): the real CLI against a real server
// whose fleet has the longest real class there is, a Sapphire Rapids CPU
// with every ISA trait the agent reports (tests/e2e/testdata/), beside H100,
// MI250X and PVC nodes (tools/fixtures/fleet/). Every command, and the help
// of every command, prints no line wider than 120 columns by default (help
// text: 79), names classes by their short names and layouts in the one
// layout form; -o wide still prints the full trait form.
#include <signal.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The Sapphire Rapids CPU's class, as the full form starts.
constexpr char kSprClass[] = "device={kind(cpu, host), arch(x86_64), isa(adx,";
constexpr char kSprShort[] = "x86_64_v4/amx";
constexpr char kSprLayout[] = "-1:x86_64_v4/amx,0-1:nvidia_gpu_sm_90";

class OutputFitsE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
    agents_ = new std::vector<std::unique_ptr<Subprocess>>;
    agent_log_ = new std::string(MakeTempDir("agent") + "/spr1.log");
    for (const auto& [node, file] :
         std::vector<std::pair<std::string, std::string>>{
             {"spr1", "tests/e2e/testdata/sapphire-rapids-h100.json"},
             {"mi1", "tools/fixtures/fleet/mi250x.json"},
             {"pvc1", "tools/fixtures/fleet/pvc.json"}}) {
      // The agents' --heartbeat is the default (5s), the server's 1s.
      auto agent = Subprocess::Start(
          {RunfilePath("agent/ctxsel-agent"), "--insecure",
           "--server=" + server_->address(), "--node_id=" + node,
           "--backends=", "--devices_file=" + RunfilePath(file)},
          "", node == "spr1" ? *agent_log_ : "");
      ASSERT_TRUE(agent.ok()) << agent.status();
      agents_->push_back(*std::move(agent));
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    for (CommandResult ls; absl::Now() < deadline;
         absl::SleepFor(absl::Milliseconds(50))) {
      ls = Cli({"devices", "ls", "-o", "name"});
      if (absl::StrContains(ls.stdout_text, "spr1/gpu1") &&
          absl::StrContains(ls.stdout_text, "mi1/gpu1") &&
          absl::StrContains(ls.stdout_text, "pvc1/gpu")) {
        break;
      }
    }
    // A static, a dynamic and a layout-dependent (target_device) variant:
    // explain and coverage then report classes per node layout.
    CommandResult reg =
        Cli({"variants", "register", "saxpy",
             "saxpy_nv=construct={target}, device={arch(nvptx)}",
             "saxpy_amd=construct={target}, device={arch(amdgcn)}, "
             "user={condition(N > 1024)}",
             "saxpy_tgt=construct={target}, "
             "target_device={device_num(0), kind(gpu)}",
             "saxpy_v100=construct={target}, device={isa(sm_70)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }
  static void TearDownTestSuite() {
    for (auto& agent : *agents_) agent->Signal(SIGTERM);
    for (auto& agent : *agents_) agent->Wait(std::chrono::seconds(5));
    delete agents_;
    delete agent_log_;
    delete server_;
  }

  static CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {RunfilePath("client/cli/ctxsel-cli"),
                               "--insecure", "--server=" + server_->address()});
    return RunCommand(args);
  }

  // Runs the CLI and checks that no line it printed is wider than `width`.
  static CommandResult Fits(std::vector<std::string> args, size_t width = 120) {
    CommandResult r = Cli(args);
    const std::string command = absl::StrJoin(args, " ");
    for (const std::string* text : {&r.stdout_text, &r.stderr_text}) {
      for (absl::string_view line : absl::StrSplit(*text, '\n')) {
        EXPECT_LE(line.size(), width)
            << "ctxsel-cli " << command << " printed a line of " << line.size()
            << " columns:\n"
            << line;
      }
    }
    return r;
  }

  static ServerProcess* server_;
  static std::vector<std::unique_ptr<Subprocess>>* agents_;
  static std::string* agent_log_;  // spr1's stderr
};

ServerProcess* OutputFitsE2E::server_ = nullptr;
std::vector<std::unique_ptr<Subprocess>>* OutputFitsE2E::agents_ = nullptr;
std::string* OutputFitsE2E::agent_log_ = nullptr;

// The agent logs the interval it follows, the server's 1 s; it logged its
// flag's 5 s.
TEST_F(OutputFitsE2E, AgentLogsTheHeartbeatItFollows) {
  std::ifstream in(*agent_log_);
  const std::string log(std::istreambuf_iterator<char>(in), {});
  EXPECT_THAT(log, HasSubstr("node spr1: heartbeat every 1s (server asks 1s, "
                             "--heartbeat=5s)"));
  EXPECT_THAT(log, Not(HasSubstr("heartbeat 5s")));
}

TEST_F(OutputFitsE2E, InventoryTablesFitAndWideShowsTheFullClass) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"nodes", "ls"},
        {"devices", "ls"},
        {"devices", "ls", "--device_filter=device={kind(cpu)}"},
        {"variants", "ls"},
        {"variants", "ls", "saxpy"},
        {"archs"},
        {"slurm", "gres-conf", "--node=spr1"},
        {"ping"},
        {"watch", "--initial", "--max_events=3"}}) {
    CommandResult r = Fits(args);
    EXPECT_EQ(r.exit_code, 0) << absl::StrJoin(args, " ") << r.stderr_text;
    EXPECT_THAT(r.stdout_text, Not(HasSubstr(kSprClass)));
  }
  EXPECT_THAT(Fits({"devices", "ls"}).stdout_text, HasSubstr(kSprShort));
  EXPECT_THAT(Cli({"devices", "ls", "-o", "wide"}).stdout_text,
              HasSubstr(kSprClass));
}

TEST_F(OutputFitsE2E, CoverageNamesClassesAndLayoutsShortly) {
  CommandResult one =
      Fits({"coverage", "--kernel=saxpy", "--construct=target"});
  ASSERT_EQ(one.exit_code, 0) << one.stderr_text;
  // The verdict depends on the layout (saxpy_tgt): a column names it.
  EXPECT_THAT(one.stdout_text, ::testing::ContainsRegex(absl::StrCat(
                                   "\n", kSprShort, " +", kSprLayout, " ")));
  EXPECT_THAT(one.stdout_text, Not(HasSubstr("device={")));
  for (std::vector<std::string> args :
       {std::vector<std::string>{"coverage", "--kernel=saxpy",
                                 "--construct=target", "--var=N=1,4096"},
        {"coverage", "--kernel=saxpy", "--construct_lists=target;target,teams",
         "--var=N=1,64,4096,1000000"},
        {"coverage", "--kernel=saxpy", "--construct=target",
         "--with=saxpy_all=construct={target}, device={kind(gpu)}",
         "--without=saxpy_nv",
         "--with_devices=" +
             RunfilePath("tests/e2e/testdata/sapphire-rapids-h100.json") +
             ":2"}}) {
    CommandResult r = Fits(args);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    EXPECT_THAT(r.stdout_text, Not(HasSubstr("device={kind")));
  }
  CommandResult wide =
      Cli({"coverage", "--kernel=saxpy", "--construct=target", "-o", "wide"});
  EXPECT_THAT(wide.stdout_text, HasSubstr(kSprClass));
}

TEST_F(OutputFitsE2E, SelectAndExplainNameClassesShortly) {
  CommandResult select =
      Fits({"select", "--kernel=saxpy", "--construct=target", "--var=N=4096"});
  ASSERT_EQ(select.exit_code, 0) << select.stderr_text;
  EXPECT_THAT(select.stdout_text, Not(HasSubstr("device={")));
  // The CPU's verdict depends on its layout: its explanation names it so.
  CommandResult cpu = Fits({"select", "--kernel=saxpy", "--construct=target",
                            "--var=N=4096", "--nodes=spr1", "--require=cpu"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.stderr_text;
  EXPECT_THAT(cpu.stdout_text, HasSubstr(absl::StrCat("[", kSprShort, "]")));
  EXPECT_THAT(cpu.stdout_text,
              HasSubstr(absl::StrCat("on layout ", kSprLayout)));
  EXPECT_THAT(
      Cli({"select", "--kernel=saxpy", "--construct=target", "--var=N=4096",
           "--nodes=spr1", "--require=cpu", "-o", "wide"})
          .stdout_text,
      HasSubstr(kSprClass));

  CommandResult explain =
      Fits({"explain", "--kernel=saxpy", "--construct=target", "--var=N=4096"});
  ASSERT_EQ(explain.exit_code, 0) << explain.stderr_text;
  EXPECT_THAT(explain.stdout_text,
              HasSubstr(absl::StrCat("device class ", kSprShort, " on layout ",
                                     kSprLayout, ":")));
  EXPECT_THAT(explain.stdout_text, Not(HasSubstr("device={kind")));
  CommandResult wide = Cli({"explain", "--kernel=saxpy", "--construct=target",
                            "--var=N=4096", "-o", "wide"});
  EXPECT_THAT(wide.stdout_text, HasSubstr(kSprClass));
}

// Select's FAILED_PRECONDITION says why for each class, by short name; it
// was 1,000+ characters of trait lists on one line.
TEST_F(OutputFitsE2E, NoPlacementNamesClassesShortly) {
  for (const char* command : {"select", "explain"}) {
    CommandResult r = Fits({command, "--kernel=saxpy", "--construct=target",
                            "--var=N=4096", "--nodes=spr1", "--require=fpga"});
    EXPECT_EQ(r.exit_code, 1) << r.stderr_text << r.stdout_text;
    const std::string all = r.stdout_text + r.stderr_text;
    EXPECT_THAT(all, HasSubstr(kSprShort)) << command;
    EXPECT_THAT(all, Not(HasSubstr("device={kind"))) << command;
  }
}

// --wait says what it waits for, once and then at most every 10 s.
TEST_F(OutputFitsE2E, ClaimsAndWaitingFit) {
  CommandResult both = Fits({"select", "--kernel=saxpy", "--construct=target",
                             "--var=N=4096", "--nodes=spr1", "--require=gpu",
                             "--count=2", "--claim=1m", "--holder=fits-test"});
  ASSERT_EQ(both.exit_code, 0) << both.stderr_text;
  EXPECT_EQ(Fits({"claims", "ls"}).exit_code, 0);
  CommandResult waited =
      Fits({"select", "--kernel=saxpy", "--construct=target", "--var=N=4096",
            "--nodes=spr1", "--require=gpu", "--claim=1m", "--wait=3s"});
  EXPECT_EQ(waited.exit_code, 4) << waited.stderr_text;
  EXPECT_THAT(waited.stderr_text, HasSubstr("ctxsel-cli: waiting until "));
  EXPECT_THAT(waited.stderr_text,
              HasSubstr("left) for 1 device for kernel 'saxpy' (claim 1m): "));
  EXPECT_EQ(Fits({"claims", "release", "--holder=fits-test"}).exit_code, 0);
}

// `help` and every command's --help, wrapped for an 80-column terminal; the
// completion scripts at 120.
TEST_F(OutputFitsE2E, HelpOfEveryCommandFits) {
  CommandResult help = Fits({"help"}, 79);
  ASSERT_EQ(help.exit_code, 0);
  // Each command's first usage line: "  NAME ..." under "commands:".
  std::vector<std::string> commands;
  bool listing = false;
  for (absl::string_view line : absl::StrSplit(help.stdout_text, '\n')) {
    if (line == "commands:") listing = true;
    if (line.empty()) listing = false;
    if (listing && absl::StartsWith(line, "  ") && line[2] != ' ') {
      std::string name(line.substr(2, line.find(' ', 2) - 2));
      if (commands.empty() || commands.back() != name) commands.push_back(name);
    }
  }
  EXPECT_GE(commands.size(), 15u) << help.stdout_text;
  for (const std::string& command : commands) {
    CommandResult r = Fits({command, "--help"}, 79);
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_THAT(r.stdout_text, HasSubstr("usage: ctxsel-cli " + command));
  }
  for (const char* shell : {"bash", "zsh", "fish"}) {
    CommandResult r = Fits({"completion", shell});
    EXPECT_EQ(r.exit_code, 0) << shell;
    EXPECT_THAT(r.stdout_text,
                ::testing::ContainsRegex("(--|-l )device_filter"))
        << shell;
  }
}

}  // namespace
}  // namespace ctxsel::testing
