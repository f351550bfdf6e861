// code_scanner.h: just enough of C, C++ and Fortran to find functions.
//
// The importer needs three facts about the code around a directive: the
// function declared or defined right after a `declare variant`, the function
// definitions inside a `begin declare variant` region, and the function a
// metadirective sits in. CodeScanner reads the code lines (not preprocessor
// lines) of a C/C++ file and reports every function declaration and
// definition at namespace or class scope, with its qualified name; it
// follows namespaces, classes and `extern "C"` blocks, recognizes operator
// functions, constructors, destructors and declarations with several
// declarators, and skips function bodies and initializers.
// FortranScopes tracks the enclosing subroutine or function.
//
// Example:
//
//   CodeScanner scanner;
//   for (size_t i = 0; i < lines.size(); ++i) {
//     for (const CodeEvent& e : scanner.Feed(lines[i], i)) ...
//   }
#ifndef CTXSEL_SELECTOR_PRAGMA_CODE_SCANNER_H_
#define CTXSEL_SELECTOR_PRAGMA_CODE_SCANNER_H_

#include <optional>
#include <string>
#include <vector>

#include "selector/pragma/source_text.h"

namespace ctxsel::pragma {

// A declaration that ended at namespace or class scope.
struct CodeEvent {
  enum Kind {
    kFunctionDeclaration,  // `void f(int);`
    kFunctionDefinition,   // `void f(int) {`
    kOtherDeclaration,     // `int x = 3;`, `enum E {...};`
    kScope,                // `namespace n {`, `struct S {`, `extern "C" {`
  };
  Kind kind;
  // Function name qualified by its enclosing namespaces and classes
  // (`ns::Class::f`, `ns::operator+`); else empty.
  std::string name;
  size_t line = 0;    // index of the logical line given to Feed()
  size_t offset = 0;  // offset of the name (or of the declaration's end)
  // Why this function cannot be a base function (a constructor, a
  // destructor, several declarators), or for kScope what opens ("a
  // namespace"); empty otherwise.
  std::string not_a_base;
  // A function's parameter list, its tokens joined by single spaces
  // (`int x`), to tell overloads apart; else empty.
  std::string parameters;
  // Where in the file `offset` is: the name's own line, which may precede
  // the line whose `{` or `;` ended the declaration.
  Position position;
};

class CodeScanner {
 public:
  // Reads one code line; returns the declarations that ended on it.
  std::vector<CodeEvent> Feed(const LogicalLine& line, size_t line_index);

  // The function whose body the scanner is in, or "" at namespace scope.
  const std::string& current_function() const { return current_function_; }
  // True when not inside a function body or an initializer.
  bool at_declaration_scope() const;

 private:
  struct Token {
    std::string text;
    size_t line;
    size_t offset;
    Position position;  // in the file
  };
  enum class Block { kScope, kBody, kOpaque };
  struct OpenBlock {
    Block kind;
    std::string name;  // namespace or class name; "" for extern "C", bodies
    bool is_class = false;
  };
  // The declarator name of a function head.
  struct FunctionName {
    int first = -1;    // index in head_ of its first token (`~`, name)
    std::string name;  // unqualified: `f`, `~S`, `operator+`
    int params = -1;   // index of the `(` of the parameter list
  };

  void OnToken(Token token, std::vector<CodeEvent>& events);
  void OnOpenBrace(const Token& brace, std::vector<CodeEvent>& events);
  // The function declared by head_, if it declares one.
  std::optional<FunctionName> FindFunctionName() const;
  // `name` with the qualifiers written before it and the enclosing scopes.
  std::string QualifiedName(const FunctionName& name) const;
  // Why `name` cannot be a base function, or "".
  std::string NotABase(const FunctionName& name,
                       const std::string& qualified) const;
  CodeEvent FunctionEvent(CodeEvent::Kind kind, const FunctionName& name);

  std::vector<Token> head_;  // tokens of the declaration being read
  std::vector<OpenBlock> blocks_;
  int body_depth_ = 0;  // brace depth inside the current body/opaque block
  std::string current_function_;
};

// The enclosing Fortran program unit (subroutine/function) of each line.
class FortranScopes {
 public:
  // Reads one logical Fortran line (not a directive line).
  void Feed(const LogicalLine& line);
  // Innermost enclosing subroutine or function, or "" outside any.
  std::string current_procedure() const;

 private:
  std::vector<std::string> scopes_;  // "" for non-procedure units
};

}  // namespace ctxsel::pragma

#endif  // CTXSEL_SELECTOR_PRAGMA_CODE_SCANNER_H_
