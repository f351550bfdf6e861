// preprocessor.h: the part of the C preprocessor that decides which OpenMP
// directives a compiler sees.
//
// The importer reads a source as the compiler would: only the active
// branches of `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else` (evaluated with
// `defined()`, the macros `#define`d so far in the file and those given as
// -D/-U flags), and with object-like macros expanded in `#pragma omp` lines.
// What it cannot decide it says: an `#if` it cannot evaluate (a
// function-like macro, `__has_include`, an operator the expression engine
// lacks) reads its first branch with a warning; a `#include "file"` is not
// followed, with a warning; so is a macro whose body holds an OpenMP
// directive (it is not expanded where it is used).
//
// Predefined: `_OPENMP` (202011, OpenMP 5.1, as `-fopenmp` does) unless
// -U'd. Names that are not macros are 0 in `#if`, as in C.
//
// Example:
//
//   Preprocessor pp({{"USE_GPU", "1"}}, {});
//   for (const LogicalLine& line : lines) {
//     if (!pp.Feed(line, &notes)) continue;  // a `#` line or a dead branch
//     LogicalLine expanded = pp.Expand(line, 0);
//   }
#ifndef CTXSEL_SELECTOR_PRAGMA_PREPROCESSOR_H_
#define CTXSEL_SELECTOR_PRAGMA_PREPROCESSOR_H_

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "selector/pragma/source_text.h"

namespace ctxsel::pragma {

// Value of `_OPENMP` for OpenMP 5.1.
inline constexpr char kOpenMpVersionMacro[] = "202011";

class Preprocessor {
 public:
  // `defines`: -DNAME[=VALUE] (VALUE "1" when absent); `undefines`: -UNAME,
  // applied after the defines.
  Preprocessor(const std::map<std::string, std::string>& defines,
               const std::vector<std::string>& undefines);

  // Reads one logical line in file order. Returns true when the compiler
  // would see it as code or as `#pragma`; false for the other `#` lines and
  // for every line of an inactive branch. Warnings go to `notes`.
  bool Feed(const LogicalLine& line, std::vector<SourceNote>* notes);

  // `line` with the object-like macros from offset `from` on expanded
  // (outside literals, recursively, never a macro inside its own
  // expansion). Expanded text takes the position of the macro's name.
  LogicalLine Expand(const LogicalLine& line, size_t from) const;

  // Whether the last line fed is in a branch the compiler does not read,
  // and why, for a warning: "'#ifdef __NVPTX__' at line 1 is false".
  bool skipping() const { return !active(); }
  std::string WhySkipping() const;

 private:
  enum class Truth { kFalse, kTrue, kUndecidable };
  struct Group {
    bool parent_active;
    bool active;
    bool decided;  // a taken branch was seen
    // Why this group's current branch is not read, when its parent is.
    std::string why_skipped;
  };

  Truth Evaluate(absl::string_view condition) const;
  // Expands `text`; false when it meets something it cannot expand into an
  // integer expression (function-like macro, unknown call).
  bool ExpandCondition(absl::string_view text, int depth,
                       absl::flat_hash_set<std::string>& active,
                       std::string& out) const;
  void Define(const LogicalLine& line, absl::string_view rest,
              std::vector<SourceNote>* notes);
  void ExpandInto(absl::string_view text, Position position, int depth,
                  absl::flat_hash_set<std::string>& active,
                  LogicalLine& out) const;
  bool active() const { return stack_.empty() || stack_.back().active; }

  absl::flat_hash_map<std::string, std::string> object_macros_;
  absl::flat_hash_set<std::string> function_macros_;
  std::vector<Group> stack_;
};

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_PREPROCESSOR_H_
