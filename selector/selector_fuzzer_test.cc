// Drives the fuzz entry point without libFuzzer: seeds from the spec plus
// deterministic mutations (token splices, byte flips, truncations). Any
// crash, sanitizer report or canonical round-trip failure fails the test.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "selector/fuzz_driver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

const std::vector<std::string>& Seeds() {
  static const auto* seeds = new std::vector<std::string>{
      "construct={teams,parallel,for}, device={arch(nvptx)}, "
      "user={condition(N>32)}",
      "device={kind(gpu),isa(sm_70)}",
      "implementation={requires(unified_shared_memory)}, "
      "user={condition(score(1): version==2)}",
      "construct={simd(simdlen(8), aligned(a, b : 64), linear(i), "
      "uniform(n), notinbranch)}",
      "target_device={device_num(-1), kind(host)}",
      "implementation={atomic_default_mem_order(seq_cst), "
      "extension(f(g, \"x\", 1)), vendor(score(3): llvm)}",
      "user={condition(N ? B + 1 : 10 / Z % -M)}",
      "user={condition(score(4): sizeof(s.a[i]) > 4 && p->f(\"x\", ~m))}",
      "device={isa(\"core-avx512\")} /* c */ // d\n",
      "construct={parallel, simd(linear(i:2), linear(j:n), linear(k:-1), "
      "uniform(n), aligned(n:32), inbranch)}",
      "implementation={unified_address, requires(reverse_offload), "
      "atomic_default_mem_order(score(2): acq_rel), dynamic_allocators}",
  };
  return *seeds;
}

const char* kTokens[] = {"{",
                         "}",
                         "(",
                         ")",
                         ",",
                         ":",
                         "=",
                         "score(",
                         "condition(",
                         "-",
                         "*",
                         "/",
                         "%",
                         "?",
                         "&&",
                         "!",
                         "9223372036854775807",
                         "0",
                         "N",
                         "kind(any)",
                         "\"",
                         "/*",
                         "construct={",
                         "simd(",
                         "device_num(",
                         "f(",
                         ".",
                         "->",
                         "[",
                         "]",
                         "&",
                         "<<",
                         "sizeof",
                         " "};

void Feed(const std::string& s) {
  ctxsel::fuzzing::Feed(LLVMFuzzerTestOneInput, s);
}

TEST(SelectorFuzzerTest, SeedsAndMutations) {
  ctxsel::fuzzing::FeedSeedsAndMutations(LLVMFuzzerTestOneInput, Seeds(),
                                         {kTokens, /*max_erase=*/4},
                                         /*count=*/20000, /*rng_seed=*/12345);
}

// Every seed and every input that ever crashed the libFuzzer target.
TEST(SelectorFuzzerTest, RegressionCorpus) {
  std::vector<std::string> corpus =
      ctxsel::fuzzing::ReadCorpus("selector/fuzz/corpus/selector");
  EXPECT_GE(corpus.size(), 80u);
  for (const std::string& input : corpus) Feed(input);
}

TEST(SelectorFuzzerTest, PathologicalInputs) {
  Feed(std::string(70000, '('));
  Feed("user={condition(" + std::string(5000, '!') + "1)}");
  Feed("user={condition(" + std::string(5000, '-') + "1)}");
  std::string chain = "user={condition(1";
  for (int i = 0; i < 3000; ++i) chain += "+1";
  Feed(chain + ")}");
  Feed("user={condition(f" + std::string(5000, '(') + ")}");
  Feed("user={condition(f" + std::string(200, '(') + std::string(200, ')') +
       ")}");
  Feed(std::string("\0\xff{", 3));
}

}  // namespace
