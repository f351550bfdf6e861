#include "selector/expr.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ctxsel::selector::internal {
namespace {

// Binary operators with C precedence (higher binds tighter).
struct BinaryOp {
  absl::string_view token;
  ExprOp op;
  int precedence;
};
constexpr BinaryOp kBinaryOps[] = {
    {"||", ExprOp::kOr, 2}, {"&&", ExprOp::kAnd, 3}, {"==", ExprOp::kEq, 4},
    {"!=", ExprOp::kNe, 4}, {"<", ExprOp::kLt, 5},   {"<=", ExprOp::kLe, 5},
    {">", ExprOp::kGt, 5},  {">=", ExprOp::kGe, 5},  {"+", ExprOp::kAdd, 6},
    {"-", ExprOp::kSub, 6}, {"*", ExprOp::kMul, 7},  {"/", ExprOp::kDiv, 7},
    {"%", ExprOp::kMod, 7},
};
constexpr int kTernaryPrecedence = 1;
constexpr int kUnaryPrecedence = 8;
constexpr int kPrimaryPrecedence = 9;

const BinaryOp* FindBinary(const Token& t) {
  if (t.kind != TokenKind::kPunct) return nullptr;
  for (const BinaryOp& b : kBinaryOps) {
    if (b.token == t.text) return &b;
  }
  return nullptr;
}

const BinaryOp* FindBinary(ExprOp op) {
  for (const BinaryOp& b : kBinaryOps) {
    if (b.op == op) return &b;
  }
  return nullptr;
}

int Precedence(const ExprNode& n) {
  switch (n.op) {
    case ExprOp::kInt:
    case ExprOp::kVar:
      return n.op == ExprOp::kInt && n.value < 0 ? kUnaryPrecedence
                                                 : kPrimaryPrecedence;
    case ExprOp::kNeg:
    case ExprOp::kNot:
      return kUnaryPrecedence;
    case ExprOp::kCond:
      return kTernaryPrecedence;
    case ExprOp::kRuntimeOnly:
      return kPrimaryPrecedence;  // never a child: always the whole tree
    default:
      return FindBinary(n.op)->precedence;
  }
}

EvalResult Fail(EvalError e) {
  EvalResult r;
  r.error = e;
  return r;
}

EvalResult Value(int64_t v) {
  EvalResult r;
  r.value = v;
  return r;
}

EvalResult Arith(ExprOp op, int64_t x, int64_t y) {
  int64_t out = 0;
  switch (op) {
    case ExprOp::kAdd:
      if (__builtin_add_overflow(x, y, &out)) return Fail(EvalError::kOverflow);
      return Value(out);
    case ExprOp::kSub:
      if (__builtin_sub_overflow(x, y, &out)) return Fail(EvalError::kOverflow);
      return Value(out);
    case ExprOp::kMul:
      if (__builtin_mul_overflow(x, y, &out)) return Fail(EvalError::kOverflow);
      return Value(out);
    case ExprOp::kDiv:
    case ExprOp::kMod:
      if (y == 0) return Fail(EvalError::kDivisionByZero);
      if (x == INT64_MIN && y == -1) {
        return op == ExprOp::kMod ? Value(0) : Fail(EvalError::kOverflow);
      }
      return Value(op == ExprOp::kDiv ? x / y : x % y);
    case ExprOp::kLt:
      return Value(x < y);
    case ExprOp::kLe:
      return Value(x <= y);
    case ExprOp::kGt:
      return Value(x > y);
    case ExprOp::kGe:
      return Value(x >= y);
    case ExprOp::kEq:
      return Value(x == y);
    case ExprOp::kNe:
      return Value(x != y);
    default:
      return Fail(EvalError::kOverflow);  // not reached
  }
}

// What makes a condition runtime-only: C/C++ that the service's expression
// language lacks. Anything else that fails to parse is a syntax error.
constexpr absl::string_view kRuntimeOnlyPuncts[] = {".", "->", "[", "]",  "&",
                                                    "|", "^",  "~", "<<", ">>"};
constexpr absl::string_view kRuntimeOnlyKeywords[] = {"sizeof", "alignof",
                                                      "_Alignof"};

template <size_t N>
bool IsOneOf(absl::string_view text, const absl::string_view (&set)[N]) {
  return std::find(std::begin(set), std::end(set), text) != std::end(set);
}

bool EndsOperand(const Token& t) {
  return t.kind == TokenKind::kIdent || t.Is(")") || t.Is("]");
}

// Whether tokens[i] (with tokens[i - 1] before it when i > first) is a
// construct of the program's language, not the service's.
bool MarksRuntimeOnly(const std::vector<Token>& tokens, size_t first,
                      size_t i) {
  const Token& t = tokens[i];
  if (t.kind == TokenKind::kString) return true;
  if (t.kind == TokenKind::kPunct && IsOneOf(t.text, kRuntimeOnlyPuncts)) {
    return true;
  }
  if (t.kind == TokenKind::kIdent && IsOneOf(t.text, kRuntimeOnlyKeywords)) {
    return true;
  }
  if (i == first) return false;
  const Token& prev = tokens[i - 1];
  if (t.Is("(") && EndsOperand(prev)) return true;  // a call
  // A cast: `(int)x`, `(long)(y)`.
  return prev.Is(")") && (t.kind == TokenKind::kIdent ||
                          t.kind == TokenKind::kInt || t.Is("("));
}

std::string TokenText(const Token& t) {
  return t.kind == TokenKind::kString ? absl::StrCat("\"", t.text, "\"")
                                      : t.text;
}

// Whether tokens[i] is a prefix operator (`*p`, `-x`, `&v`, `!f()`, `~m`):
// it starts the run or follows an operator, `(`, `[`, `,` or `sizeof`.
bool IsPrefixOperator(const std::vector<Token>& tokens, size_t first,
                      size_t i) {
  const Token& t = tokens[i];
  if (!(t.Is("*") || t.Is("&") || t.Is("-") || t.Is("+") || t.Is("!") ||
        t.Is("~"))) {
    return false;
  }
  if (i == first) return true;
  const Token& prev = tokens[i - 1];
  if (prev.kind == TokenKind::kIdent) {
    return IsOneOf(prev.text, kRuntimeOnlyKeywords);
  }
  return prev.kind == TokenKind::kPunct && !prev.Is(")") && !prev.Is("]");
}

// Whether two punctuators written together would read as other tokens
// (`-` `>` as `->`) or as C's `--`, `++`.
bool WouldFuse(const Token& prev, const Token& next) {
  if (prev.kind != TokenKind::kPunct || next.kind != TokenKind::kPunct) {
    return false;
  }
  if ((prev.Is("-") || prev.Is("+")) && prev.text == next.text) return true;
  absl::StatusOr<std::vector<Token>> both = Lex(prev.text + next.text);
  return !both.ok() || both->size() != 3 || (*both)[0].text != prev.text;
}

// Whether tokens[i - 1] and tokens[i] are written without a space between.
bool Adjacent(const std::vector<Token>& tokens, size_t first, size_t i) {
  const Token& prev = tokens[i - 1];
  const Token& next = tokens[i];
  if (WouldFuse(prev, next)) return false;
  if (prev.Is("(") || prev.Is("[") || prev.Is(".") || prev.Is("->") ||
      IsPrefixOperator(tokens, first, i - 1)) {
    return true;
  }
  if (next.Is(")") || next.Is("]") || next.Is(",") || next.Is(".") ||
      next.Is("->")) {
    return true;
  }
  return (next.Is("(") || next.Is("[")) && EndsOperand(prev);
}

// The canonical text of tokens[first, end): C-like spacing when it lexes
// back to the same tokens, one space between tokens otherwise.
std::string RuntimeOnlyText(const std::vector<Token>& tokens, size_t first,
                            size_t end) {
  std::string compact, spaced;
  for (size_t i = first; i < end; ++i) {
    if (i > first) {
      if (!Adjacent(tokens, first, i)) compact.push_back(' ');
      spaced.push_back(' ');
    }
    compact += TokenText(tokens[i]);
    spaced += TokenText(tokens[i]);
  }
  absl::StatusOr<std::vector<Token>> again = Lex(compact);
  bool same = again.ok() && again->size() == end - first + 1;
  for (size_t i = first; same && i < end; ++i) {
    const Token& a = (*again)[i - first];
    same = a.kind == tokens[i].kind && a.text == tokens[i].text;
  }
  return same ? compact : spaced;
}

}  // namespace

std::string DescribeEvalError(const EvalResult& result) {
  switch (result.error) {
    case EvalError::kNone:
      return "";
    case EvalError::kUnknownVariable:
      return absl::StrCat("unknown variable ",
                          result.variable ? *result.variable : "?");
    case EvalError::kOverflow:
      return "integer overflow";
    case EvalError::kDivisionByZero:
      return "division by zero";
    case EvalError::kRuntimeOnly:
      return "the program decides";
  }
  return "";
}

void Expression::AddVariables(NameSet& names) const {
  for (const ExprNode& node : nodes_) {
    if (node.op == ExprOp::kVar) names.insert(node.name);
  }
}

bool Expression::ReadsVariable(bool (*pred)(absl::string_view name)) const {
  for (const ExprNode& node : nodes_) {
    if (node.op == ExprOp::kVar && pred(node.name)) return true;
  }
  return false;
}

EvalResult Expression::Evaluate(const Variables& variables) const {
  return Operand(root_, variables);
}

EvalResult Expression::Operand(int node, const Variables& variables) const {
  const ExprNode& n = nodes_[node];
  if (n.op == ExprOp::kInt) return Value(n.value);
  if (n.op != ExprOp::kVar) return Eval(node, variables);
  auto it = variables.find(n.name, n.hash);
  if (it == variables.end()) {
    EvalResult r = Fail(EvalError::kUnknownVariable);
    r.variable = &n.name;
    return r;
  }
  return Value(it->second);
}

EvalResult Expression::Eval(int node, const Variables& variables) const {
  const ExprNode& n = nodes_[node];
  switch (n.op) {
    case ExprOp::kInt:
    case ExprOp::kVar:
      return Operand(node, variables);
    case ExprOp::kNeg: {
      EvalResult a = Operand(n.a, variables);
      if (!a.ok()) return a;
      if (a.value == INT64_MIN) return Fail(EvalError::kOverflow);
      return Value(-a.value);
    }
    case ExprOp::kNot: {
      EvalResult a = Operand(n.a, variables);
      return a.ok() ? Value(a.value == 0) : a;
    }
    case ExprOp::kAnd:
    case ExprOp::kOr: {
      EvalResult a = Operand(n.a, variables);
      if (!a.ok()) return a;
      bool is_and = n.op == ExprOp::kAnd;
      if ((a.value != 0) != is_and) return Value(!is_and);  // short-circuit
      EvalResult b = Operand(n.b, variables);
      return b.ok() ? Value(b.value != 0) : b;
    }
    case ExprOp::kCond: {
      EvalResult a = Operand(n.a, variables);
      if (!a.ok()) return a;
      return Operand(a.value != 0 ? n.b : n.c, variables);
    }
    case ExprOp::kRuntimeOnly:
      return Fail(EvalError::kRuntimeOnly);
    default: {
      EvalResult a = Operand(n.a, variables);
      if (!a.ok()) return a;
      EvalResult b = Operand(n.b, variables);
      if (!b.ok()) return b;
      return Arith(n.op, a.value, b.value);
    }
  }
}

std::string Expression::Print(int node) const {
  const ExprNode& n = nodes_[node];
  auto child = [&](int c, int min_precedence) {
    std::string s = Print(c);
    return Precedence(nodes_[c]) < min_precedence ? absl::StrCat("(", s, ")")
                                                  : s;
  };
  switch (n.op) {
    case ExprOp::kInt:
      return absl::StrCat(n.value);
    case ExprOp::kVar:
    case ExprOp::kRuntimeOnly:
      return n.name;
    case ExprOp::kNeg:
    case ExprOp::kNot: {
      // Prefix operators chain without parentheses ("!-x"): parentheses
      // would nest the canonical text deeper than the input, past
      // kMaxNestingDepth. "- -x" keeps its space, as "--" is C's decrement.
      std::string operand = child(n.a, kUnaryPrecedence);
      absl::string_view op = n.op == ExprOp::kNeg ? "-" : "!";
      bool space = n.op == ExprOp::kNeg && operand[0] == '-';
      return absl::StrCat(op, space ? " " : "", operand);
    }
    case ExprOp::kCond:
      return absl::StrCat(child(n.a, kTernaryPrecedence + 1), " ? ", Print(n.b),
                          " : ", child(n.c, kTernaryPrecedence));
    default: {
      const BinaryOp* b = FindBinary(n.op);
      return absl::StrCat(child(n.a, b->precedence), " ", b->token, " ",
                          child(n.b, b->precedence + 1));
    }
  }
}

// Recursive descent with precedence climbing over a token vector.
class ExpressionParser {
 public:
  ExpressionParser(const std::vector<Token>& tokens, size_t& at)
      : tokens_(tokens), at_(at) {}

  absl::StatusOr<Expression> Run() {
    expr_.pos_ = tokens_[at_].pos;
    CTXSEL_ASSIGN_OR_RETURN(int root, Ternary(0));
    expr_.root_ = root;
    if (expr_.nodes_[root].op != ExprOp::kInt) {
      // Whole expression constant but not folded: it failed to evaluate.
      CTXSEL_RETURN_IF_ERROR(CheckConstant(root));
    }
    expr_.text_ = expr_.Print(root);
    return std::move(expr_);
  }

  static Expression RuntimeOnly(std::string text, Pos pos) {
    Expression e;
    e.nodes_.push_back(ExprNode{ExprOp::kRuntimeOnly, 0, text, -1, -1, -1});
    e.text_ = std::move(text);
    e.pos_ = pos;
    return e;
  }

 private:
  const Token& Peek() const { return tokens_[at_]; }
  // The token `ahead` places after Peek(), or the end token.
  const Token& Peek(size_t ahead) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  void Next() {
    if (tokens_[at_].kind != TokenKind::kEnd) ++at_;
  }

  absl::Status CheckConstant(int node) {
    for (const ExprNode& n : expr_.nodes_) {
      if (n.op == ExprOp::kVar) return absl::OkStatus();
    }
    Variables none;
    EvalResult r = expr_.Eval(node, none);
    return ErrorAt(expr_.pos_, absl::StrCat(DescribeEvalError(r),
                                            " in constant expression '",
                                            expr_.Print(node), "'"));
  }

  absl::StatusOr<int> Ternary(int depth) {
    if (depth > kMaxNestingDepth) {
      return ErrorAt(Peek().pos, "expression nesting too deep");
    }
    absl::StatusOr<int> cond = Binary(1 + kTernaryPrecedence, depth);
    if (!cond.ok() || !Peek().Is("?")) return cond;
    Next();
    CTXSEL_ASSIGN_OR_RETURN(int then, Ternary(depth + 1));
    if (!Peek().Is(":")) return Expected("':' of '?:'");
    Next();
    CTXSEL_ASSIGN_OR_RETURN(int otherwise, Ternary(depth + 1));
    return Add(ExprOp::kCond, *cond, then, otherwise);
  }

  absl::StatusOr<int> Binary(int min_precedence, int depth) {
    CTXSEL_ASSIGN_OR_RETURN(int left, Unary(depth));
    while (const BinaryOp* op = FindBinary(Peek())) {
      if (op->precedence < min_precedence) break;
      Next();
      CTXSEL_ASSIGN_OR_RETURN(int right, Binary(op->precedence + 1, depth + 1));
      CTXSEL_ASSIGN_OR_RETURN(int node, Add(op->op, left, right));
      left = node;
    }
    return left;
  }

  absl::StatusOr<int> Unary(int depth) {
    if (depth > kMaxNestingDepth) {
      return ErrorAt(Peek().pos, "expression nesting too deep");
    }
    if (Peek().Is("-") && Peek(1).kind == TokenKind::kInt) {
      // The sign belongs to the literal, so that INT64_MIN, which has no
      // positive literal to negate, reads back as the folded constant prints.
      Next();
      return Literal(Peek(), /*negative=*/true);
    }
    if (Peek().Is("-") || Peek().Is("!") || Peek().Is("+")) {
      std::string op = Peek().text;
      Next();
      absl::StatusOr<int> a = Unary(depth + 1);
      if (!a.ok() || op == "+") return a;
      return Add(op == "-" ? ExprOp::kNeg : ExprOp::kNot, *a);
    }
    return Primary(depth);
  }

  absl::StatusOr<int> Primary(int depth) {
    const Token& t = Peek();
    if (t.Is("(")) {
      Next();
      CTXSEL_ASSIGN_OR_RETURN(int inner, Ternary(depth + 1));
      if (!Peek().Is(")")) return Expected("')'");
      Next();
      return inner;
    }
    if (t.kind == TokenKind::kInt) return Literal(t, /*negative=*/false);
    if (t.kind == TokenKind::kIdent) {
      ExprNode n;
      if (t.text == "true" || t.text == "false") {
        n.value = t.text == "true";
      } else {
        n.op = ExprOp::kVar;
        n.name = t.text;
        n.hash = Variables::hasher{}(n.name);
      }
      Next();
      return Push(std::move(n));
    }
    return Expected("an expression");
  }

  // An integer literal token, negated when `negative` (then 2^63 fits).
  absl::StatusOr<int> Literal(const Token& t, bool negative) {
    ExprNode n;
    uint64_t v = 0;
    int base = 10;
    absl::string_view digits = t.text;
    if (digits.size() > 2 && digits[0] == '0' &&
        (digits[1] == 'x' || digits[1] == 'X')) {
      base = 16;
      digits.remove_prefix(2);
    }
    bool parsed = base == 16 ? absl::SimpleHexAtoi(digits, &v)
                             : absl::SimpleAtoi(digits, &v);
    bool digits_only =
        !digits.empty() &&
        std::all_of(digits.begin(), digits.end(), [&](char c) {
          unsigned char u = static_cast<unsigned char>(c);
          return base == 16 ? absl::ascii_isxdigit(u) : absl::ascii_isdigit(u);
        });
    if (!parsed && !digits_only) {
      return ErrorAt(t.pos,
                     absl::StrCat("invalid integer literal '", t.text, "'"));
    }
    uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0);
    if (!parsed || v > limit) {
      return ErrorAt(t.pos, absl::StrCat("integer literal '", t.text,
                                         "' does not fit in 64 bits"));
    }
    // -v computed in unsigned arithmetic: defined for v == 2^63 as well.
    n.value = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
    Next();
    return Push(std::move(n));
  }

  // Adds an operator node, folding it when all operands are constants and
  // the operation succeeds (a failing one is kept for a clear error later).
  absl::StatusOr<int> Add(ExprOp op, int a, int b = -1, int c = -1) {
    ExprNode n;
    n.op = op;
    n.a = a;
    n.b = b;
    n.c = c;
    int depth = 1 + std::max({Depth(a), Depth(b), Depth(c)});
    if (depth > kMaxExpressionDepth) {
      return ErrorAt(Peek().pos, "expression too deep");
    }
    int index = Push(std::move(n));
    depth_[index] = depth;
    bool all_constant = true;
    for (int k : {a, b, c}) {
      if (k >= 0 && expr_.nodes_[k].op != ExprOp::kInt) all_constant = false;
    }
    if (all_constant) {
      EvalResult r = expr_.Eval(index, Variables());
      if (r.ok()) {
        expr_.nodes_[index] = ExprNode{ExprOp::kInt, r.value, "", -1, -1, -1};
        depth_[index] = 1;
      }
    }
    return index;
  }

  int Depth(int node) const { return node < 0 ? 0 : depth_[node]; }

  int Push(ExprNode n) {
    expr_.nodes_.push_back(std::move(n));
    depth_.push_back(1);
    return static_cast<int>(expr_.nodes_.size()) - 1;
  }

  absl::Status Expected(absl::string_view what) {
    const Token& t = Peek();
    std::string found = t.kind == TokenKind::kEnd
                            ? std::string("end of input")
                            : absl::StrCat("'", t.text, "'");
    return ErrorAt(t.pos, absl::StrCat("expected ", what, ", found ", found));
  }

  const std::vector<Token>& tokens_;
  size_t& at_;
  Expression expr_;
  std::vector<int> depth_;
};

absl::StatusOr<Expression> ParseExpression(const std::vector<Token>& tokens,
                                           size_t& at) {
  return ExpressionParser(tokens, at).Run();
}

absl::StatusOr<Expression> ParseCondition(const std::vector<Token>& tokens,
                                          size_t& at) {
  // The balanced run of tokens up to the `)` or `,` that ends the property;
  // marks are checked first, as `sizeof *p` would also parse as a product.
  const size_t first = at;
  std::vector<absl::string_view> open;  // closing brackets expected
  bool runtime_only = false;
  size_t end = first;
  for (;; ++end) {
    const Token& t = tokens[end];
    if (t.kind == TokenKind::kEnd || t.Is("{") || t.Is("}")) break;
    if (open.empty() && (t.Is(")") || t.Is(","))) break;
    if (t.Is("(") || t.Is("[")) {
      if (open.size() >= static_cast<size_t>(kMaxNestingDepth)) {
        return ErrorAt(t.pos, "expression nesting too deep");
      }
      open.push_back(t.Is("(") ? ")" : "]");
    } else if (t.Is(")") || t.Is("]")) {
      if (open.empty() || !t.Is(open.back())) break;
      open.pop_back();
    }
    if (MarksRuntimeOnly(tokens, first, end)) runtime_only = true;
  }
  const bool balanced = tokens[end].Is(")") || tokens[end].Is(",");
  if (!runtime_only || !balanced || !open.empty()) {
    return ParseExpression(tokens, at);
  }
  at = end;
  return ExpressionParser::RuntimeOnly(RuntimeOnlyText(tokens, first, end),
                                       tokens[first].pos);
}

}  // namespace ctxsel::selector::internal
