// corpus_llvm_bench: the engine beside LLVM 14's OpenMP context matching
// (llvm::omp::getBestVariantMatchForContext) on the documents of a corpus
// that LLVM can express (selector/llvm/omp_context.h). Manual target: needs
// Debian's llvm-14-dev.
//
//   bazel run -c opt //bench:corpus_llvm_bench -- "$PWD/bench/corpus/x.jsonl"
//
// LLVM decides in one step what the engine splits into Resolve (static,
// once per context) and Select (per request), so both are compared with
// LLVM's one step, summed over the compared documents:
//   engine_resolve_vs_llvm = sum Resolve / sum getBestVariantMatchForContext
//   engine_select_vs_llvm  = sum Select  / sum getBestVariantMatchForContext
// Also prints how many documents were compared, how many LLVM could not
// express (and the first reason for each kind), and on how many the two
// chose the same variant.
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "bench/corpus.h"
#include "benchmark/benchmark.h"
#include "selector/llvm/omp_context.h"

namespace sel = ctxsel::selector;

int main(int argc, char** argv) {
  ctxsel::bench::Corpus corpus;
  ctxsel::bench::TimingOptions options;
  if (int exit = ctxsel::bench::StartCorpusBench(
          argc, argv, "corpus_llvm_bench", corpus, options);
      exit != 0) {
    return exit;
  }
  double resolve = 0, select = 0, llvm = 0;
  int compared = 0, agree = 0;
  std::map<std::string, int> not_expressible;
  for (const ctxsel::bench::CorpusDocument& d : corpus.documents) {
    const sel::Context& ctx = *d.context;
    std::string why;
    std::unique_ptr<sel::llvm_omp::LlvmDocument> theirs =
        sel::llvm_omp::ToLlvm(ctx, *d.candidates, &why);
    if (theirs == nullptr) {
      ++not_expressible[why];
      continue;
    }
    ++compared;
    const sel::Selection ours =
        sel::Select(*d.resolution, ctx.variables, ctx.target_devices);
    if (ours.index == theirs->BestVariant()) {
      ++agree;
    } else {
      std::fprintf(stderr, "line %d: engine chose %d, LLVM %d\n", d.line,
                   ours.index, theirs->BestVariant());
    }
    const ctxsel::bench::EngineNanos ns = ctxsel::bench::TimeEngine(d, options);
    resolve += ns.resolve;
    select += ns.select;
    llvm += ctxsel::bench::MedianNanos(
        [&] { benchmark::DoNotOptimize(theirs->BestVariant()); }, options);
  }
  ctxsel::bench::PrintCorpusCounts(corpus);
  std::printf("llvm_compared=%d\nllvm_agree=%d\n", compared, agree);
  for (const auto& [why, count] : not_expressible) {
    std::printf("llvm_cannot_express{%s}=%d\n", why.c_str(), count);
  }
  std::printf(
      "resolve_ns_total=%.0f\nselect_ns_total=%.0f\nllvm_ns_total=%.0f\n",
      resolve, select, llvm);
  if (compared > 0) {
    std::printf("engine_resolve_vs_llvm=%.3f\nengine_select_vs_llvm=%.3f\n",
                resolve / llvm, select / llvm);
  }
  return 0;
}
