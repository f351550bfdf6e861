#include "selector/pragma/code_scanner.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::pragma {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Events(absl::string_view text) {
  CodeScanner scanner;
  std::vector<std::string> out;
  std::vector<LogicalLine> lines = SplitLogicalLines(text, Language::kC);
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const CodeEvent& e : scanner.Feed(lines[i], i)) {
      const char* kind = e.kind == CodeEvent::kFunctionDeclaration  ? "decl "
                         : e.kind == CodeEvent::kFunctionDefinition ? "def "
                         : e.kind == CodeEvent::kScope              ? "scope"
                                                                    : "other";
      out.push_back(kind + e.name +
                    (e.not_a_base.empty() ? "" : " (" + e.not_a_base + ")"));
    }
  }
  return out;
}

TEST(CodeScannerTest, FindsDeclarationsAndDefinitions) {
  EXPECT_THAT(Events("void f(int a);\n"
                     "static inline double *g(const char *s,\n int n) {\n"
                     "  if (n) { return 0; }\n  h(1);\n}\n"
                     "int x = max(1, 2);\n"
                     "typedef int (*fp)(int);\n"
                     "struct S { int a; };\n"
                     "int table[] = {1, 2};\n"),
              ElementsAre("decl f", "def g", "other", "other",
                          "scope (a class)", "other", "other"));
}

TEST(CodeScannerTest, FollowsNamespacesClassesAndTemplates) {
  EXPECT_THAT(Events("namespace ns {\n"
                     "template <typename T, int N = sizeof(T)>\n"
                     "T twice(T x) { return x + x; }\n"
                     "class A {\n public:\n  A() : v(0) {}\n  ~A();\n"
                     "  int get() const { return v; }\n int v;\n};\n"
                     "}  // namespace ns\n"
                     "void ns::later() __attribute__((noinline));\n"
                     "extern \"C\" {\nvoid c_fun(void);\n}\n"),
              ElementsAre("scope (a namespace)", "def ns::twice",
                          "scope (a class)", "def ns::A::A (a constructor)",
                          "decl ns::A::~A (a destructor)", "def ns::A::get",
                          "other", "decl ns::later",
                          "scope (an extern \"C\" block)", "decl c_fun"));
}

TEST(CodeScannerTest, QualifiedNamesOperatorsAndDeclarators) {
  EXPECT_THAT(
      Events("namespace a { namespace b {\n"
             "struct V { V operator+(const V&) const; bool operator()(int);\n"
             "  operator bool() const; };\n"
             "V operator-(V x, V y) { return x; }\n"
             "void *operator new[](unsigned long n);\n"
             "} }\n"
             "a::b::V::V(int) {}\n"
             "int x, f(int);\n"
             "void g(int), h(int);\n"
             "std::map<int, int> m(int);\n"
             "template <class T> struct W { };\n"),
      ElementsAre("scope (a namespace)", "scope (a namespace)",
                  "scope (a class)", "decl a::b::V::operator+",
                  "decl a::b::V::operator()", "decl a::b::V::operator bool",
                  "def a::b::operator-", "decl a::b::operator new[]",
                  "def a::b::V::V (a constructor)",
                  "decl f (a declaration with several declarators)",
                  "decl g (a declaration with several declarators)", "decl m",
                  "scope (a class template)"));
}

TEST(CodeScannerTest, KnowsTheCurrentFunction) {
  CodeScanner scanner;
  std::vector<LogicalLine> lines =
      SplitLogicalLines("void f() {\n  x();\n}\n", Language::kC);
  scanner.Feed(lines[0], 0);
  EXPECT_EQ(scanner.current_function(), "f");
  EXPECT_FALSE(scanner.at_declaration_scope());
  scanner.Feed(lines[1], 1);
  scanner.Feed(lines[2], 2);
  EXPECT_EQ(scanner.current_function(), "");
  EXPECT_TRUE(scanner.at_declaration_scope());
}

TEST(FortranScopesTest, TracksProcedures) {
  FortranScopes scopes;
  std::vector<std::string> seen;
  for (const LogicalLine& l : SplitLogicalLines(
           "module m\ncontains\nsubroutine vxv(a)\n  do i = 1, n\n  end do\n"
           "  if (x) then\n  endif\nend subroutine\n"
           "real function f(x)\n  interface\n    subroutine g()\n"
           "    end subroutine g\n  end interface\nend function f\n"
           "end module m\n",
           Language::kFortran)) {
    scopes.Feed(l);
    seen.push_back(scopes.current_procedure());
  }
  EXPECT_THAT(seen, ElementsAre("", "", "vxv", "vxv", "vxv", "vxv", "vxv", "",
                                "f", "f", "g", "f", "f", "", "", ""));
}

}  // namespace
}  // namespace ctxsel::pragma
