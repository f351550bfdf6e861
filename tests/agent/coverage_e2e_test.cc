// Coverage end to end (docs/coverage.md): real ctxsel-agent processes report
// mixed simulated nodes (an H100 DGX, an MI250X node and a PVC node from
// tools/fixtures/fleet/) to a real ctxsel-server, and `ctxsel-cli coverage`
// reports a kernel with a static (H100), a dynamic (MI250X) and a base-only
// (PVC, every CPU) outcome, a matrix over N, what-if variant sets and
// hypothetical nodes; every command of docs/coverage.md runs here.
#include <signal.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

class CoverageE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    for (const auto& [node, file] :
         std::vector<std::pair<std::string, std::string>>{
             {"dgx1", "dgx-h100.json"},
             {"mi1", "mi250x.json"},
             {"pvc1", "pvc.json"}}) {
      auto agent = Subprocess::Start(
          {RunfilePath("agent/ctxsel-agent"), "--insecure",
           "--server=" + server_->address(), "--node_id=" + node, "--backends=",
           "--devices_file=" + RunfilePath("tools/fixtures/fleet/" + file)});
      ASSERT_TRUE(agent.ok()) << agent.status();
      agents_.push_back(*std::move(agent));
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      CommandResult ls = Cli({"nodes", "ls", "--json"});
      if (ls.exit_code == 0 && absl::StrContains(ls.stdout_text, "dgx1") &&
          absl::StrContains(ls.stdout_text, "mi1") &&
          absl::StrContains(ls.stdout_text, "pvc1")) {
        break;
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    CommandResult reg =
        Cli({"variants", "register", "saxpy",
             "saxpy_nv=construct={target}, device={arch(nvptx)}",
             "saxpy_amd=construct={target}, device={arch(amdgcn)}, "
             "user={condition(N > 1024)}",
             "saxpy_v100=construct={target}, device={isa(sm_70)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }
  void TearDown() override {
    for (auto& agent : agents_) {
      if (agent->Running()) agent->Signal(SIGTERM);
    }
    for (auto& agent : agents_) agent->Wait(std::chrono::seconds(5));
  }
  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }
  json Coverage(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"coverage", "--kernel=saxpy"});
    flags.push_back("--o=json");
    CommandResult r = Cli(flags);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return json::parse(r.stdout_text, nullptr, /*allow_exceptions=*/false);
  }
  // `script` run by /bin/sh in the runfiles root (where tools/fixtures/
  // lies), with `ctxsel-cli` standing for the CLI and its --server flag.
  CommandResult Shell(const std::string& script) {
    const std::string root = absl::StrCat(
        RunfilePath("tools/fixtures/coverage/saxpy_next.c"), "/../../../..");
    return RunCommand(
        {"/bin/sh", "-c",
         absl::StrCat(
             "cd '", root, "'\n",
             absl::StrReplaceAll(
                 script, {{"ctxsel-cli ",
                           absl::StrCat(CliPath(), " --insecure --server=",
                                        server_->address(), " ")}}))});
  }

  // The class whose name contains `arch`, at point `p`.
  static json ClassOf(const json& point, const std::string& arch) {
    for (const json& c : point["classes"]) {
      if (absl::StrContains(c["device_class"].get<std::string>(), arch)) {
        return c;
      }
    }
    ADD_FAILURE() << "no class with " << arch;
    return json::object();
  }

  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<Subprocess>> agents_;
};

TEST_F(CoverageE2E, StaticDynamicAndBaseOnlyClasses) {
  json r = Coverage({"--construct=target"});
  ASSERT_TRUE(r.is_object());
  ASSERT_EQ(r["points"].size(), 1u);
  const json& p = r["points"][0];
  EXPECT_EQ(ClassOf(p, "sm_90")["outcome"], "COVERAGE_OUTCOME_VARIANT");
  EXPECT_EQ(ClassOf(p, "sm_90")["variant"], "saxpy_nv");
  EXPECT_EQ(ClassOf(p, "sm_90")["node_count"], 1);
  const json amd = ClassOf(p, "gfx90a");
  EXPECT_EQ(amd["outcome"], "COVERAGE_OUTCOME_DEPENDS_ON_VARIABLES");
  ASSERT_EQ(amd["deciding"].size(), 1u);
  EXPECT_EQ(amd["deciding"][0]["variant"], "saxpy_amd");
  EXPECT_THAT(amd["deciding"][0]["selector"].get<std::string>(),
              HasSubstr("N > 1024"));
  EXPECT_EQ(ClassOf(p, "intel_gpu_pvc")["outcome"],
            "COVERAGE_OUTCOME_BASE_ONLY");
  EXPECT_EQ(p["node_count"], 3);
  EXPECT_GT(p["base_only_share"].get<double>(), 0.0);
  EXPECT_EQ(r["dead_variants"], json::array({"saxpy_v100"}));

  CommandResult table =
      Cli({"coverage", "--kernel=saxpy", "--construct=target"});
  ASSERT_EQ(table.exit_code, 0) << table.stderr_text;
  EXPECT_THAT(table.stdout_text,
              HasSubstr("depends on variables: saxpy_amd, else base"));
  EXPECT_THAT(table.stdout_text, HasSubstr("base only"));
  EXPECT_THAT(table.stdout_text,
              HasSubstr("dead variants (no live device gets them): "
                        "saxpy_v100"));
}

TEST_F(CoverageE2E, MatrixShowsWhereTheConditionTakesOver) {
  json r = Coverage({"--construct=target", "--var=N=1,1024,1025,1000000"});
  ASSERT_EQ(r["points"].size(), 4u);
  std::vector<std::string> amd;
  for (const json& p : r["points"]) {
    amd.push_back(ClassOf(p, "gfx90a")["variant"].get<std::string>());
  }
  EXPECT_THAT(amd, ElementsAre("", "", "saxpy_amd", "saxpy_amd"));
  // A variable the selectors read is missing: rejected as for select.
  CommandResult missing =
      Cli({"coverage", "--kernel=saxpy", "--construct=target", "--var=M=1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.stderr_text, HasSubstr("\n  field job.variables: "));
  EXPECT_THAT(missing.stderr_text, HasSubstr("\n  reason FIELD_INVALID\n"));
}

TEST_F(CoverageE2E, WhatIfShadowingVariantShowsTheClassesThatSwitch) {
  json r = Coverage({"--construct=target", "--var=N=4096", "--from_source",
                     RunfilePath("tools/fixtures/coverage/saxpy_next.c")});
  ASSERT_TRUE(r.is_object());
  EXPECT_TRUE(r["what_if"].get<bool>());
  const json& p = r["points"][0];
  ASSERT_EQ(p["changes"].size(), 1u) << p["changes"].dump();
  EXPECT_THAT(p["changes"][0]["device_class"].get<std::string>(),
              HasSubstr("sm_90"));
  EXPECT_EQ(p["changes"][0]["before"], "saxpy_nv");
  EXPECT_EQ(p["changes"][0]["after"], "saxpy_h100");
  // Nothing was stored.
  CommandResult ls = Cli({"variants", "ls", "saxpy"});
  EXPECT_THAT(ls.stdout_text, Not(HasSubstr("saxpy_h100")));

  json without =
      Coverage({"--construct=target", "--var=N=4096", "--without=saxpy_nv"});
  ASSERT_EQ(without["points"][0]["changes"].size(), 1u);
  EXPECT_TRUE(
      without["points"][0]["changes"][0]["gains_base_only"].get<bool>());
}

TEST_F(CoverageE2E, HypotheticalNodesJoinTheirClass) {
  json r = Coverage(
      {"--construct=target", "--var=N=4096",
       "--with_devices=" + RunfilePath("tools/fixtures/fleet/mi250x.json") +
           ":16"});
  ASSERT_TRUE(r.is_object());
  const json& p = r["points"][0];
  const json amd = ClassOf(p, "gfx90a");
  EXPECT_EQ(amd["device_count"], 2 + 2 * 16);
  EXPECT_EQ(amd["node_count"], 17);
  EXPECT_TRUE(amd["hypothetical"].get<bool>());
  EXPECT_EQ(amd["variant"], "saxpy_amd");
  EXPECT_EQ(p["node_count"], 19);
  // The live fleet is unchanged.
  CommandResult nodes = Cli({"nodes", "ls"});
  EXPECT_THAT(nodes.stdout_text, Not(HasSubstr("what-if")));
}

// Every command in the ```sh blocks of docs/coverage.md exits 0; the CI
// step fails for a change that leaves a class on the base function.
TEST_F(CoverageE2E, DocumentedCommandsRun) {
  std::ifstream in(RunfilePath("docs/coverage.md"));
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> commands;
  bool in_sh = false;
  for (absl::string_view line : absl::StrSplit(text.str(), '\n')) {
    if (absl::StartsWith(line, "```")) {
      in_sh = !in_sh && line == "```sh";
      continue;
    }
    if (in_sh && absl::StartsWith(line, "ctxsel-cli ")) {
      commands.emplace_back(line);
    }
  }
  ASSERT_GE(commands.size(), 8u);
  std::string ci;
  for (const std::string& command : commands) {
    CommandResult r = Shell(command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.stderr_text;
    EXPECT_NE(r.stdout_text, "") << command;
    std::cerr << "$ " << command << "\n" << r.stdout_text;
    if (absl::StrContains(command, "| jq")) ci = command;
  }
  ASSERT_NE(ci, "");
  const std::string breaking = absl::StrReplaceAll(
      ci, {{"--from_source tools/fixtures/coverage/saxpy_next.c",
            "--without=saxpy_nv"}});
  ASSERT_NE(breaking, ci);
  EXPECT_EQ(Shell(breaking).exit_code, 1);
}

}  // namespace
}  // namespace ctxsel::testing
