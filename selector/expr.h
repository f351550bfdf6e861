// expr.h: the C-like integer expressions of `condition`, `score` and
// `device_num`.
//
// Integer and boolean literals, identifiers (job variables), `+ - * / %`,
// comparisons, `&& || !`, `?:` and parentheses over 64-bit signed integers.
// Overflow and division by zero are reported, never undefined behaviour;
// constant subexpressions are folded when parsed. A `-` right before an
// integer literal is part of it, so "-9223372036854775808" is INT64_MIN.
//
// A `condition` may also be any other C/C++/Fortran expression (OpenMP 5.1
// allows any): ParseCondition() keeps one that uses something this language
// lacks (a call, `sizeof`, member access, ...) as *runtime-only* opaque text
// that only the program can evaluate (kRuntimeOnlyMarks in expr.cc).
//
// Example:
//   size_t at = 0;
//   absl::StatusOr<Expression> e = ParseExpression(tokens, at);
//   EvalResult r = e->Evaluate(variables);
//   if (!r.ok()) return DescribeEvalError(r);   // "unknown variable N"
#ifndef CTXSEL_SELECTOR_EXPR_H_
#define CTXSEL_SELECTOR_EXPR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/lexer.h"
#include "selector/selector.h"

namespace ctxsel::selector::internal {

// Expression trees deeper than this are rejected (keeps evaluation's
// recursion bounded on any input).
inline constexpr int kMaxExpressionDepth = 256;

enum class ExprOp {
  kInt,
  kVar,
  kNeg,
  kNot,
  kMul,
  kDiv,
  kMod,
  kAdd,
  kSub,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
  kCond,
  kRuntimeOnly  // opaque program expression; `name` holds its text
};

struct ExprNode {
  ExprOp op = ExprOp::kInt;
  int64_t value = 0;           // kInt
  std::string name;            // kVar; kRuntimeOnly: the text
  int a = -1, b = -1, c = -1;  // operands (node indices)
  // kVar: Variables' hash of `name`, made once when parsed, so that a
  // lookup per evaluation does not hash the name again.
  size_t hash = 0;
};

enum class EvalError {
  kNone,
  kUnknownVariable,
  kOverflow,
  kDivisionByZero,
  kRuntimeOnly  // only the program can evaluate it
};

struct EvalResult {
  EvalError error = EvalError::kNone;
  int64_t value = 0;
  const std::string* variable = nullptr;  // for kUnknownVariable
  bool ok() const { return error == EvalError::kNone; }
};

// "unknown variable N", "integer overflow", "division by zero",
// "the program decides".
std::string DescribeEvalError(const EvalResult& result);

class Expression {
 public:
  // True when the expression has no identifiers; value() is then its value.
  bool constant() const { return nodes_[root_].op == ExprOp::kInt; }
  // True for a runtime-only condition (ParseCondition): never constant,
  // reads no job variables, and Evaluate() always fails with kRuntimeOnly.
  bool runtime_only() const { return nodes_[root_].op == ExprOp::kRuntimeOnly; }
  int64_t value() const { return nodes_[root_].value; }
  // Canonical text with minimal parentheses; it never nests deeper than the
  // parsed text, so it always parses again.
  const std::string& text() const { return text_; }
  Pos pos() const { return pos_; }
  // Renumbers the selector text its position refers to (effective
  // selectors, TextPosition::text).
  void ShiftText(int by) { pos_.text += by; }

  // Evaluates with `variables`; does not allocate.
  EvalResult Evaluate(const Variables& variables) const;

  // Adds the names of the job variables the expression reads to `names`
  // (none for a runtime-only one: its identifiers are the program's).
  void AddVariables(NameSet& names) const;
  // True when it reads a job variable for which `pred` is true; unlike
  // AddVariables it allocates nothing (Resolve asks once per candidate).
  bool ReadsVariable(bool (*pred)(absl::string_view name)) const;

 private:
  friend class ExpressionParser;
  EvalResult Eval(int node, const Variables& variables) const;
  // Eval, with a leaf (a literal, a variable) read in place: most
  // conditions compare two leaves (`N > 32`).
  EvalResult Operand(int node, const Variables& variables) const;
  std::string Print(int node) const;

  std::vector<ExprNode> nodes_;
  int root_ = 0;
  std::string text_;
  Pos pos_;
};

// Parses one expression starting at tokens[at]; on success `at` is the
// first token after it. Errors (syntax, a constant expression that
// overflows or divides by zero, nesting too deep) carry "L:C:".
absl::StatusOr<Expression> ParseExpression(const std::vector<Token>& tokens,
                                           size_t& at);

// Parses a `condition` property. When the balanced token run up to the
// closing `)` (or a `,`) uses something this language lacks (a call,
// `sizeof`, `.`, `->`, `[]`, bit operators, a string, a cast), the result is
// a runtime-only expression holding the run as canonical text, C-like
// spacing that lexes back to the same tokens. Otherwise ParseExpression(),
// so a typo in the service's own language (`N >`) is still an error.
absl::StatusOr<Expression> ParseCondition(const std::vector<Token>& tokens,
                                          size_t& at);

}  // namespace ctxsel::selector::internal

#endif  // CTXSEL_SELECTOR_EXPR_H_
