// selector_error.h: the errors of Selector::Parse and EffectiveSelector as
// data, so that a caller can re-base every position they name.
//
// Every selector error is an InvalidArgumentError whose message reads
// "L:C: message", sometimes with a second position ("trait selector 'kind'
// given twice in the device trait set (first at 1:9)"). A caller that took
// the selector out of a larger text (a pragma in a source file, a JSON
// document) wants all of those positions in its own text. Parsing them back
// out of the message is fragile; GetSelectorError() returns the parts, which
// the engine attaches to the status as a payload.
//
// Example:
//
//   absl::StatusOr<Selector> s = Selector::Parse(text);
//   if (std::optional<SelectorError> e = GetSelectorError(s.status())) {
//     Report(Rebase(e->position), e->message,
//            e->first ? Rebase(*e->first) : ...);
//   }
#ifndef CTXSEL_SELECTOR_SELECTOR_ERROR_H_
#define CTXSEL_SELECTOR_SELECTOR_ERROR_H_

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace ctxsel::selector {

// A 1-based line and column in selector text. `text` says which text: 0 for
// the text given to Selector::Parse. An effective selector is made of
// several texts, numbered as EffectiveSelector(inner, outer) lists them:
// the inner selector's texts first, then the outer selector's (for a
// begin/end declare variant chain: 0 the innermost, 1 the region around it,
// and so on outwards).
struct TextPosition {
  int line = 1;
  int column = 1;
  int text = 0;
  std::string ToString() const;  // "L:C", or "L:C of selector text N"
};

struct SelectorError {
  TextPosition position;  // the offending text
  std::string message;    // what is wrong, without positions
  // Where a thing given twice was given first.
  std::optional<TextPosition> first;
  // Where the error arose, e.g. "in the effective selector of 'a' nested in
  // 'b'"; empty for a plain parse.
  std::string context;

  // "L:C: message (first at L:C) (context)": the status message.
  std::string ToString() const;
};

// InvalidArgumentError with message error.ToString() and `error` attached.
absl::Status MakeSelectorError(const SelectorError& error);

// The parts of an error made by MakeSelectorError() (every error of
// Selector::Parse and EffectiveSelector); nullopt for any other status.
std::optional<SelectorError> GetSelectorError(const absl::Status& status);

}  // namespace ctxsel::selector

#endif  // CTXSEL_SELECTOR_SELECTOR_ERROR_H_
