// Explain(): the per-candidate breakdown people paste into bug reports.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "selector/matcher.h"
#include "selector/resolver.h"

namespace ctxsel::selector {
namespace {

// Resolve kept no strings: the reason and the score terms come from
// matching the candidate against the static context again.
CandidateReport StaticReport(const internal::ResolutionData& data, size_t i) {
  const Candidate& c = (*data.declared)[i];
  const internal::CandidateState& s = data.states[i];
  CandidateReport r;
  r.name = c.name;
  r.selector = c.selector.ToString();
  r.dynamic = c.selector.is_dynamic();
  r.compatible = s.compatible;
  const Context& context = *data.context;
  internal::StaticMatch m = internal::MatchStatic(
      c.selector.ast(), context, data.options.lowest_embedding);
  r.reason = std::move(m.reason);
  if (s.compatible) {
    absl::StatusOr<internal::ScoreSum> sum =
        internal::SumScore(c.selector.ast(), m.construct_positions,
                           static_cast<int>(context.construct.size()),
                           /*with_terms=*/true, data.options);
    if (sum.ok()) r.terms = std::move(sum->terms);  // Resolve checked it
  }
  r.score = s.score;
  if (s.subset_of >= 0) r.subset_of = (*data.declared)[s.subset_of].name;
  r.rank = s.rank;
  r.in_dynamic_prefix =
      s.rank >= 0 && static_cast<size_t>(s.rank) < data.prefix;
  return r;
}

std::string TermsText(const CandidateReport& c) {
  std::vector<std::string> parts = {"1"};
  for (const ScoreTerm& t : c.terms) {
    parts.push_back(absl::StrCat(t.trait, "=", t.value));
  }
  return absl::StrJoin(parts, " + ");
}

std::string CandidateText(const CandidateReport& c) {
  std::string status;
  if (c.selected) {
    status = "SELECTED";
  } else if (c.runtime_only) {
    status = absl::StrCat("not chosen: ", c.reason);
  } else if (c.compatible && !c.reason.empty()) {
    status = absl::StrCat("not called: ", c.reason);  // Selection::replaced
  } else if (!c.compatible) {
    status = absl::StrCat("not compatible: ", c.reason);
  } else if (c.in_dynamic_prefix && !c.evaluated) {
    status = "not evaluated (an earlier candidate was chosen)";
  } else if (!c.in_dynamic_prefix) {
    status = "compatible, after the first static candidate";
  } else {
    status = "compatible";
  }
  std::string line =
      absl::StrCat("  ", c.name, " [", c.dynamic ? "dynamic" : "static", "] ",
                   c.selector, "\n    ", status);
  // Every replacement candidate has the score it was ranked by, also a
  // dynamic one whose dynamic part failed.
  if (c.rank >= 0) {
    absl::StrAppend(&line, "\n    score ", c.score);
    if (!c.subset_of.empty()) {
      absl::StrAppend(&line, " (strict subset of ", c.subset_of, ")");
    } else {
      absl::StrAppend(&line, " = ", TermsText(c));
    }
    if (c.rank >= 0) absl::StrAppend(&line, ", rank ", c.rank + 1);
  }
  return line;
}

}  // namespace

Explanation Explain(const Resolution& resolution, const Selection& selection,
                    const Variables& variables,
                    TargetDevicesView target_devices) {
  const internal::ResolutionData& data = resolution.data();
  Explanation out;
  out.selection = selection;
  for (size_t i = 0; i < data.declared->size(); ++i) {
    out.candidates.push_back(StaticReport(data, i));
  }
  for (int index : selection.runtime_only) {
    out.candidates[index].runtime_only = true;
  }
  const int evaluated =
      std::min<int>(selection.evaluated, static_cast<int>(data.sorted.size()));
  for (int r = 0; r < evaluated; ++r) {
    const Resolution::Entry& e = data.sorted[r];
    CandidateReport& c = out.candidates[e.index];
    c.evaluated = true;
    if (e.index == selection.index) {
      c.selected = true;
    } else if (e.index == selection.replaced) {
      c.reason = "names simd: this compiler calls the base function instead";
    } else if (e.dynamic) {
      // Select passed it over: only the words are found here.
      internal::MatchDynamic((*data.declared)[e.index].selector.ast(),
                             variables, target_devices, &c.reason);
      c.compatible = false;
    }
  }
  return out;
}

Explanation Explain(const Resolution& resolution, const Variables& variables,
                    TargetDevicesView target_devices) {
  return Explain(resolution, Select(resolution, variables, target_devices),
                 variables, target_devices);
}

std::string Explanation::ToText() const {
  std::string out =
      selection.base()
          ? std::string("selected: base function\n")
          : absl::StrCat("selected: ", candidates[selection.index].name,
                         " (score ", selection.score, ")\n");
  for (const CandidateReport& c : candidates) {
    absl::StrAppend(&out, CandidateText(c), "\n");
  }
  return out;
}

}  // namespace ctxsel::selector
