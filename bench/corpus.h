// corpus.h: the eval documents of a corpus file, parsed once, and the
// timing both corpus benchmarks use.
//
// A corpus is a JSONL file: one `ctxsel-cli eval` document per line
// (docs/selectors.md), e.g. bench/corpus/conformance.jsonl. A document the
// engine rejects (a selector error, a bad field) is counted, not timed.
//
//   absl::StatusOr<Corpus> corpus = LoadCorpus("bench/corpus/x.jsonl");
//   for (const CorpusDocument& d : corpus->documents)
//     double ns = MedianNanos([&] { Resolve(d.candidates, d.context); });
#ifndef CTXSEL_BENCH_CORPUS_H_
#define CTXSEL_BENCH_CORPUS_H_

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/cli/eval_command.h"
#include "selector/selector.h"

namespace ctxsel::bench {

struct CorpusDocument {
  int line = 0;  // 1-based line in the corpus file
  // The document's candidates and context, shared as the server shares a
  // kernel's candidates between its Resolutions.
  selector::CandidateList candidates;
  std::shared_ptr<const selector::Context> context;
  std::optional<selector::Resolution> resolution;  // for timing Select
};

struct Corpus {
  int lines = 0;     // non-empty lines read
  int rejected = 0;  // documents the engine refuses (counted, not timed)
  std::vector<CorpusDocument> documents;
};

// NotFoundError when the file cannot be read; InvalidArgumentError naming
// the line when a line is not JSON.
absl::StatusOr<Corpus> LoadCorpus(const std::string& path);

struct TimingOptions {
  int rounds = 7;              // median of this many rounds
  int64_t min_round_ns = 2e5;  // each round runs at least this long
};

// The start of a corpus benchmark's main: parses the command line
// (`name [--rounds=N] FILE.jsonl`) and loads FILE. Returns 0 with `corpus`
// and `options` filled, or prints why to stderr and returns main's exit
// code: 2 for a usage error, 1 for a corpus that cannot be loaded.
int StartCorpusBench(int argc, char** argv, const char* name, Corpus& corpus,
                     TimingOptions& options);

// The median over `options.rounds` rounds of the mean time of one call of
// `fn`, in nanoseconds; each round repeats `fn` until it has run for
// `options.min_round_ns` (the count is fixed by a calibration round).
template <typename Fn>
double MedianNanos(Fn&& fn, const TimingOptions& options = {}) {
  using Clock = std::chrono::steady_clock;
  auto run = [&](int64_t n) {
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < n; ++i) fn();
    return std::chrono::duration<double, std::nano>(Clock::now() - start)
        .count();
  };
  int64_t n = 1;
  for (double took = run(n); took < options.min_round_ns; took = run(n)) {
    n *= 2;
  }
  std::vector<double> means;
  for (int r = 0; r < options.rounds; ++r) means.push_back(run(n) / n);
  std::nth_element(means.begin(), means.begin() + means.size() / 2,
                   means.end());
  return means[means.size() / 2];
}

// The engine's two steps timed on one document: MedianNanos of Resolve and
// of Select (with the document's variables and target devices).
struct EngineNanos {
  double resolve = 0;
  double select = 0;
};
EngineNanos TimeEngine(const CorpusDocument& d, const TimingOptions& options);

// Prints the corpus's counts: documents=, timed=, rejected= lines.
void PrintCorpusCounts(const Corpus& corpus);

}  // namespace ctxsel::bench

#endif  // CTXSEL_BENCH_CORPUS_H_
