// libFuzzer entry point for the pragma importer: logical lines, directive
// and clause parsing, the code scanner, begin/end nesting and selector
// errors re-based to the file. Checked beyond "no crash, no sanitizer
// report": every imported selector is the canonical text of a valid
// selector, and every error points into the file (1 <= line <= lines + 1,
// column >= 1).
//
// With libFuzzer: `tools/fuzz.sh` (bazel build --config=fuzz
// //selector/pragma:importer_fuzzer). Without it, importer_fuzzer_test.cc
// drives the same function in every `bazel test`.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "selector/pragma/importer.h"
#include "selector/selector.h"

namespace {

namespace sel = ::ctxsel::selector;
using ::ctxsel::pragma::ImportResult;
using ::ctxsel::pragma::Language;

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckCanonical(const std::string& text, sel::Directive directive) {
  absl::StatusOr<sel::Selector> s = sel::Selector::Parse(text, directive);
  Check(s.ok() && s->ToString() == text);
}

void CheckResult(const ImportResult& r, absl::string_view text) {
  const int lines =
      static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  for (const auto& e : r.errors) {
    Check(e.location.line >= 1 && e.location.line <= lines + 1);
    Check(e.location.column >= 1);
    Check(!e.message.empty());
  }
  for (const auto& v : r.variants) {
    Check(!v.base.empty() && !v.variant.empty());
    CheckCanonical(v.selector, v.directive);
  }
  for (const auto& m : r.metadirectives) {
    for (const auto& w : m.when) {
      CheckCanonical(w.selector, sel::Directive::kMetadirective);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  for (Language language : {Language::kC, Language::kFortran}) {
    CheckResult(ctxsel::pragma::ImportVariants("fuzz.src", text, language),
                text);
  }
  return 0;
}
