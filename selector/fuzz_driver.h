// fuzz_driver.h: drives a libFuzzer entry point from a plain unit test, so
// every `bazel test` exercises the fuzz targets' invariants without clang or
// libFuzzer (tools/fuzz.sh runs the real fuzzer).
//
// The mutations are deterministic for a given generator seed: token splices,
// erasures, byte flips and truncations. Each fuzz target brings its own seeds
// and tokens:
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
//   const char* kTokens[] = {"{", "}", "score("};
//   FeedSeedsAndMutations(LLVMFuzzerTestOneInput, seeds,
//                         {kTokens, /*max_erase=*/4}, /*mutations=*/20000,
//                         /*rng_seed=*/12345);
//
// ReadCorpus() loads a checked-in regression corpus (selector/fuzz/corpus/)
// so that the unit tests replay every input the real fuzzer ever crashed on.
#ifndef CTXSEL_SELECTOR_FUZZ_DRIVER_H_
#define CTXSEL_SELECTOR_FUZZ_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/types/span.h"

namespace ctxsel::fuzzing {

// A libFuzzer entry point (LLVMFuzzerTestOneInput).
using FuzzEntry = int (*)(const uint8_t* data, size_t size);

struct Mutations {
  // Text spliced in at random offsets: the target language's tokens.
  absl::Span<const char* const> tokens;
  // The most bytes one erasure removes.
  int max_erase = 4;
};

// `s` after one to four random edits drawn from `rng`.
std::string Mutate(std::string s, const Mutations& mutations,
                   std::mt19937& rng);

// Calls `entry` on the bytes of `input`.
void Feed(FuzzEntry entry, const std::string& input);

// The contents of every file in `dir` (a path from the workspace root, found
// in the test's runfiles), in file name order. Test support only: the
// selector engine itself does no I/O.
std::vector<std::string> ReadCorpus(const std::string& dir);

// Feeds every seed, then `count` mutations of seeds picked at random by a
// generator seeded with `rng_seed`. A broken invariant aborts inside `entry`.
void FeedSeedsAndMutations(FuzzEntry entry,
                           const std::vector<std::string>& seeds,
                           const Mutations& mutations, int count,
                           uint32_t rng_seed);

}  // namespace ctxsel::fuzzing

#endif  // CTXSEL_SELECTOR_FUZZ_DRIVER_H_
