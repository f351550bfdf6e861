// Drives the importer's fuzz entry point without libFuzzer: seeds in the
// shapes of the OpenMP Examples plus deterministic mutations (token splices,
// byte flips, truncations). A crash, sanitizer report or broken invariant
// (see importer_fuzzer.cc) fails the test.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "selector/fuzz_driver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

const std::vector<std::string>& Seeds() {
  static const auto* seeds = new std::vector<std::string>{
      "#pragma omp declare variant(p_f) match(construct={parallel})\n"
      "#pragma omp declare variant(t_f) \\\n    match(construct={target})\n"
      "// a comment\nvoid f(int n,\n       double *v);\n",
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "  #pragma omp begin declare variant match(device={arch(nvptx)}, \\\n"
      "      implementation={vendor(llvm)})\n"
      "void f(void) { /* } */ const char* s = \"}\"; }\n"
      "  #pragma omp end declare variant\n"
      "#pragma omp end declare variant\n",
      "#pragma omp declare variant(f_gpu) match(construct={dispatch}) "
      "adjust_args(need_device_ptr: a, b) append_args(interop(target, "
      "targetsync))\nvoid f(float *a, float *b);\n",
      "void g(int n) {\n#pragma omp metadirective when(user={condition(n > "
      "9)}: teams loop) when(device={kind(gpu), arch(nvptx)}: parallel for) "
      "otherwise(nothing)\n  for (;;) {}\n}\n",
      "#if 0\n#pragma omp end declare variant\n#endif\nint x = 1'000;\n"
      "auto s = R\"d(#pragma omp end declare variant)d\";\n",
      "subroutine base(x)\n!$omp declare variant(base:var) &\n"
      "!$omp& match(construct={parallel, do})\nend subroutine\n"
      "!$omp metadirective when(device={kind(cpu)}: parallel do) &\n"
      "!$omp& default(simd)\n",
  };
  return *seeds;
}

const char* kTokens[] = {"#pragma omp ",
                         "declare variant(",
                         "begin declare variant ",
                         "end declare variant\n",
                         "match(",
                         "metadirective ",
                         "when(",
                         "otherwise(",
                         "device={kind(gpu)}",
                         "kind(cpu)",
                         ")",
                         "(",
                         "{",
                         "}",
                         ":",
                         ",",
                         "\\\n",
                         "&\n",
                         "!$omp ",
                         "/*",
                         "*/",
                         "//",
                         "\"",
                         "'",
                         "\n",
                         "#if 0\n",
                         "#endif\n",
                         "void f(void);\n",
                         "int g() {",
                         " "};

void Feed(const std::string& s) {
  ctxsel::fuzzing::Feed(LLVMFuzzerTestOneInput, s);
}

TEST(ImporterFuzzerTest, SeedsAndMutations) {
  ctxsel::fuzzing::FeedSeedsAndMutations(LLVMFuzzerTestOneInput, Seeds(),
                                         {kTokens, /*max_erase=*/8},
                                         /*count=*/5000, /*rng_seed=*/2024);
}

// Every seed and every input that ever crashed the libFuzzer target.
TEST(ImporterFuzzerTest, RegressionCorpus) {
  std::vector<std::string> corpus =
      ctxsel::fuzzing::ReadCorpus("selector/fuzz/corpus/importer");
  EXPECT_GE(corpus.size(), 13u);
  for (const std::string& input : corpus) Feed(input);
}

TEST(ImporterFuzzerTest, PathologicalInputs) {
  std::string deep;
  for (int i = 0; i < 500; ++i) {
    deep += "#pragma omp begin declare variant match(device={kind(gpu)})\n";
  }
  Feed(deep + "void f(void) {}\n");
  Feed(std::string(10000, '\\'));
  Feed(std::string(10000, '{') + std::string(10000, '}'));
  Feed("#pragma omp declare variant(" + std::string(70000, '(') + "\n");
  Feed(std::string("\0#pragma\xff omp\r\n", 16));
}

}  // namespace
