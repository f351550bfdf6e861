// Runs `ctxsel-cli import` on every file of tests/sources/corpus (C, C++,
// free- and fixed-form Fortran in the shapes of the OpenMP Examples, SOLLVE
// V&V, the GCC/LLVM test suites and LLVM's device runtime, written for
// these tests). Each file states what it must import in comments:
//   expect: BASE VARIANT         a variant, in order (VARIANT may be a prefix
//                                ending in `$`, for begin/end regions)
//   expect-meta: FUNCTION        a metadirective in FUNCTION
//   expect-error: LINE           an error on LINE
//   expect-warning: LINE         a warning on LINE
// and nothing else may come out.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel {
namespace {

using ::ctxsel::testing::CliPath;
using ::ctxsel::testing::CommandResult;
using ::ctxsel::testing::RunCommand;
using ::ctxsel::testing::RunfilePath;
using ::ctxsel::testing::ServerProcess;
using nlohmann::json;
using ::testing::HasSubstr;

struct Expected {
  std::vector<std::string> variants, metadirectives, errors, warnings;
};

Expected ReadExpectations(const std::string& path) {
  std::ifstream in(path);
  Expected e;
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view t = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&t, "//") && !absl::ConsumePrefix(&t, "!") &&
        !absl::ConsumePrefix(&t, "C ")) {
      continue;
    }
    t = absl::StripAsciiWhitespace(t);
    std::pair<const char*, std::vector<std::string>*> kinds[] = {
        {"expect:", &e.variants},
        {"expect-meta:", &e.metadirectives},
        {"expect-error:", &e.errors},
        {"expect-warning:", &e.warnings}};
    for (auto& [prefix, out] : kinds) {
      if (absl::ConsumePrefix(&t, prefix)) {
        out->push_back(std::string(absl::StripAsciiWhitespace(t)));
      }
    }
  }
  return e;
}

std::vector<std::string> Lines(const json& list) {
  std::vector<std::string> out;
  for (const json& x : list) {
    out.push_back(std::to_string(x["location"]["line"].get<int>()));
  }
  return out;
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(
           RunfilePath("tests/sources/corpus"))) {
    files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CorpusTest, EveryFileImportsWhatItStates) {
  const std::vector<std::string> files = CorpusFiles();
  ASSERT_GE(files.size(), 30u);
  int c = 0, cpp = 0, free_form = 0, fixed_form = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const Expected want = ReadExpectations(file);
    CommandResult r = RunCommand({CliPath(), "import", file});
    EXPECT_EQ(r.exit_code, want.errors.empty() ? 0 : 2) << r.stderr_text;
    const json out = json::parse(r.stdout_text);
    std::vector<std::string> variants;
    for (const json& v : out["variants"]) {
      std::string variant = v["variant"];
      const size_t mark = variant.find("$ompvariant$");
      if (mark != std::string::npos) variant.resize(mark + 12);
      variants.push_back(v["base"].get<std::string>() + " " + variant);
    }
    EXPECT_EQ(variants, want.variants);
    std::vector<std::string> metas;
    for (const json& m : out["metadirectives"]) metas.push_back(m["function"]);
    EXPECT_EQ(metas, want.metadirectives);
    EXPECT_EQ(Lines(out["errors"]), want.errors) << r.stderr_text;
    EXPECT_EQ(Lines(out["warnings"]), want.warnings) << r.stderr_text;
    const std::string ext = std::filesystem::path(file).extension();
    if (ext == ".c") ++c;
    if (ext == ".cpp") ++cpp;
    if (ext == ".f90" || ext == ".F90") ++free_form;
    if (ext == ".f" || ext == ".F" || ext == ".for") ++fixed_form;
  }
  EXPECT_GE(c, 10);
  EXPECT_GE(cpp, 5);
  EXPECT_GE(free_form, 4);
  EXPECT_GE(fixed_form, 3);
}

TEST(CorpusTest, DefineSelectsTheOtherBranch) {
  CommandResult r =
      RunCommand({CliPath(), "import", "--define=USE_CUDA",
                  RunfilePath("tests/sources/corpus/ifdef_alternatives.c")});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_THAT(json::parse(r.stdout_text)["variants"][0]["selector"].dump(),
              HasSubstr("nvptx"));
  r = RunCommand({CliPath(), "import", "--undefine=_OPENMP",
                  RunfilePath("tests/sources/corpus/if_version.c")});
  EXPECT_EQ(json::parse(r.stdout_text)["variants"][0]["variant"], "k_50");
  r = RunCommand({CliPath(), "import", "--fortran_form=fixed",
                  RunfilePath("tests/sources/corpus/dv_vxv.f90")});
  EXPECT_EQ(json::parse(r.stdout_text)["variants"].size(), 0u);
  EXPECT_EQ(RunCommand({CliPath(), "import", "--fortran_form=odd",
                        RunfilePath("tests/sources/corpus/dv_vxv.f90")})
                .exit_code,
            2);
}

class RegisterFromSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ServerProcess::Start(
        {"--data_dir=" + std::string(std::getenv("TEST_TMPDIR")) + "/" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  CommandResult Cli(std::vector<std::string> args) {
    return ctxsel::testing::RunCli(server_->address(), std::move(args));
  }
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(RegisterFromSourceTest, KeepGoingRegistersTheValidKernels) {
  const std::string bad =
      RunfilePath("tests/sources/corpus/errors_keep_going.c");
  const std::string ok = RunfilePath("tests/sources/corpus/dv_vxv.c");
  // Without --keep_going one bad directive blocks everything.
  CommandResult all = Cli({"variants", "register", "--from_source", bad, ok});
  EXPECT_EQ(all.exit_code, 2);
  EXPECT_THAT(all.stderr_text, HasSubstr(bad + ":6:64:"));
  EXPECT_EQ(Cli({"variants", "ls", "vxv"}).stdout_text.find("p_vxv"),
            std::string::npos);

  CommandResult some =
      Cli({"variants", "register", "--from_source", "--keep_going", bad, ok});
  EXPECT_EQ(some.exit_code, 2);
  EXPECT_THAT(some.stderr_text, HasSubstr(bad + ":6:64:"));
  EXPECT_THAT(some.stderr_text, HasSubstr("skipped bad"));
  EXPECT_THAT(some.stdout_text, HasSubstr("registered 1 variant(s) of good"));
  EXPECT_THAT(some.stdout_text, HasSubstr("registered 2 variant(s) of vxv"));
  CommandResult listed = Cli({"variants", "ls"});
  EXPECT_THAT(listed.stdout_text, HasSubstr("good_gpu"));
  EXPECT_EQ(listed.stdout_text.find("bad_gpu"), std::string::npos);

  // Re-registering with --replace keeps the declaration order.
  ASSERT_EQ(
      Cli({"variants", "register", "--from_source", "--replace", ok}).exit_code,
      0);
  CommandResult order = Cli({"--json", "variants", "ls", "vxv"});
  const json variants = json::parse(order.stdout_text)["variants"];
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0]["name"], "p_vxv");
  EXPECT_EQ(variants[1]["name"], "t_vxv");

  // One call removes a whole kernel.
  CommandResult rm = Cli({"variants", "rm", "vxv", "--all_variants"});
  EXPECT_EQ(rm.exit_code, 0) << rm.stderr_text;
  EXPECT_EQ(Cli({"variants", "ls", "vxv"}).stdout_text.find("p_vxv"),
            std::string::npos);
  EXPECT_EQ(Cli({"variants", "rm", "vxv", "--all_variants"}).exit_code,
            Cli({"variants", "rm", "vxv", "nope"}).exit_code);
}

}  // namespace
}  // namespace ctxsel
