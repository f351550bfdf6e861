// eval_command.h: `ctxsel-cli eval`, offline selector evaluation.
//
// Reads one JSON document (a directive, an OpenMP context and variants with
// their selectors), runs the selector engine's Resolve/Select/Explain and
// produces one JSON document; the format is in docs/selectors.md. Only the
// variants of one kernel compete: the document's "kernel", or the one kernel
// its variants name. Used by `ctxsel-cli eval` (kEvalCommand) and by the
// conformance suite (tests/conformance/).
//
// Example:
//   EvalOutcome out = EvaluateDocument(R"({"variants": [
//       {"name": "fx1", "selector": "construct={target}"}],
//       "context": {"construct": ["target"]}})");
//   // out.output["selected"] == "fx1", out.exit_code == kExitOk
#ifndef CTXSEL_CLIENT_CLI_EVAL_COMMAND_H_
#define CTXSEL_CLIENT_CLI_EVAL_COMMAND_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "client/cli/command.h"
#include "nlohmann/json.hpp"
#include "selector/compiler_profile.h"
#include "selector/selector.h"

namespace ctxsel::cli {

struct EvalOutcome {
  // kExitOk, or kExitBadInput with an "error" document.
  int exit_code = kExitOk;
  nlohmann::json output;  // {"kernel", "compiler", "ties", "selected",
                          // "score", "candidates"} or {"error"}
  std::string text;       // readable rendering (explanation or error)
};

// What an eval document asks: the context and the candidates of the kernel
// it evaluates ("" when its variants name none), parsed and validated.
struct EvalDocument {
  std::string kernel;
  selector::Context context;
  std::vector<selector::Candidate> candidates;
  selector::Directive directive = selector::Directive::kDeclareVariant;
  // "compiler": whose binary the answer is for (compiler_profile.h).
  selector::CompilerProfile compiler = selector::CompilerProfile::kSpec;
  // "ties": "first" or "last" replaces the compiler's tie rule for declare
  // variant ("" or absent: the compiler's).
  selector::TieChoice ties = selector::TieChoice::kCompilerDefault;
};

// Reads `input` into `document` without evaluating it (benchmarks parse
// once and evaluate many times). Returns an outcome with kExitOk and no
// output, or the failing outcome EvaluateJson would give for the document.
EvalOutcome ReadEvalDocument(const nlohmann::json& input,
                             EvalDocument& document);

// Evaluates one eval document given as text.
EvalOutcome EvaluateDocument(absl::string_view input);

// Same, for an already parsed document.
EvalOutcome EvaluateJson(const nlohmann::json& input);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_EVAL_COMMAND_H_
