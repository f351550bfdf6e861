// clauses.h: the clauses of variant directives, checked and converted.
//
// Internal to the importer: turns OmpClause text (directive.h) into selectors
// and argument metadata, with errors "L:C: message" at the original position
// (a selector's own error is re-based from the clause to the file).
#ifndef CTXSEL_SELECTOR_PRAGMA_CLAUSES_H_
#define CTXSEL_SELECTOR_PRAGMA_CLAUSES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "selector/pragma/directive.h"
#include "selector/pragma/importer.h"
#include "selector/selector.h"

namespace ctxsel::pragma {

// The clauses of a declare variant / begin declare variant directive.
struct VariantClauses {
  const OmpClause* match = nullptr;
  std::vector<AdjustArgs> adjust_args;
  std::vector<std::vector<std::string>> append_args;
};

// Checks the clause names (match once, required; adjust_args; append_args)
// and parses adjust_args / append_args. `what` names the directive.
absl::StatusOr<VariantClauses> ReadVariantClauses(const LogicalLine& line,
                                                  const OmpDirective& directive,
                                                  absl::string_view what);

// Where one selector text lies in the file.
struct SelectorOrigin {
  const LogicalLine* line;
  size_t offset;  // of the text's first character in line->text
};

// Re-bases a selector error (selector_error.h) to the file: every position
// it names, each in the text it refers to, `origins[position.text]`. The
// result is "L:C: message (first at L:C) (context)" with file lines and
// columns. A status that is no selector error is reported at origins[0].
absl::Status RebaseSelectorError(const absl::Status& status,
                                 const std::vector<SelectorOrigin>& origins);

// Parses `text`, found at `offset` in `line`, as a selector; errors are
// re-based to the file position.
absl::StatusOr<selector::Selector> ParseSelectorAt(const LogicalLine& line,
                                                   absl::string_view text,
                                                   size_t offset,
                                                   selector::Directive kind);

// The when/otherwise/default clauses of a metadirective, in order.
struct MetadirectiveClauses {
  struct When {
    selector::Selector selector;
    std::string selector_text;
    std::string directive;
    size_t offset;
  };
  std::vector<When> when;
  std::optional<std::string> otherwise;
  std::string otherwise_clause;
};
// Each directive variant must start with an OpenMP directive name, must not
// be a metadirective and, in a `begin metadirective`, not a standalone
// directive (barrier, taskwait, target update, ...).
absl::StatusOr<MetadirectiveClauses> ReadMetadirectiveClauses(
    const LogicalLine& line, const OmpDirective& directive);

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_CLAUSES_H_
