#include "bench/corpus.h"

#include <fstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

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
    CorpusDocument d;
    d.line = line;
    if (cli::ReadEvalDocument(json, d.document).exit_code != cli::kExitOk) {
      ++corpus.rejected;
      continue;
    }
    absl::StatusOr<selector::Resolution> r =
        selector::Resolve(d.document.candidates, d.document.context);
    if (!r.ok()) {
      ++corpus.rejected;
      continue;
    }
    d.resolution = *std::move(r);
    corpus.documents.push_back(std::move(d));
  }
  return corpus;
}

}  // namespace ctxsel::bench
