// libFuzzer entry point for the parser, validator, canonical form,
// expression evaluator, matcher and resolver. Properties checked beyond "no
// crash, no sanitizer report": a parsed selector's canonical text parses
// back to the same canonical text, and every error carries its parts
// (selector_error.h) with 1-based positions.
//
// With libFuzzer (clang): compile this file and the engine's .cc files with
// -fsanitize=fuzzer,address,undefined (see docs/selectors.md).
// Without it, selector_fuzzer_test.cc drives the same function.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "selector/selector.h"

namespace {

namespace sel = ::ctxsel::selector;

const sel::Context& FuzzContext() {
  static const sel::Context* ctx = [] {
    auto* c = new sel::Context;
    for (const char* name : {"target", "teams", "parallel", "for", "simd"}) {
      sel::AddConstruct(*c, name);
    }
    c->construct.back().simdlen = 8;
    c->construct.back().aligned["a"] = 16;
    c->device.kind = {"gpu", "nohost"};
    c->device.arch = {"nvptx"};
    c->device.isa = {"sm_70"};
    c->implementation.vendor = {"llvm"};
    c->implementation.requires_ = {"unified_shared_memory"};
    c->implementation.atomic_default_mem_order = "seq_cst";
    c->variables = {{"N", 64}, {"M", -1}, {"Z", 0}, {"B", INT64_MAX}};
    c->target_devices.devices[0].kind = {"gpu"};
    c->target_devices.devices[-1].kind = {"host"};
    return c;
  }();
  return *ctx;
}

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckError(const absl::Status& status) {
  std::optional<sel::SelectorError> e = sel::GetSelectorError(status);
  Check(e.has_value() && e->ToString() == status.message());
  Check(e->position.line >= 1 && e->position.column >= 1);
  Check(!e->first || (e->first->line >= 1 && e->first->column >= 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  for (sel::Directive d :
       {sel::Directive::kDeclareVariant, sel::Directive::kBeginDeclareVariant,
        sel::Directive::kMetadirective}) {
    absl::StatusOr<sel::Selector> s = sel::Selector::Parse(text, d);
    if (!s.ok()) {
      CheckError(s.status());
      continue;
    }
    std::string canonical = s->ToString();
    absl::StatusOr<sel::Selector> again = sel::Selector::Parse(canonical, d);
    Check(again.ok() && again->ToString() == canonical);
    const sel::Context& ctx = FuzzContext();
    (void)sel::MatchSelector(*s, ctx);
    absl::StatusOr<sel::Selector> effective = sel::EffectiveSelector(*s, *s);
    if (!effective.ok()) CheckError(effective.status());
    absl::StatusOr<sel::Resolution> r =
        sel::Resolve({{"a", *s}, {"b", *again}}, ctx);
    if (r.ok()) {
      sel::Explanation e = sel::Explain(*r, ctx.variables, ctx.target_devices);
      (void)e.ToText();
    }
  }
  return 0;
}
