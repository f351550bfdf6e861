#include "bench/corpus.h"

#include <cstdio>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(int, rounds, 7, "timing rounds per document (median)");

namespace ctxsel::bench {

absl::StatusOr<Corpus> LoadCorpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  Corpus corpus;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.empty()) continue;
    ++corpus.lines;
    nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line, ": not a JSON document"));
    }
    cli::EvalDocument document;
    if (cli::ReadEvalDocument(json, document).exit_code != cli::kExitOk) {
      ++corpus.rejected;
      continue;
    }
    CorpusDocument d;
    d.line = line;
    d.candidates = std::make_shared<const std::vector<selector::Candidate>>(
        std::move(document.candidates));
    d.context =
        std::make_shared<const selector::Context>(std::move(document.context));
    absl::StatusOr<selector::Resolution> r =
        selector::Resolve(d.candidates, d.context);
    if (!r.ok()) {
      ++corpus.rejected;
      continue;
    }
    d.resolution = *std::move(r);
    corpus.documents.push_back(std::move(d));
  }
  return corpus;
}

EngineNanos TimeEngine(const CorpusDocument& d, const TimingOptions& options) {
  const selector::Context& ctx = *d.context;
  EngineNanos out;
  out.resolve = MedianNanos(
      [&] {
        benchmark::DoNotOptimize(selector::Resolve(d.candidates, d.context));
      },
      options);
  out.select = MedianNanos(
      [&] {
        benchmark::DoNotOptimize(
            selector::Select(*d.resolution, ctx.variables, ctx.target_devices));
      },
      options);
  return out;
}

void PrintCorpusCounts(const Corpus& corpus) {
  std::printf("documents=%d\ntimed=%zu\nrejected=%d\n", corpus.lines,
              corpus.documents.size(), corpus.rejected);
}

int StartCorpusBench(int argc, char** argv, const char* name, Corpus& corpus,
                     TimingOptions& options) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: %s [--rounds=N] FILE.jsonl\n", name);
    return 2;
  }
  absl::StatusOr<Corpus> loaded = LoadCorpus(args[1]);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
    return 1;
  }
  corpus = *std::move(loaded);
  options.rounds = absl::GetFlag(FLAGS_rounds);
  return 0;
}

}  // namespace ctxsel::bench
