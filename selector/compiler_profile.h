// compiler_profile.h: answer for a compiler's binary, not only for the spec.
//
// Where the OpenMP texts leave a choice, or a compiler departs from them,
// the variant a built program calls can differ from the spec's answer. A
// CompilerProfile names the compiler (compiler_profiles.def, one row each)
// and gives the ResolveOptions that reproduce what its binaries call.
// `CompilerProfile::kSpec` is ctxsel's default and keeps today's answers.
//
//   absl::StatusOr<CompilerProfile> p = CompilerProfileFromName("gcc-12");
//   Resolve(candidates, context, ResolveOptionsFor(*p, directive));
#ifndef CTXSEL_SELECTOR_COMPILER_PROFILE_H_
#define CTXSEL_SELECTOR_COMPILER_PROFILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::selector {

enum class CompilerProfile {
#define CTXSEL_COMPILER_PROFILE(e, name, summary, ...) e,
#include "selector/compiler_profiles.def"
};

// Which declare-variant candidate wins a tie: the compiler's rule (spec:
// the first declared; gcc-12, clang-14: the last), or an explicit choice.
// Metadirectives always take the first `when`, as the texts require.
enum class TieChoice { kCompilerDefault, kFirstDeclared, kLastDeclared };

// "" (the compiler's), "first" or "last"; InvalidArgument otherwise.
absl::StatusOr<TieChoice> TieChoiceFromName(absl::string_view name);
absl::string_view TieChoiceName(TieChoice ties);  // "", "first", "last"

// "spec", "gcc-12", "clang-14".
absl::string_view CompilerProfileName(CompilerProfile profile);
// One line on what the profile reproduces.
absl::string_view CompilerProfileSummary(CompilerProfile profile);
// InvalidArgument naming the known profiles for an unknown name.
absl::StatusOr<CompilerProfile> CompilerProfileFromName(absl::string_view name);
// The known names, comma-separated, in table order.
std::string CompilerProfileNames();

// How `profile`'s binaries resolve candidates of `directive`, with `ties`
// replacing the profile's tie rule for declare variant. Metadirectives keep
// the texts' tie rule in every profile (the first `when` wins a tie): no
// profile's compiler has been seen to differ.
ResolveOptions ResolveOptionsFor(CompilerProfile profile, Directive directive,
                                 TieChoice ties = TieChoice::kCompilerDefault);

// InvalidArgument ("L:C: ...") when `profile`'s compiler refuses `selector`
// although the texts allow it (clang 14: a score in `condition(...)`), or
// does not implement its directive (GCC 12 ignores metadirectives).
absl::Status CheckForCompiler(CompilerProfile profile,
                              const Selector& selector);

}  // namespace ctxsel::selector

#endif  // CTXSEL_SELECTOR_COMPILER_PROFILE_H_
