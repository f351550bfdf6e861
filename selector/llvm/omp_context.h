// omp_context.h: an engine document (context + candidates) expressed with
// LLVM's OpenMP context model (llvm/Frontend/OpenMP/OMPContext.h), for the
// side-by-side benchmark bench:corpus_llvm_bench. Not part of the engine
// and not built by CI (manual targets): it needs Debian's llvm-14-dev.
//
// LLVM 14 knows fewer traits than the engine; a document is expressible
// when every selector uses only what LLVM models: construct target, teams,
// parallel, for, simd (no clauses) and dispatch; device kind, arch (LLVM's
// list) and isa; implementation vendor (LLVM's list) and requirements
// without arguments; constant user conditions; constant scores. The
// context's construct set must hold only those constructs (an enclosing
// `distribute` changes positions LLVM cannot see); context names LLVM does
// not know are dropped, since no expressible selector can name them.
//
//   std::string why;
//   std::unique_ptr<LlvmDocument> d = ToLlvm(context, candidates, &why);
//   if (d) int best = d->BestVariant();  // declaration index or -1
#ifndef CTXSEL_SELECTOR_LLVM_OMP_CONTEXT_H_
#define CTXSEL_SELECTOR_LLVM_OMP_CONTEXT_H_

#include <memory>
#include <string>
#include <vector>

#include "selector/selector.h"

namespace ctxsel::selector::llvm_omp {

class LlvmDocument {
 public:
  virtual ~LlvmDocument() = default;
  // llvm::omp::getBestVariantMatchForContext over the candidates in
  // declaration order: the best applicable one's index, or -1.
  virtual int BestVariant() const = 0;
};

// The document for LLVM, or null with `why_not` saying what LLVM 14 cannot
// express ("device.vendor", "target_device", "construct distribute", ...).
// `context` and `candidates` must outlive the result (it refers to their
// ISA names).
std::unique_ptr<LlvmDocument> ToLlvm(const Context& context,
                                     const std::vector<Candidate>& candidates,
                                     std::string* why_not);

}  // namespace ctxsel::selector::llvm_omp

#endif  // CTXSEL_SELECTOR_LLVM_OMP_CONTEXT_H_
