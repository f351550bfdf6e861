#include "selector/parser.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "selector/canonical.h"

namespace ctxsel::selector::internal {
namespace {

std::string Describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kEnd:
      return "end of input";
    case TokenKind::kString:
      return absl::StrCat("\"", t.text, "\"");
    default:
      return absl::StrCat("'", t.text, "'");
  }
}

std::string SetNames() {
  std::vector<absl::string_view> names;
  for (const SetInfo& s : AllSets()) names.push_back(s.name);
  return absl::StrJoin(names, ", ");
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<SelectorAst> Run(Directive directive) {
    SelectorAst ast;
    ast.directive = directive;
    if (Peek().kind == TokenKind::kEnd) {
      return ErrorAt(Peek().pos, "empty context selector");
    }
    while (true) {
      CTXSEL_ASSIGN_OR_RETURN(TraitSet set, ParseSet());
      ast.sets.push_back(std::move(set));
      if (Peek().Is(",")) {
        Next();
        continue;
      }
      if (Peek().kind == TokenKind::kEnd) return ast;
      if (Peek().Is(")") || Peek().Is("}")) {
        return ErrorAt(
            Peek().pos,
            absl::StrCat("unbalanced brackets: unexpected ", Describe(Peek())));
      }
      return ErrorAt(Peek().pos,
                     absl::StrCat("trailing text ", Describe(Peek()),
                                  " after the context selector"));
    }
  }

 private:
  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(at_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  void Next() {
    if (Peek().kind != TokenKind::kEnd) ++at_;
  }

  absl::Status Expected(absl::string_view what) {
    return ErrorAt(Peek().pos, absl::StrCat("expected ", what, ", found ",
                                            Describe(Peek())));
  }

  // Consumes the closing bracket of the one opened at `open`.
  absl::Status Close(absl::string_view bracket, Pos open) {
    if (Peek().Is(bracket)) {
      Next();
      return absl::OkStatus();
    }
    if (Peek().kind == TokenKind::kEnd) {
      return ErrorAt(open, absl::StrCat("unbalanced brackets: missing '",
                                        bracket, "' for this bracket"));
    }
    if (Peek().Is(")") || Peek().Is("}")) {
      return ErrorAt(Peek().pos,
                     absl::StrCat("unbalanced brackets: expected '", bracket,
                                  "', found ", Describe(Peek())));
    }
    return Expected(absl::StrCat("',' or '", bracket, "'"));
  }

  absl::StatusOr<TraitSet> ParseSet() {
    const Token& name = Peek();
    if (name.kind != TokenKind::kIdent) return Expected("a trait set name");
    std::optional<SetId> id = FindSet(name.text);
    if (!id) {
      return ErrorAt(name.pos,
                     absl::StrCat("unknown trait set '", name.text,
                                  "' (expected one of ", SetNames(), ")"));
    }
    TraitSet set;
    set.id = *id;
    set.pos = name.pos;
    Next();
    if (!Peek().Is("="))
      return Expected(absl::StrCat("'=' after '", GetSetInfo(*id).name, "'"));
    Next();
    if (!Peek().Is("{")) return Expected("'{'");
    Pos open = Peek().pos;
    Next();
    if (Peek().Is("}")) {
      return ErrorAt(
          open, absl::StrCat("empty trait set '", GetSetInfo(*id).name, "'"));
    }
    std::vector<bool> property_spelling;
    while (true) {
      property_spelling.push_back(Peek().kind == TokenKind::kIdent &&
                                  !FindSelector(*id, Peek().text) &&
                                  FindPropertySelector(*id, Peek().text));
      CTXSEL_ASSIGN_OR_RETURN(TraitSelector t, ParseSelector(*id));
      set.selectors.push_back(std::move(t));
      if (!Peek().Is(",")) break;
      Next();
    }
    CTXSEL_RETURN_IF_ERROR(Close("}", open));
    CTXSEL_RETURN_IF_ERROR(MergePropertySpellings(set, property_spelling));
    return set;
  }

  // Properties written as selectors (`implementation={unified_address,
  // requires(reverse_offload)}`) join an unscored selector of theirs: the
  // one written out if there is one, else the first unscored spelling; one
  // meaning, one canonical form. A spelling with a score of its own, or one
  // beside a scored `requires(score(s): ...)`, stays apart: in 5.0 each was
  // its own trait selector, and joining would give its score to the other
  // requirements (or theirs to it).
  absl::Status MergePropertySpellings(TraitSet& set,
                                      const std::vector<bool>& spelling) {
    std::vector<TraitSelector> kept;
    std::vector<TraitSelector> merged;
    for (size_t i = 0; i < set.selectors.size(); ++i) {
      (spelling[i] ? merged : kept).push_back(std::move(set.selectors[i]));
    }
    for (TraitSelector& t : merged) {
      t.property_spelling = true;
      auto into = kept.end();
      if (!t.has_score) {
        into = std::find_if(kept.begin(), kept.end(), [&](const auto& k) {
          return k.id == t.id && !k.has_score;
        });
      }
      if (into == kept.end()) {
        kept.push_back(std::move(t));
        continue;
      }
      for (NameProperty& p : t.names) into->names.push_back(std::move(p));
      // Source order, so that a property given twice is reported where it
      // is repeated.
      std::stable_sort(into->names.begin(), into->names.end(),
                       [](const NameProperty& a, const NameProperty& b) {
                         return Before(a.pos, b.pos);
                       });
    }
    set.selectors = std::move(kept);
    return absl::OkStatus();
  }

  absl::Status UnknownSelector(SetId set, const Token& name) {
    absl::string_view set_name = GetSetInfo(set).name;
    std::vector<SetId> elsewhere = SetsWithSelector(name.text);
    if (!elsewhere.empty()) {
      std::vector<absl::string_view> names;
      for (SetId s : elsewhere) names.push_back(GetSetInfo(s).name);
      return ErrorAt(name.pos,
                     absl::StrCat("'", name.text, "' is not allowed in the ",
                                  set_name, " trait set (only in ",
                                  absl::StrJoin(names, ", "), ")"));
    }
    if (set == SetId::kConstruct) {
      return ErrorAt(name.pos,
                     absl::StrCat("unknown construct '", name.text,
                                  "' (context-matching constructs are target, "
                                  "teams, parallel, for, simd, dispatch)"));
    }
    return ErrorAt(name.pos, absl::StrCat("unknown trait selector '", name.text,
                                          "' in the ", set_name, " trait set"));
  }

  absl::StatusOr<TraitSelector> ParseSelector(SetId set) {
    const Token& name = Peek();
    if (name.kind != TokenKind::kIdent) return Expected("a trait selector");
    std::optional<SelectorId> id = FindSelector(set, name.text);
    if (!id) {
      std::optional<SelectorId> owner = FindPropertySelector(set, name.text);
      if (owner) return ParsePropertySpelling(*owner);
      return UnknownSelector(set, name);
    }
    TraitSelector t;
    t.id = *id;
    t.pos = name.pos;
    Next();
    if (!Peek().Is("(")) return t;
    Pos open = Peek().pos;
    Next();
    t.has_properties = true;
    // Selectors that need names say so themselves ("requires at least one").
    const PropertyKind kind = GetSelectorInfo(t.id).kind;
    if (kind == PropertyKind::kNone || kind == PropertyKind::kSimdClauses) {
      CTXSEL_RETURN_IF_ERROR(RefuseEmptyParentheses(name.text, open));
    }
    CTXSEL_RETURN_IF_ERROR(ParseOptionalScore(t));
    if (!Peek().Is(")")) {
      CTXSEL_RETURN_IF_ERROR(ParseProperties(t));
    }
    CTXSEL_RETURN_IF_ERROR(Close(")", open));
    return t;
  }

  // `parallel()`, `reverse_offload()`: the grammar's parentheses hold at
  // least one property (OpenMP 5.1 §2.3.2), so an empty pair is a typo for
  // the bare name, or a property left out.
  absl::Status RefuseEmptyParentheses(absl::string_view name, Pos open) {
    if (!Peek().Is(")")) return absl::OkStatus();
    return ErrorAt(open,
                   absl::StrCat("empty parentheses after '", name, "': write '",
                                name, "' alone, or give its properties"));
  }

  // `unified_address`, `atomic_default_mem_order(score(2): seq_cst)`: a
  // property of `owner` written as a selector, with the property's own
  // arguments as the selector's properties.
  absl::StatusOr<TraitSelector> ParsePropertySpelling(SelectorId owner) {
    TraitSelector t;
    t.id = owner;
    t.pos = Peek().pos;
    t.has_properties = true;
    NameProperty p;
    CTXSEL_RETURN_IF_ERROR(ParseClause(p, &t));
    t.names.push_back(std::move(p));
    return t;
  }

  // name | name(argument, ...): the validator checks names and counts.
  // String literals and integers are not clauses.
  absl::Status ParseRequiresClause(std::vector<NameProperty>& out) {
    if (Peek().kind != TokenKind::kIdent) return Expected("a requires clause");
    NameProperty p;
    CTXSEL_RETURN_IF_ERROR(ParseClause(p, /*scored=*/nullptr));
    out.push_back(std::move(p));
    return absl::OkStatus();
  }

  // The clause at the current identifier: `name` or `name(argument, ...)`.
  // With `scored` (a property written as a selector), `score(e):` may open
  // the parentheses and the list after it may be empty.
  absl::Status ParseClause(NameProperty& p, TraitSelector* scored) {
    p.name = Peek().text;
    p.pos = Peek().pos;
    Next();
    if (!Peek().Is("(")) return absl::OkStatus();
    Pos open = Peek().pos;
    Next();
    CTXSEL_RETURN_IF_ERROR(RefuseEmptyParentheses(p.name, open));
    if (scored != nullptr) {
      CTXSEL_RETURN_IF_ERROR(ParseOptionalScore(*scored));
      if (Peek().Is(")")) return Close(")", open);
    }
    CTXSEL_RETURN_IF_ERROR(ParseClauseArguments(p));
    return Close(")", open);
  }

  absl::Status ParseClauseArguments(NameProperty& clause) {
    while (true) {
      if (Peek().kind != TokenKind::kIdent) {
        return Expected(absl::StrCat("an argument of ", clause.name));
      }
      clause.arguments.push_back({Peek().text, Peek().pos});
      Next();
      if (!Peek().Is(",")) return absl::OkStatus();
      Next();
    }
  }

  // `score(e):` at the start of a selector's properties, if there.
  absl::Status ParseOptionalScore(TraitSelector& t) {
    if (Peek().kind != TokenKind::kIdent || Peek().text != "score") {
      return absl::OkStatus();
    }
    if (Peek(1).Is("(")) return ParseScore(t);
    // `score` followed by `,` or `)` is a property named score.
    if (Peek(1).Is(",") || Peek(1).Is(")")) return absl::OkStatus();
    return ErrorAt(Peek().pos,
                   "score needs its expression in parentheses: "
                   "score(expression):");
  }

  absl::Status ParseScore(TraitSelector& t) {
    t.score_pos = Peek().pos;
    Next();
    Pos open = Peek().pos;
    Next();
    CTXSEL_ASSIGN_OR_RETURN(Expression e, ParseExpression(tokens_, at_));
    CTXSEL_RETURN_IF_ERROR(Close(")", open));
    if (!Peek().Is(":")) return Expected("':' after score(...)");
    Next();
    t.has_score = true;
    t.score_expr = std::move(e);
    return absl::OkStatus();
  }

  absl::Status ParseProperties(TraitSelector& t) {
    const SelectorInfo& info = GetSelectorInfo(t.id);
    while (true) {
      absl::Status s;
      switch (info.kind) {
        case PropertyKind::kNone:
          return ErrorAt(Peek().pos,
                         absl::StrCat("construct selector '", info.name,
                                      "' takes no properties"));
        case PropertyKind::kExpression: {
          // Only a condition may be runtime-only: the service needs the
          // values of device_num and score.
          CTXSEL_ASSIGN_OR_RETURN(Expression e,
                                  t.id == SelectorId::kUserCondition
                                      ? ParseCondition(tokens_, at_)
                                      : ParseExpression(tokens_, at_));
          t.expressions.push_back(std::move(e));
          break;
        }
        case PropertyKind::kSimdClauses:
          s = ParseSimdClause(t.simd);
          break;
        case PropertyKind::kRequiresClauses:
          s = ParseRequiresClause(t.names);
          break;
        default:
          s = ParseName(t.names);
          break;
      }
      if (!s.ok()) return s;
      if (!Peek().Is(",")) return absl::OkStatus();
      Next();
    }
  }

  // name | "string" | name(args...) (an extension), kept as canonical text.
  // An integer is not a name (only an extension's argument).
  absl::Status ParseName(std::vector<NameProperty>& out) {
    if (Peek().kind == TokenKind::kInt) {
      return Expected("a property name (an identifier or a string)");
    }
    NameProperty p;
    p.pos = Peek().pos;
    p.extension = Peek().kind == TokenKind::kIdent && Peek(1).Is("(");
    CTXSEL_ASSIGN_OR_RETURN(std::string text, ParseExtension(0));
    p.name = std::move(text);
    out.push_back(std::move(p));
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> ParseExtension(int depth) {
    if (depth > kMaxNestingDepth) {
      return ErrorAt(Peek().pos, "properties nested too deep");
    }
    const Token& t = Peek();
    std::string text = t.text;
    if (t.kind == TokenKind::kString || t.kind == TokenKind::kInt) {
      Next();
      // Inside an extension, keep the quotes the canonical text needs.
      return depth > 0 && t.kind == TokenKind::kString ? NameText(text, false)
                                                       : text;
    }
    if (t.kind != TokenKind::kIdent) return Expected("a property name");
    Next();
    if (!Peek().Is("(")) return text;
    Pos open = Peek().pos;
    Next();
    std::vector<std::string> args;
    while (!Peek().Is(")")) {
      CTXSEL_ASSIGN_OR_RETURN(std::string arg, ParseExtension(depth + 1));
      args.push_back(std::move(arg));
      if (!Peek().Is(",")) break;
      Next();
    }
    CTXSEL_RETURN_IF_ERROR(Close(")", open));
    return absl::StrCat(text, "(", absl::StrJoin(args, ","), ")");
  }

  absl::Status ParseSimdClause(SimdProperties& simd) {
    const Token& name = Peek();
    if (name.kind != TokenKind::kIdent) return Expected("a simd clause");
    simd.clauses.push_back({name.text, name.pos});
    std::string clause = name.text;
    Next();
    if (clause == "inbranch" || clause == "notinbranch") {
      (clause == "inbranch" ? simd.inbranch : simd.notinbranch) = true;
      return absl::OkStatus();
    }
    if (clause != "simdlen" && clause != "aligned" && clause != "linear" &&
        clause != "uniform") {
      return ErrorAt(name.pos,
                     absl::StrCat("unknown simd clause '", clause,
                                  "' (expected simdlen, aligned, linear, "
                                  "uniform, inbranch or notinbranch)"));
    }
    if (!Peek().Is("(")) return Expected(absl::StrCat("'(' after ", clause));
    Pos open = Peek().pos;
    Next();
    CTXSEL_RETURN_IF_ERROR(clause == "simdlen" ? ParseSimdlen(simd)
                                               : ParseSimdList(clause, simd));
    return Close(")", open);
  }

  absl::Status ParseSimdlen(SimdProperties& simd) {
    Pos pos = Peek().pos;
    absl::StatusOr<Expression> e = ParseExpression(tokens_, at_);
    if (!e.ok()) return e.status();
    if (!e->constant() || e->value() <= 0) {
      return ErrorAt(pos, absl::StrCat("simdlen must be a positive constant, "
                                       "got '",
                                       e->text(), "'"));
    }
    simd.simdlen = e->value();
    return absl::OkStatus();
  }

  // aligned(a, b : 64), linear(i : step), uniform(n).
  absl::Status ParseSimdList(const std::string& clause, SimdProperties& simd) {
    std::vector<SimdProperties::Variable> vars;
    while (true) {
      if (Peek().kind != TokenKind::kIdent) return Expected("a variable name");
      vars.push_back({Peek().text, Peek().pos});
      Next();
      if (!Peek().Is(",")) break;
      Next();
    }
    if (clause == "uniform") {
      simd.uniform.insert(simd.uniform.end(), vars.begin(), vars.end());
      return absl::OkStatus();
    }
    if (clause == "aligned") {
      int64_t alignment = 0;
      if (Peek().Is(":")) {
        Next();
        CTXSEL_ASSIGN_OR_RETURN(int64_t a, ParseAlignment());
        alignment = a;
      }
      for (SimdProperties::Variable& v : vars) {
        simd.aligned.push_back({std::move(v.name), alignment, v.pos});
      }
      return absl::OkStatus();
    }
    LinearStep step;
    Pos step_pos;
    if (Peek().Is(":")) {
      Next();
      step_pos = Peek().pos;
      CTXSEL_ASSIGN_OR_RETURN(LinearStep s, ParseLinearStep());
      step = std::move(s);
    }
    for (SimdProperties::Variable& v : vars) {
      simd.linear.push_back({std::move(v.name), step, v.pos, step_pos});
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> ParseAlignment() {
    Pos pos = Peek().pos;
    absl::StatusOr<Expression> e = ParseExpression(tokens_, at_);
    if (!e.ok()) return e.status();
    if (!e->constant() || e->value() <= 0) {
      return ErrorAt(pos, absl::StrCat("aligned needs a positive constant, "
                                       "got '",
                                       e->text(), "'"));
    }
    return e->value();
  }

  // An integer constant (any sign) or one variable, which the validator
  // checks is uniform.
  absl::StatusOr<LinearStep> ParseLinearStep() {
    const size_t first = at_;
    Pos pos = Peek().pos;
    absl::StatusOr<Expression> e = ParseExpression(tokens_, at_);
    if (!e.ok()) return e.status();
    LinearStep step;
    if (e->constant()) {
      step.constant = e->value();
    } else if (at_ == first + 1 && tokens_[first].kind == TokenKind::kIdent) {
      step.uniform = tokens_[first].text;
    } else {
      return ErrorAt(pos, absl::StrCat("linear step must be an integer "
                                       "constant or a uniform variable, got '",
                                       e->text(), "'"));
    }
    return step;
  }

  std::vector<Token> tokens_;
  size_t at_ = 0;
};

}  // namespace

absl::StatusOr<SelectorAst> ParseSyntax(absl::string_view text,
                                        Directive directive) {
  if (text.size() > kMaxSelectorBytes) {
    return ErrorAt(Pos{},
                   absl::StrCat("context selector is ", text.size(),
                                " bytes; the limit is ", kMaxSelectorBytes));
  }
  CTXSEL_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  return Parser(std::move(tokens)).Run(directive);
}

}  // namespace ctxsel::selector::internal
