// corpus_bench: the engine's Resolve and Select timed per document of a
// corpus (bench/corpus.h), each document parsed once.
//
//   bazel run -c opt //bench:corpus_bench --
//   $PWD/bench/corpus/conformance.jsonl
//
// Prints key=value lines: documents, timed, rejected, and the sums over the
// timed documents of each one's median time per call, resolve_ns_total and
// select_ns_total. bench:corpus_llvm_bench puts LLVM beside them.
#include <cstdio>

#include "bench/corpus.h"

int main(int argc, char** argv) {
  ctxsel::bench::Corpus corpus;
  ctxsel::bench::TimingOptions options;
  if (int exit = ctxsel::bench::StartCorpusBench(argc, argv, "corpus_bench",
                                                 corpus, options);
      exit != 0) {
    return exit;
  }
  double resolve = 0, select = 0;
  for (const ctxsel::bench::CorpusDocument& d : corpus.documents) {
    const ctxsel::bench::EngineNanos ns = ctxsel::bench::TimeEngine(d, options);
    resolve += ns.resolve;
    select += ns.select;
  }
  ctxsel::bench::PrintCorpusCounts(corpus);
  std::printf("resolve_ns_total=%.0f\nselect_ns_total=%.0f\n", resolve, select);
  return 0;
}
