#include "client/cli/eval_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(EvalTest, IssueExampleDocument) {
  EvalOutcome out = EvaluateDocument(R"({
    "directive": "metadirective",
    "context": {"construct": ["target", "teams", "parallel", "for",
                              {"name": "simd", "simdlen": 8,
                               "aligned": {"a": 64}, "notinbranch": true}],
                "device": {"kind": ["gpu", "nohost"], "arch": ["nvptx"],
                           "isa": ["sm_70"], "vendor": ["nvidia"]},
                "target_devices": {"default": 0, "devices": {
                    "0": {"kind": ["gpu", "nohost"], "arch": ["nvptx"],
                          "isa": ["sm_70"]},
                    "-1": {"kind": ["host", "cpu"], "arch": ["x86_64"],
                           "isa": []}}},
                "implementation": {"vendor": ["llvm"],
                                   "requires": ["unified_shared_memory"],
                                   "atomic_default_mem_order": "seq_cst",
                                   "extension": []},
                "variables": {"N": 64}},
    "variants": [{"name": "fx1", "selector": "construct={target}"},
                 {"name": "big", "selector": "user={condition(N > 32)}, target_device={device_num(-1), kind(host)}"},
                 {"name": "simd", "selector": "construct={simd}, device={isa(sm_70)}"}]})");
  ASSERT_EQ(out.exit_code, 0) << out.output.dump();
  EXPECT_EQ(out.output["selected"], "simd");
  // simd@5 = 16, isa 2^(5+2) = 128, + 1.
  EXPECT_EQ(out.output["score"], 145);
  ASSERT_EQ(out.output["candidates"].size(), 3u);
  EXPECT_EQ(out.output["candidates"][0]["score"], 2);
  EXPECT_EQ(out.output["candidates"][1]["dynamic"], true);
  EXPECT_THAT(out.text, HasSubstr("selected: simd (score 145)"));
}

TEST(EvalTest, BaseFunctionIsNull) {
  EvalOutcome out = EvaluateDocument(
      R"({"variants": [{"name": "a", "selector": "device={kind(gpu)}"}]})");
  ASSERT_EQ(out.exit_code, 0);
  EXPECT_TRUE(out.output["selected"].is_null());
  EXPECT_EQ(out.output["candidates"][0]["reason"],
            "device.kind: gpu not in {}");
}

TEST(EvalTest, RuntimeOnlyCandidatesAreNamedNotSelected) {
  EvalOutcome out = EvaluateDocument(R"({"variants": [
      {"name": "tuned", "selector": "user={condition(score(5): tuned(x))}"},
      {"name": "plain", "selector": "user={condition(score(1): 1)}"}]})");
  ASSERT_EQ(out.exit_code, 0) << out.output.dump();
  EXPECT_EQ(out.output["selected"], "plain");
  EXPECT_EQ(out.output["runtime_only"], json::array({"tuned"}));
  EXPECT_EQ(out.output["candidates"][0]["runtime_only"], true);
  EXPECT_EQ(out.output["candidates"][0]["reason"],
            "runtime-only condition(tuned(x)): the program decides");
  EXPECT_THAT(out.text, HasSubstr("not chosen: runtime-only condition"));
}

TEST(EvalTest, InvalidSelectorIsReportedWithPosition) {
  EvalOutcome out = EvaluateDocument(
      R"({"variants": [{"name": "v1", "selector": "device={kind(score(1): gpu)}"}]})");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.output["error"]["variant"], "v1");
  EXPECT_EQ(out.output["error"]["line"], 1);
  EXPECT_EQ(out.output["error"]["column"], 14);
  EXPECT_EQ(out.output["error"]["message"],
            "score() is not allowed in the device trait set");
}

TEST(EvalTest, DirectiveChangesTheRules) {
  EvalOutcome out = EvaluateDocument(
      R"({"directive": "begin_declare_variant",
          "variants": [{"name": "v", "selector": "construct={simd}"}]})");
  EXPECT_EQ(out.exit_code, 2);
  out = EvaluateDocument(R"({"directive": "pragma", "variants": []})");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_THAT(out.output["error"]["message"].get<std::string>(),
              HasSubstr("unknown directive"));
}

TEST(EvalTest, MalformedInput) {
  EvalOutcome out = EvaluateDocument("{\n  \"variants\": [,]}");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.output["error"]["line"], 2);
  EXPECT_TRUE(out.output["error"]["variant"].is_null());
  out = EvaluateDocument(R"({"context": {"devcie": {}}})");
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_THAT(out.output["error"]["message"].get<std::string>(),
              HasSubstr("unknown field 'devcie' in context"));
  out = EvaluateDocument(R"({"context": {"variables": {"N": "x"}}})");
  EXPECT_EQ(out.exit_code, 2);
  out = EvaluateDocument(R"({"variants": [{"name": 3, "selector": "x"}]})");
  EXPECT_EQ(out.exit_code, 2);
  out = EvaluateDocument(R"([1, 2])");
  EXPECT_EQ(out.exit_code, 2);
}

// Two kernels' variants: saxpy_gpu would win over every gemm variant.
constexpr char kTwoKernels[] = R"({
    "context": {"device": {"kind": ["gpu"]},
                "implementation": {"vendor": ["llvm"]}},
    "variants": [
      {"name": "saxpy_gpu", "kernel": "saxpy",
       "selector": "device={kind(gpu)}, implementation={vendor(score(100): llvm)}"},
      {"name": "gemm_gpu", "kernel": "gemm", "selector": "device={kind(gpu)}"},
      {"name": "gemm_cpu", "kernel": "gemm", "selector": "device={kind(cpu)}"},
      {"name": "any_gpu", "selector": "device={kind(gpu)}, user={condition(1)}"}]})";

json WithKernel(const char* document, const json& kernel) {
  json doc = json::parse(document);
  doc["kernel"] = kernel;
  return doc;
}

TEST(EvalKernelTest, SeveralKernelsNeedAChoice) {
  EvalOutcome out = EvaluateDocument(kTwoKernels);
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.output["error"]["message"],
            "the variants belong to several kernels (gemm, saxpy): choose one "
            "with --kernel or \"kernel\"");
}

TEST(EvalKernelTest, OnlyTheChosenKernelsVariantsCompete) {
  EvalOutcome out = EvaluateJson(WithKernel(kTwoKernels, "gemm"));
  ASSERT_EQ(out.exit_code, 0) << out.output.dump();
  EXPECT_EQ(out.output["kernel"], "gemm");
  // A variant without "kernel" belongs to the kernel evaluated.
  ASSERT_EQ(out.output["candidates"].size(), 3u);
  EXPECT_EQ(out.output["candidates"][0]["name"], "gemm_gpu");
  EXPECT_EQ(out.output["candidates"][1]["name"], "gemm_cpu");
  EXPECT_EQ(out.output["candidates"][2]["name"], "any_gpu");
  // any_gpu has one more trait than gemm_gpu, which is a strict subset.
  EXPECT_EQ(out.output["selected"], "any_gpu");
  EXPECT_THAT(out.text, HasSubstr("kernel: gemm\nselected: any_gpu"));

  out = EvaluateJson(WithKernel(kTwoKernels, "saxpy"));
  ASSERT_EQ(out.exit_code, 0) << out.output.dump();
  EXPECT_EQ(out.output["selected"], "saxpy_gpu");
  EXPECT_EQ(out.output["candidates"].size(), 2u);
}

TEST(EvalKernelTest, OneNamedKernelIsTheOneEvaluated) {
  EvalOutcome out = EvaluateDocument(R"({"variants": [
      {"name": "a", "kernel": "saxpy", "selector": "device={kind(cpu)}"},
      {"name": "b", "selector": "device={kind(gpu)}"}]})");
  ASSERT_EQ(out.exit_code, 0) << out.output.dump();
  EXPECT_EQ(out.output["kernel"], "saxpy");
  EXPECT_EQ(out.output["candidates"].size(), 2u);
  out = EvaluateDocument(
      R"({"variants": [{"name": "a", "selector": "device={kind(cpu)}"}]})");
  EXPECT_TRUE(out.output["kernel"].is_null());
  EXPECT_THAT(out.text, StartsWith("selected: base function"));
}

TEST(EvalKernelTest, BadKernelChoices) {
  EvalOutcome out = EvaluateJson(WithKernel(kTwoKernels, "axpy"));
  // any_gpu would belong to axpy; without it, axpy has no variants.
  EXPECT_EQ(out.exit_code, 0);
  json doc = WithKernel(kTwoKernels, "axpy");
  doc["variants"].erase(3);
  out = EvaluateJson(doc);
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(out.output["error"]["message"],
            "kernel 'axpy' has no variants (the variants are for gemm, saxpy)");
  out = EvaluateJson(WithKernel(kTwoKernels, 7));
  EXPECT_EQ(out.output["error"]["message"], "kernel must be a string");
  out = EvaluateDocument(
      R"({"variants": [{"name": "a", "kernel": [], "selector": "device={kind(cpu)}"}]})");
  EXPECT_EQ(out.output["error"]["message"],
            "a variant's kernel must be a string");
  // Another kernel's variant is still validated.
  doc = WithKernel(kTwoKernels, "gemm");
  doc["variants"][0]["selector"] = "device={kind(gpu)";
  EXPECT_EQ(EvaluateJson(doc).output["error"]["variant"], "saxpy_gpu");
}

// The real binary: exit codes and the --json document.
std::string Cli() {
  return std::string(std::getenv("TEST_SRCDIR")) +
         "/ctxsel/client/cli/ctxsel-cli";
}

int RunCli(const std::string& args, std::string* output) {
  std::string out_path = std::string(std::getenv("TEST_TMPDIR")) + "/out.txt";
  int status = std::system((Cli() + " " + args + " > " + out_path).c_str());
  std::ifstream in(out_path);
  output->assign(std::istreambuf_iterator<char>(in), {});
  return WEXITSTATUS(status);
}

TEST(EvalBinaryTest, JsonOutputAndExitCodes) {
  std::string dir = std::getenv("TEST_TMPDIR");
  std::ofstream(dir + "/in.json") << R"({"context": {"construct": ["parallel"]},
             "variants": [{"name": "p", "selector": "construct={parallel}"}]})";
  std::string output;
  ASSERT_EQ(RunCli("--json eval " + dir + "/in.json", &output), 0) << output;
  json doc = json::parse(output);
  EXPECT_EQ(doc["selected"], "p");
  EXPECT_EQ(
      RunCli("--json eval " + dir + "/in.json 'q=device={bogus}'", &output), 2);
  doc = json::parse(output);
  EXPECT_EQ(doc["error"]["variant"], "q");
  EXPECT_EQ(RunCli("eval --construct=target,parallel 'p=construct={target}' "
                   "'q=construct={parallel}'",
                   &output),
            0);
  EXPECT_THAT(output, HasSubstr("selected: q (score 3)"));
  std::ofstream(dir + "/bad.json") << "{";
  EXPECT_EQ(RunCli("--json eval " + dir + "/bad.json", &output), 2);
  EXPECT_EQ(RunCli("--json eval --var=N=x 'p=construct={target}'", &output), 2);
  EXPECT_EQ(json::parse(output)["error"]["message"],
            "--var: 'N=x' is not NAME=INTEGER");
}

TEST(EvalBinaryTest, KernelFlagChoosesTheKernel) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/k.json";
  std::ofstream(path) << kTwoKernels;
  std::string output;
  EXPECT_EQ(RunCli("--json eval " + path, &output), 2);
  ASSERT_EQ(RunCli("--json eval --kernel=gemm " + path, &output), 0);
  EXPECT_EQ(json::parse(output)["selected"], "any_gpu");
  // --kernel overrides the document's "kernel".
  std::ofstream(path) << WithKernel(kTwoKernels, "gemm").dump();
  ASSERT_EQ(RunCli("--json eval --kernel=saxpy " + path, &output), 0);
  EXPECT_EQ(json::parse(output)["selected"], "saxpy_gpu");
}

}  // namespace
}  // namespace ctxsel::cli
