// Runs the real ctxsel-cli on the fixture sources: `import` must find every
// variant of the OpenMP Examples' shapes (declare_variant 1-3,
// metadirective 1-5), nesting and every error; `archs` lists and resolves
// the SYCL catalog.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "selector/selector.h"
#include "tests/testing/subprocess.h"

namespace ctxsel {
namespace {

using ::ctxsel::testing::CommandResult;
using ::ctxsel::testing::RunCommand;
using ::ctxsel::testing::RunfilePath;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return RunfilePath("tests/sources/fixtures/" + name);
}

CommandResult Cli(std::vector<std::string> args) {
  args.insert(args.begin(), RunfilePath("client/cli/ctxsel-cli"));
  return RunCommand(args);
}

json Import(const std::string& fixture, int want_exit = 0) {
  CommandResult r = Cli({"import", Fixture(fixture)});
  EXPECT_EQ(r.exit_code, want_exit) << r.stderr_text;
  return json::parse(r.stdout_text);
}

std::string Canonical(
    const std::string& text,
    selector::Directive kind = selector::Directive::kDeclareVariant) {
  absl::StatusOr<selector::Selector> s = selector::Selector::Parse(text, kind);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? s->ToString() : "";
}

// "base variant selector line" per variant.
std::vector<std::string> Variants(const json& out) {
  std::vector<std::string> v;
  for (const json& x : out["variants"]) {
    v.push_back(x["base"].get<std::string>() + " " +
                x["variant"].get<std::string>() + " " +
                x["selector"].get<std::string>() + " " +
                std::to_string(x["location"]["line"].get<int>()));
  }
  return v;
}

TEST(ImportE2eTest, DeclareVariant1) {
  const std::string p = Canonical("construct={parallel}");
  const std::string t = Canonical("construct={target}");
  EXPECT_THAT(Variants(Import("declare_variant.1.c")),
              ElementsAre("vxv p_vxv " + p + " 9", "vxv t_vxv " + t + " 10"));
  EXPECT_THAT(Variants(Import("declare_variant.1.f90")),
              ElementsAre("vxv p_vxv " + p + " 8", "vxv t_vxv " + t + " 9"));
}

TEST(ImportE2eTest, DeclareVariant2) {
  const std::string isa = Canonical("device={isa(\"core-avx512\")}");
  EXPECT_THAT(Variants(Import("declare_variant.2.c")),
              ElementsAre("base_saxpy avx512_saxpy " + isa + " 8"));
  EXPECT_THAT(Variants(Import("declare_variant.2.f90")),
              ElementsAre("base_saxpy avx512_saxpy " + isa + " 6"));
}

TEST(ImportE2eTest, DeclareVariant3NestedRegions) {
  const json out = Import("declare_variant.3.c");
  ASSERT_EQ(out["variants"].size(), 2u);
  const json& nv = out["variants"][0];
  EXPECT_EQ(nv["base"], "my_fun");
  EXPECT_EQ(nv["directive"], "begin_declare_variant");
  EXPECT_EQ(nv["selector"],
            Canonical("implementation={vendor(nvidia)}, device={kind(gpu)}",
                      selector::Directive::kBeginDeclareVariant));
  EXPECT_EQ(nv["selector_text"], "implementation={vendor(nvidia)}");
  EXPECT_EQ(nv["enclosing_selectors"], json::array({"device={kind(gpu)}"}));
  EXPECT_EQ(nv["location"]["line"], 11);
  const json& amd = out["variants"][1];
  EXPECT_NE(nv["variant"], amd["variant"]);
  EXPECT_THAT(amd["variant"].get<std::string>(),
              ::testing::StartsWith("my_fun$ompvariant$"));
}

TEST(ImportE2eTest, NestedMetadataAndDeclareVariantInRegion) {
  const json out = Import("nested.cpp");
  ASSERT_EQ(out["variants"].size(), 4u);
  const json& dispatch = out["variants"][0];
  EXPECT_EQ(dispatch["base"], "blas::axpy");  // qualified by its namespace
  EXPECT_EQ(dispatch["variant"], "axpy_dispatch");
  EXPECT_EQ(dispatch["adjust_args"],
            json::parse(R"([{"op":"need_device_ptr","args":["x","y"]}])"));
  EXPECT_EQ(dispatch["append_args"],
            json::parse(R"([{"interop":["targetsync"]}])"));
  EXPECT_EQ(out["variants"][1]["selector"],
            Canonical("device={kind(gpu), arch(nvptx)}"));
  EXPECT_EQ(out["variants"][2]["selector"],
            Canonical("device={kind(gpu), arch(nvptx), isa(sm_90)}, "
                      "implementation={vendor(nvidia)}"));
  EXPECT_EQ(out["variants"][2]["enclosing_selectors"].size(), 2u);
  EXPECT_EQ(out["variants"][3]["variant"], "scale_amd");
  EXPECT_EQ(out["variants"][3]["selector"],
            Canonical("device={kind(gpu), arch(amdgcn)}"));
  EXPECT_TRUE(out["errors"].empty());
}

// "function: selector -> directive | ... | otherwise" per metadirective.
std::vector<std::string> Metadirectives(const json& out) {
  std::vector<std::string> v;
  for (const json& m : out["metadirectives"]) {
    std::string s = m["function"].get<std::string>() + ":";
    for (const json& w : m["when"]) {
      s += " " + w["selector"].get<std::string>() + " -> " +
           w["directive"].get<std::string>() + " |";
    }
    s += m["otherwise"].is_null()
             ? " (none)"
             : " " + m["otherwise_clause"].get<std::string>() + " " +
                   m["otherwise"].get<std::string>();
    v.push_back(s);
  }
  return v;
}

std::string Meta(const std::string& text) {
  return Canonical(text, selector::Directive::kMetadirective);
}

TEST(ImportE2eTest, Metadirectives1To5) {
  EXPECT_THAT(Metadirectives(Import("metadirective.1.c")),
              ElementsAre("main: " + Meta("device={arch(\"nvptx\")}") +
                          " -> teams loop | otherwise parallel loop"));
  EXPECT_THAT(
      Metadirectives(Import("metadirective.2.c")),
      ElementsAre(
          "main: " +
          Meta("implementation={vendor(nvidia)}, device={arch(\"kepler\")}") +
          " -> teams num_teams(512) thread_limit(32) | " +
          Meta("implementation={vendor(amd)}, device={arch(\"fiji\")}") +
          " -> teams num_teams(512) thread_limit(64) | otherwise teams"));
  EXPECT_THAT(Metadirectives(Import("metadirective.3.c")),
              ElementsAre("exp_pi_diff: " + Meta("construct={target}") +
                          " -> distribute parallel for | otherwise parallel "
                          "for simd"));
  EXPECT_THAT(
      Metadirectives(Import("metadirective.4.c")),
      ElementsAre(
          "foo: " + Meta("user={condition(use_gpu)}") +
              " -> target teams distribute parallel for private(b) "
              "map(from:a[0:n]) | otherwise parallel for",
          "bar: " + Meta("user={condition(run_parallel)}") +
              " -> parallel | default nothing",
          "bar: " + Meta("construct={parallel}, user={condition(unbalanced)}") +
              " -> for schedule(guided) private(b) | " +
              Meta("construct={parallel}") +
              " -> for schedule(static) | "
              "(none)"));
  const std::string tasking = Meta("user={condition(tasking && n > 8)}");
  EXPECT_THAT(Metadirectives(Import("metadirective.5.cpp")),
              ElementsAre("fib: " + tasking + " -> task shared(i) | otherwise ",
                          "fib: " + tasking + " -> task shared(j) | otherwise ",
                          "fib: " + tasking + " -> taskwait | (none)"));
}

TEST(ImportE2eTest, ErrorsExitTwoAndNameFileLineColumn) {
  CommandResult r = Cli({"import", Fixture("errors.c"), Fixture("errors.f90")});
  EXPECT_EQ(r.exit_code, 2);
  const std::string c = Fixture("errors.c"), f = Fixture("errors.f90");
  EXPECT_THAT(r.stderr_text,
              HasSubstr(c + ":2:1: end declare variant without a matching "
                            "begin declare variant"));
  EXPECT_THAT(r.stderr_text,
              HasSubstr(c + ":4:1: declare variant has no match clause"));
  EXPECT_THAT(r.stderr_text,
              HasSubstr(c + ":7:61: trait selector 'kind' given twice"));
  EXPECT_THAT(r.stderr_text, HasSubstr(c + ":10:1: declare variant is not "
                                           "followed by a function"));
  EXPECT_THAT(r.stderr_text, HasSubstr(c + ":13:1: begin declare variant is "
                                           "never closed"));
  EXPECT_THAT(r.stderr_text, HasSubstr(f + ":2:1: declare variant without "
                                           "base-proc-name"));
  EXPECT_THAT(r.stderr_text, HasSubstr(f + ":4:34: unknown trait set 'devic'"));
  const json out = json::parse(r.stdout_text);
  EXPECT_EQ(out["errors"].size(), 7u);
  EXPECT_EQ(out["errors"][0]["location"]["line"], 2);
  EXPECT_EQ(out["variants"].size(), 1u);  // h, inside the unclosed region
}

TEST(ImportE2eTest, UnreadableFileAndNoArguments) {
  EXPECT_EQ(Cli({"import", "/nonexistent/x.c"}).exit_code, 2);
  EXPECT_EQ(Cli({"import"}).exit_code, 2);
}

TEST(ArchsE2eTest, ListsAndResolves) {
  CommandResult all = Cli({"--json", "archs"});
  ASSERT_EQ(all.exit_code, 0) << all.stderr_text;
  const json list = json::parse(all.stdout_text);
  // x86_64, 21 intel, 15 nvidia (with sm_90a), 41 amd.
  EXPECT_EQ(list.size(), 78u);
  CommandResult one = Cli({"--json", "archs", "intel_gpu_9_0_9"});
  ASSERT_EQ(one.exit_code, 0) << one.stderr_text;
  const json skl = json::parse(one.stdout_text);
  EXPECT_EQ(skl["name"], "intel_gpu_skl");
  EXPECT_EQ(skl["macro"], "__SYCL_TARGET_INTEL_GPU_SKL__");
  EXPECT_EQ(skl["traits"]["isa"], json::array({"skl"}));
  CommandResult sm90a = Cli({"--json", "archs", "nvidia_gpu_sm_90a"});
  EXPECT_EQ(json::parse(sm90a.stdout_text)["runs_on"], "nvidia_gpu_sm_90");
  CommandResult text = Cli({"archs", "amd_gpu_gfx90a"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_THAT(text.stdout_text, HasSubstr("__SYCL_TARGET_AMD_GPU_GFX90A__"));
  CommandResult bad = Cli({"archs", "nvidia_gpu_sm_91"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.stderr_text,
              HasSubstr("unknown SYCL architecture 'nvidia_gpu_sm_91'; "
                        "nearest: nvidia_gpu_sm_90"));
}

}  // namespace
}  // namespace ctxsel
