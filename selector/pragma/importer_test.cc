#include "selector/pragma/importer.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "selector/pragma/symbol_name.h"

namespace ctxsel::pragma {
namespace {

using selector::Directive;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Canonical(absl::string_view text,
                      Directive kind = Directive::kDeclareVariant) {
  absl::StatusOr<selector::Selector> s = selector::Selector::Parse(text, kind);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? s->ToString() : "";
}

std::vector<std::string> Errors(const ImportResult& r) {
  std::vector<std::string> out;
  for (const ImportError& e : r.errors) out.push_back(e.ToString());
  return out;
}

TEST(ImporterTest, StackedDeclareVariantsTakeTheFollowingBase) {
  ImportResult r = ImportVariants("a.c",
                                  "#pragma omp declare variant(p_f) "
                                  "match(construct={parallel})\n"
                                  "#pragma omp declare variant(t_f) \\\n"
                                  "    match(construct={target})\n"
                                  "// a comment\n"
                                  "void f(int n,\n       double *v);\n");
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_EQ(r.variants[0].base, "f");
  EXPECT_EQ(r.variants[0].variant, "p_f");
  EXPECT_EQ(r.variants[0].selector, Canonical("construct={parallel}"));
  EXPECT_EQ(r.variants[0].selector_text, "construct={parallel}");
  EXPECT_EQ(r.variants[0].location.ToString(), "a.c:1:1");
  EXPECT_EQ(r.variants[1].variant, "t_f");
  EXPECT_EQ(r.variants[1].base, "f");
  EXPECT_EQ(r.variants[1].location.line, 2);
}

TEST(ImporterTest, AdjustAndAppendArgsAreKept) {
  ImportResult r = ImportVariants(
      "a.cpp",
      "#pragma omp declare variant(f_gpu) match(construct={dispatch}) "
      "adjust_args(need_device_ptr: a, b) adjust_args(nothing: n) "
      "append_args(interop(target, targetsync), interop(target))\n"
      "void f(float *a, float *b, int n);\n");
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 1u);
  const ImportedVariant& v = r.variants[0];
  ASSERT_EQ(v.adjust_args.size(), 2u);
  EXPECT_EQ(v.adjust_args[0].op, "need_device_ptr");
  EXPECT_THAT(v.adjust_args[0].args, ElementsAre("a", "b"));
  EXPECT_EQ(v.adjust_args[1].op, "nothing");
  EXPECT_THAT(v.append_args, ElementsAre(ElementsAre("target", "targetsync"),
                                         ElementsAre("target")));
}

TEST(ImporterTest, NestedBeginDeclareVariantAppendsOuterSelectors) {
  const char* text =
      "int my_fun(int);\n"
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "#pragma omp begin declare variant "
      "match(implementation={vendor(nvidia)})\n"
      "int my_fun(int x) { return x + 1; }\n"
      "#pragma omp end declare variant\n"
      "#pragma omp begin declare variant match(device={kind(gpu)}, "
      "implementation={vendor(amd)})\n"
      "int my_fun(int x) { return x + 2; }\n"
      "#pragma omp end declare variant\n"
      "int my_fun(int x) { return x; }\n"
      "#pragma omp end declare variant\n";
  ImportResult r = ImportVariants("n.c", text);
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 3u);
  const ImportedVariant& nv = r.variants[0];
  EXPECT_EQ(nv.base, "my_fun");
  EXPECT_EQ(nv.directive, Directive::kBeginDeclareVariant);
  EXPECT_EQ(nv.selector,
            Canonical("implementation={vendor(nvidia)}, device={kind(gpu)}",
                      Directive::kBeginDeclareVariant));
  EXPECT_EQ(nv.selector_text, "implementation={vendor(nvidia)}");
  EXPECT_THAT(nv.enclosing_selector_texts, ElementsAre("device={kind(gpu)}"));
  EXPECT_EQ(nv.location.ToString(), "n.c:4:5");
  // The inner kind(gpu) is equivalent to the outer one: not appended twice.
  EXPECT_EQ(r.variants[1].selector,
            Canonical("device={kind(gpu)}, implementation={vendor(amd)}",
                      Directive::kBeginDeclareVariant));
  EXPECT_EQ(r.variants[2].selector,
            Canonical("device={kind(gpu)}", Directive::kBeginDeclareVariant));
  EXPECT_THAT(r.variants[2].enclosing_selector_texts, IsEmpty());
  // Symbol names: equal iff the effective selectors are equivalent.
  EXPECT_EQ(r.variants[2].variant,
            VariantSymbolName(
                "my_fun", *selector::Selector::Parse("device={kind(gpu)}")));
  EXPECT_NE(r.variants[0].variant, r.variants[1].variant);
  EXPECT_NE(r.variants[1].variant, r.variants[2].variant);
}

TEST(ImporterTest, EquivalentRegionsGiveEqualSymbols) {
  // Two overloads: one function defined twice would be a redefinition.
  ImportResult r = ImportVariants(
      "e.cpp",
      "#pragma omp begin declare variant match(device={kind(gpu), "
      "arch(nvptx)})\n"
      "void f(int) {}\n"
      "#pragma omp end declare variant\n"
      "#pragma omp begin declare variant match(device={arch(nvptx)})\n"
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "void f(double) {}\n"
      "#pragma omp end declare variant\n"
      "#pragma omp end declare variant\n");
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_EQ(r.variants[0].selector, r.variants[1].selector);
  EXPECT_EQ(r.variants[0].variant, r.variants[1].variant);
}

TEST(ImporterTest, DeclareVariantInsideARegionGetsTheEffectiveSelector) {
  ImportResult r = ImportVariants(
      "d.c",
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "#pragma omp declare variant(g_nv) match(device={arch(nvptx)})\n"
      "void g(void);\n"
      "#pragma omp end declare variant\n");
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_EQ(r.variants[0].variant, "g_nv");
  EXPECT_EQ(r.variants[0].selector,
            Canonical("device={arch(nvptx), kind(gpu)}"));
  EXPECT_THAT(r.variants[0].enclosing_selector_texts,
              ElementsAre("device={kind(gpu)}"));
}

TEST(ImporterTest, CommentsStringsAndIfZeroDoNotConfuse) {
  ImportResult r = ImportVariants(
      "c.c",
      "/* #pragma omp end declare variant */\n"
      "// #pragma omp declare variant(x) match(bad)\n"
      "const char *s = \"#pragma omp end declare variant\";\n"
      "#if 0\n"
      "#pragma omp declare variant(dead) match(construct={parallel})\n"
      "#endif\n"
      "#pragma omp declare variant(live) /* c */ match(construct={parallel})\n"
      "void f(void);\n");
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_EQ(r.variants[0].variant, "live");
}

TEST(ImporterTest, MetadirectiveKeepsClauseOrder) {
  ImportResult r = ImportVariants(
      "m.c",
      "void f(int n) {\n"
      "  #pragma omp metadirective when(device={arch(nvptx)}: teams loop) \\\n"
      "      when(implementation={vendor(amd)}: ) otherwise(parallel loop)\n"
      "  for (;;) {}\n"
      "  #pragma omp metadirective when(user={condition(n > 8)}: parallel) "
      "default(nothing)\n"
      "}\n");
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.metadirectives.size(), 2u);
  const ImportedMetadirective& m = r.metadirectives[0];
  EXPECT_EQ(m.function, "f");
  EXPECT_EQ(m.location.ToString(), "m.c:2:3");
  ASSERT_EQ(m.when.size(), 2u);
  EXPECT_EQ(m.when[0].selector,
            Canonical("device={arch(nvptx)}", Directive::kMetadirective));
  EXPECT_EQ(m.when[0].directive, "teams loop");
  EXPECT_EQ(m.when[1].directive, "");
  EXPECT_EQ(m.when[1].location.line, 3);
  EXPECT_EQ(m.otherwise, "parallel loop");
  EXPECT_EQ(m.otherwise_clause, "otherwise");
  EXPECT_EQ(r.metadirectives[1].otherwise_clause, "default");
  EXPECT_EQ(r.metadirectives[1].otherwise, "nothing");
}

TEST(ImporterTest, Fortran) {
  ImportResult r = ImportVariants(
      "v.f90",
      "module m\ncontains\n"
      "subroutine vxv(v1, v2, v3)\n"
      "  !$OMP DECLARE VARIANT(p_vxv) MATCH(CONSTRUCT={PARALLEL})\n"
      "  !$omp declare variant(t_vxv) &\n"
      "  !$omp& match(construct={target})\n"
      "  integer :: v1(:)\n"
      "end subroutine\n"
      "!$omp declare variant(base_saxpy: avx512_saxpy) &\n"
      "!$omp   match(device={isa(\"core-avx512\")})\n"
      "end module\n");
  ASSERT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 3u);
  EXPECT_EQ(r.variants[0].base, "vxv");
  EXPECT_EQ(r.variants[0].variant, "p_vxv");
  EXPECT_EQ(r.variants[0].selector, Canonical("construct={parallel}"));
  EXPECT_EQ(r.variants[1].variant, "t_vxv");
  EXPECT_EQ(r.variants[1].location.ToString(), "v.f90:5:3");
  EXPECT_EQ(r.variants[2].base, "base_saxpy");
  EXPECT_EQ(r.variants[2].variant, "avx512_saxpy");
}

struct BadSource {
  const char* file;
  const char* text;
  const char* error;
};

TEST(ImporterTest, ErrorsNameFileLineAndColumn) {
  const BadSource cases[] = {
      {"e.c", "int x;\n#pragma omp end declare variant\n",
       "e.c:2:1: end declare variant without a matching begin declare "
       "variant"},
      {"e.c",
       "\n  #pragma omp begin declare variant match(device={kind(gpu)})\n"
       "void f(void) {}\n",
       "e.c:2:3: begin declare variant is never closed by end declare "
       "variant"},
      {"e.c", "#pragma omp declare variant(g)\nvoid f(void);\n",
       "e.c:1:1: declare variant has no match clause"},
      {"e.c",
       "#pragma omp begin declare variant\n#pragma omp end declare variant\n",
       "e.c:1:1: begin declare variant has no match clause"},
      {"e.c",
       "#pragma omp declare variant(g) match(device={kind(gpu)})\nint x;\n",
       "e.c:1:1: declare variant is not followed by a function"},
      {"e.c", "#pragma omp declare variant(g) match(device={kind(gpu)})\n",
       "e.c:1:1: declare variant is not followed by a function"},
      {"e.c",
       "#pragma omp declare variant(g) match(construct={parallel})\n"
       "#pragma omp end declare variant\n",
       "e.c:1:1: declare variant is not followed by a function"},
      {"e.c",
       "#pragma omp declare variant(g) \\\n   match(devce={kind(gpu)})\n"
       "void f(void);\n",
       "e.c:2:10: "},
      {"e.c",
       "#pragma omp declare variant(g) match(construct={parallel}) "
       "adjust_args(need_host_ptr: a)\nvoid f(int *a);\n",
       "unknown adjust_args operation 'need_host_ptr'"},
      {"e.c",
       "#pragma omp declare variant(g) match(construct={parallel}) "
       "append_args(interop(device))\nvoid f(int *a);\n",
       "unknown interop type 'device'"},
      {"e.c",
       "#pragma omp declare variant(g) match(construct={parallel}) "
       "match(construct={target})\nvoid f(void);\n",
       "e.c:1:60: more than one match clause"},
      {"e.c",
       "#pragma omp declare variant(g) match(construct={parallel}) "
       "nowait\nvoid f(void);\n",
       "e.c:1:60: unknown clause 'nowait' on declare variant"},
      {"e.c", "#pragma omp metadirective when(device={arch(nvptx)} teams)\n",
       "e.c:1:32: when needs 'context-selector: directive'"},
      {"e.c", "#pragma omp metadirective otherwise(simd) default(for)\n",
       "e.c:1:43: 'default' after 'otherwise'"},
      {"e.f90", "!$omp declare variant(g) match(construct={parallel})\n",
       "e.f90:1:1: declare variant without base-proc-name outside a procedure"},
  };
  for (const BadSource& c : cases) {
    ImportResult r = ImportVariants(c.file, c.text);
    ASSERT_FALSE(r.errors.empty()) << c.text;
    EXPECT_THAT(r.errors[0].ToString(), ::testing::HasSubstr(c.error))
        << c.text;
  }
}

TEST(ImporterTest, EverySelectorErrorPositionIsRebasedToTheFile) {
  // Both positions of a duplicate, on a selector that starts at column 44.
  ImportResult r = ImportVariants(
      "errors.c",
      "int x;\n\n\n\n\n\n"
      "    #pragma omp declare variant(g_cpu) match(device={kind(gpu), "
      "arch(nvptx), kind(cpu)})\n"
      "void g(void);\n");
  EXPECT_THAT(Errors(r), ElementsAre("errors.c:7:78: trait selector 'kind' "
                                     "given twice in the device trait set "
                                     "(first at 7:54)"));
  // The two positions on different physical lines of one logical line.
  r = ImportVariants("c.c",
                     "#pragma omp declare variant(g) match(device={kind(gpu), "
                     "\\\n    kind(cpu)})\nvoid g(void);\n");
  EXPECT_THAT(Errors(r), ElementsAre("c.c:2:5: trait selector 'kind' given "
                                     "twice in the device trait set (first at "
                                     "1:46)"));
}

TEST(ImporterTest, EffectiveSelectorErrorsPointIntoEachRegion) {
  // The outer region's kind is appended after the inner's: it is the one
  // given twice, in the outer directive's text.
  ImportResult r = ImportVariants(
      "n.c",
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "  #pragma omp begin declare variant match(implementation={vendor(llvm)}"
      ", device={kind(cpu)})\n"
      "void f(void) {}\n"
      "  #pragma omp end declare variant\n"
      "#pragma omp end declare variant\n");
  EXPECT_THAT(
      Errors(r),
      ElementsAre("n.c:1:49: trait selector 'kind' given twice in the device "
                  "trait set (first at 2:82) (in the effective selector of "
                  "'device={kind(cpu)}, implementation={vendor(llvm)}' nested "
                  "in 'device={kind(gpu)}')",
                  "n.c:3:6: definition of f is skipped: its begin declare "
                  "variant (line 2) is invalid"));
}

TEST(ImporterTest, ErrorsDoNotHideOtherVariants) {
  ImportResult r = ImportVariants(
      "e.c",
      "#pragma omp declare variant(g) match(devce={kind(gpu)})\n"
      "void f(void);\n"
      "#pragma omp declare variant(h) match(device={kind(gpu)})\n"
      "void f(void);\n");
  EXPECT_EQ(r.errors.size(), 1u);
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_EQ(r.variants[0].variant, "h");
}

}  // namespace
}  // namespace ctxsel::pragma

namespace ctxsel::pragma {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// "base variant" per variant.
std::vector<std::string> Bases(const ImportResult& r) {
  std::vector<std::string> out;
  for (const ImportedVariant& v : r.variants) {
    out.push_back(v.base + " " + v.variant);
  }
  return out;
}

std::vector<std::string> Warnings(const ImportResult& r) {
  std::vector<std::string> out;
  for (const ImportWarning& w : r.warnings) out.push_back(w.ToString());
  return out;
}

// Item 2: the other spellings of a directive are read, not skipped.
TEST(ImporterKindsTest, PragmaOperatorAndAttributeSyntax) {
  ImportResult r = ImportVariants(
      "a.cpp",
      "_Pragma(\"omp declare variant(f_gpu) match(device={kind(gpu)})\")\n"
      "void f(int);\n"
      "[[omp::directive(declare variant(g_gpu) match(device={kind(gpu)}))]]\n"
      "void g(int);\n"
      "[[omp::sequence(directive(declare variant(h1) "
      "match(device={kind(gpu)})), omp::directive(declare variant(h2) "
      "match(device={kind(cpu)})))]] void h(int);\n"
      "[[using omp: decl(declare variant(k_gpu) match(device={kind(gpu)}))]]\n"
      "void k(int);\n"
      "void m() {\n"
      "  [[omp::directive(metadirective when(device={kind(gpu)}: teams) "
      "otherwise(parallel))]]\n"
      "  {}\n"
      "}\n");
  EXPECT_THAT(Errors(r), IsEmpty());
  EXPECT_THAT(Bases(r),
              ElementsAre("f f_gpu", "g g_gpu", "h h1", "h h2", "k k_gpu"));
  EXPECT_EQ(r.variants[0].location.line, 1);
  EXPECT_EQ(r.variants[0].location.column, 1);
  ASSERT_EQ(r.metadirectives.size(), 1u);
  EXPECT_EQ(r.metadirectives[0].function, "m");
}

TEST(ImporterKindsTest, FixedFormFortranByExtensionOrOption) {
  const char* text =
      "      SUBROUTINE VXV(V1, V2)\n"
      "C$OMP DECLARE VARIANT(P_VXV)\n"
      "     & MATCH(CONSTRUCT={PARALLEL})\n"
      "*$OMP DECLARE VARIANT(T_VXV) MATCH(CONSTRUCT={TARGET})\n"
      "      END SUBROUTINE\n";
  ImportResult r = ImportVariants("vxv.F", text);
  EXPECT_THAT(Errors(r), IsEmpty());
  EXPECT_THAT(Bases(r), ElementsAre("vxv p_vxv", "vxv t_vxv"));
  ImportOptions fixed;
  fixed.fixed_form = true;
  EXPECT_THAT(Bases(ImportVariants("vxv.f90", text, fixed)),
              ElementsAre("vxv p_vxv", "vxv t_vxv"));
  // Read as free form, the fixed sentinels are warned about, not dropped
  // silently.
  ImportResult free = ImportVariants("vxv.f90", text);
  EXPECT_THAT(free.variants, IsEmpty());
  EXPECT_THAT(Warnings(free),
              ElementsAre(HasSubstr("vxv.f90:2:1: warning: a fixed-form"),
                          HasSubstr("vxv.f90:4:1: warning: a fixed-form")));
}

TEST(ImporterKindsTest, SkippedConstructsAreWarnedAbout) {
  ImportResult r =
      ImportVariants("w.c",
                     "#include \"variants.h\"\n"
                     "#define DECLARE_GPU _Pragma(\"omp declare variant(f_gpu) "
                     "match(device={kind(gpu)})\")\n"
                     "#if __has_include(<cuda.h>)\n"
                     "#endif\n");
  EXPECT_THAT(Warnings(r), ElementsAre(HasSubstr("w.c:1:"), HasSubstr("w.c:2:"),
                                       HasSubstr("w.c:3:")));
}

// Item 3: only the branch the compiler sees is read.
TEST(ImporterKindsTest, IfdefSelectsOneBeginDeclareVariant) {
  const char* text =
      "#ifdef USE_NVPTX\n"
      "#pragma omp begin declare variant match(device={arch(nvptx)})\n"
      "#else\n"
      "#pragma omp begin declare variant match(device={arch(amdgcn)})\n"
      "#endif\n"
      "void f(void) {}\n"
      "#pragma omp end declare variant\n";
  ImportResult amd = ImportVariants("p.c", text);
  EXPECT_THAT(Errors(amd), IsEmpty());
  ASSERT_EQ(amd.variants.size(), 1u);
  EXPECT_THAT(amd.variants[0].selector, HasSubstr("amdgcn"));
  ImportOptions nv;
  nv.defines["USE_NVPTX"] = "1";
  ImportResult nvptx = ImportVariants("p.c", text, nv);
  ASSERT_EQ(nvptx.variants.size(), 1u);
  EXPECT_THAT(nvptx.variants[0].selector, HasSubstr("nvptx"));
}

TEST(ImporterKindsTest, DefinedNamesInSelectorsAreExpanded) {
  ImportOptions options;
  options.defines["MIN_N"] = "1024";
  ImportResult r = ImportVariants(
      "m.c",
      "#define GPU_ARCH nvptx\n"
      "#pragma omp declare variant(f_gpu) match(device={arch(GPU_ARCH)}, "
      "user={condition(n > MIN_N)})\n"
      "void f(int n);\n",
      options);
  EXPECT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_THAT(r.variants[0].selector, HasSubstr("arch(nvptx)"));
  EXPECT_THAT(r.variants[0].selector, HasSubstr("1024"));
}

// Item 4: base functions.
TEST(ImporterKindsTest, QualifiedBasesAndOperators) {
  ImportResult r = ImportVariants(
      "q.cpp",
      "namespace a {\n"
      "#pragma omp declare variant(f_gpu) match(device={kind(gpu)})\n"
      "void f();\n"
      "}\n"
      "namespace b {\n"
      "#pragma omp declare variant(f_gpu) match(device={kind(gpu)})\n"
      "void f();\n"
      "struct M {\n"
      "#pragma omp declare variant(add_gpu) match(device={kind(gpu)})\n"
      "  M operator+(const M&) const;\n"
      "};\n"
      "}\n");
  EXPECT_THAT(Errors(r), IsEmpty());
  EXPECT_THAT(Bases(r), ElementsAre("a::f f_gpu", "b::f f_gpu",
                                    "b::M::operator+ add_gpu"));
}

TEST(ImporterKindsTest, WhatCannotBeABaseIsAnError) {
  struct Case {
    const char* code;
    const char* message;
  } cases[] = {
      {"namespace n {\nvoid f();\n}\n", "not a namespace"},
      {"struct S {\nvoid f();\n};\n", "not a class"},
      {"extern \"C\" {\nvoid f();\n}\n", "not an extern \"C\" block"},
      {"template <class T> struct S {\nvoid f();\n};\n",
       "not a class template"},
      {"void f(), g();\n", "several declarators"},
      {"struct S {\n#pragma omp declare variant(v) match(device={kind(gpu)})\n"
       "S();\n};\n",
       "S::S is a constructor"},
      {"struct S {\n#pragma omp declare variant(v) match(device={kind(gpu)})\n"
       "~S();\n};\n",
       "S::~S is a destructor"},
  };
  for (const Case& c : cases) {
    const std::string text = absl::StartsWith(c.code, "struct S {\n#pragma")
                                 ? std::string(c.code)
                                 : std::string(
                                       "#pragma omp declare variant(v) "
                                       "match(device={kind(gpu)})\n") +
                                       c.code;
    ImportResult r = ImportVariants("b.cpp", text);
    EXPECT_THAT(r.variants, IsEmpty()) << c.code;
    EXPECT_THAT(Errors(r), ElementsAre(HasSubstr(c.message))) << c.code;
  }
  // A template function is a base.
  EXPECT_THAT(Bases(ImportVariants(
                  "t.cpp",
                  "#pragma omp declare variant(v) match(device={kind(gpu)})\n"
                  "template <typename T> T twice(T x);\n")),
              ElementsAre("twice v"));
}

// Item 5: Fortran operators in condition().
TEST(ImporterKindsTest, ProgramConditionsImportAsRuntimeOnly) {
  ImportResult r = ImportVariants(
      "rt.c",
      "struct S { int n; };\n"
      "#pragma omp declare variant(v_call) match(user={condition(foo())})\n"
      "#pragma omp declare variant(v_sizeof) "
      "match(user={condition(sizeof(x) > 4)})\n"
      "#pragma omp declare variant(v_member) match(user={condition(s.n > 3)})\n"
      "#pragma omp declare variant(v_arrow) match(user={condition(p->n)})\n"
      "void f(struct S s, struct S *p, double x);\n");
  EXPECT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 4u);
  EXPECT_EQ(r.variants[0].selector, "user={condition(foo())}");
  EXPECT_EQ(r.variants[1].selector, "user={condition(sizeof(x) > 4)}");
  EXPECT_EQ(r.variants[2].selector, "user={condition(s.n > 3)}");
  EXPECT_EQ(r.variants[3].selector, "user={condition(p->n)}");
  for (const ImportedVariant& v : r.variants) {
    absl::StatusOr<selector::Selector> s =
        selector::Selector::Parse(v.selector);
    ASSERT_TRUE(s.ok()) << s.status();
    // The program's identifiers are not job variables.
    EXPECT_THAT(s->variables(), IsEmpty()) << v.selector;
  }
  // Fortran's component selector is not C's modulo: `s%n` reads no job
  // variables s and n (it used to be `s % n > 3`).
  ImportResult f = ImportVariants(
      "rt.f90",
      "subroutine f(s, a)\n"
      "!$omp declare variant(g) match(user={condition(s%n > 3)})\n"
      "!$omp declare variant(h) match(user={condition(a(1) .gt. 0)})\n"
      "end subroutine\n");
  EXPECT_THAT(Errors(f), IsEmpty());
  ASSERT_EQ(f.variants.size(), 2u);
  EXPECT_EQ(f.variants[0].selector, "user={condition((((s.n)) > ((3))))}");
  EXPECT_EQ(f.variants[1].selector, "user={condition((((a(1))) > ((0))))}");
  for (const ImportedVariant& v : f.variants) {
    EXPECT_THAT(selector::Selector::Parse(v.selector)->variables(), IsEmpty())
        << v.selector;
  }
}

TEST(ImporterKindsTest, FortranLogicalOperators) {
  ImportResult r = ImportVariants(
      "c.f90",
      "subroutine f(n, big)\n"
      "!$omp declare variant(g) match(user={condition(n .gt. 4 .and. "
      ".not. n .eq. 7 .or. .false. .eqv. .true.)})\n"
      "!$omp declare variant(h) match(user={condition(n /= 3 .and. n .le. "
      "9 .neqv. n .lt. 2)})\n"
      "end subroutine\n");
  EXPECT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 2u);
  // .not. binds looser than .eq.; .eqv. loosest of all.
  EXPECT_THAT(r.variants[0].selector,
              HasSubstr("condition((n > 4 && !(n == 7) || 0) == 1)"));
  EXPECT_THAT(r.variants[1].selector, HasSubstr("n != 3"));
  ImportResult bad = ImportVariants(
      "c.f90",
      "subroutine f(n)\n"
      "!$omp declare variant(g) match(user={condition(n .xor. 1)})\n"
      "end subroutine\n");
  EXPECT_THAT(Errors(bad),
              ElementsAre(HasSubstr("c.f90:2:50: Fortran expression: unknown "
                                    "Fortran operator '.xor.'")));
}

// Item 7: errors.
TEST(ImporterKindsTest, BadBeginStillPairsWithItsEnd) {
  ImportResult r = ImportVariants(
      "e.c",
      "#pragma omp begin declare variant match(device={kind(gpu)}\n"
      "void f(void) {}\n"
      "#pragma omp end declare variant\n"
      "#pragma omp begin declare variant match(device={kind(gpu)}) bogus\n"
      "void g(void) {}\n"
      "#pragma omp end declare variant\n");
  EXPECT_THAT(Errors(r),
              ElementsAre(HasSubstr("e.c:1:40: unbalanced parenthesis"),
                          HasSubstr("e.c:2:6: definition of f is skipped"),
                          HasSubstr("e.c:4:61: unknown clause 'bogus'"),
                          HasSubstr("e.c:5:6: definition of g is skipped")));
  EXPECT_EQ(r.errors[1].kernel, "f");
}

TEST(ImporterKindsTest, MetadirectiveVariantsAreValidated) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"#pragma omp metadirective default(bad_directive)",
       "'bad_directive' is not an OpenMP directive"},
      {"#pragma omp metadirective when(device={kind(gpu)}: metadirective "
       "default(teams))",
       "must not be a metadirective"},
      {"#pragma omp begin metadirective when(device={kind(gpu)}: barrier)",
       "'barrier' is a standalone directive"},
      {"#pragma omp begin metadirective when(device={kind(gpu)}: target "
       "update to(x))",
       "'target update' is a standalone directive"},
  };
  for (const Case& c : cases) {
    ImportResult r =
        ImportVariants("m.c", std::string("void f() {\n") + c.text + "\n}\n");
    EXPECT_THAT(Errors(r), ElementsAre(HasSubstr(c.message))) << c.text;
  }
  ImportResult ok = ImportVariants(
      "m.c",
      "void f() {\n#pragma omp metadirective when(device={kind(gpu)}: "
      "target teams distribute parallel for) when(user={condition(1)}: "
      "barrier) otherwise(nothing)\n}\n");
  EXPECT_THAT(Errors(ok), IsEmpty());
}

TEST(ImporterKindsTest, ErrorsNameTheirKernel) {
  ImportResult r = ImportVariants(
      "k.c",
      "#pragma omp declare variant(f1) match(device={kind(gpu)})\n"
      "#pragma omp declare variant(f2) match(device={kind(nonsense)})\n"
      "void f(void);\n"
      "#pragma omp declare variant(g1) match(device={kind(gpu)})\n"
      "void g(void);\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].kernel, "f");
  EXPECT_THAT(Bases(r), ElementsAre("f f1", "g g1"));
}

}  // namespace
}  // namespace ctxsel::pragma

// Issue 26 item 3: spec edges seen on public files.
namespace ctxsel::pragma {
namespace {

// OpenMP 5.2 §3.1: `directive-name [[,] clause [[,] clause] ...]`: a comma
// may precede the first clause too.
TEST(ImporterSpecEdgesTest, ACommaMayPrecedeTheFirstClause) {
  ImportResult fortran = ImportVariants(
      "c.f90",
      "subroutine sub()\n"
      "  !$omp declare variant(vsub), match(construct={parallel})\n"
      "end subroutine\n");
  EXPECT_THAT(Errors(fortran), IsEmpty());
  EXPECT_THAT(Bases(fortran), ElementsAre("sub vsub"));
  ImportResult c = ImportVariants(
      "c.c",
      "#pragma omp declare variant(v), match(device={kind(gpu)})\n"
      "void f(void);\n");
  EXPECT_THAT(Errors(c), IsEmpty());
  EXPECT_THAT(Bases(c), ElementsAre("f v"));
}

// A trait's parentheses hold at least one property (5.1 §2.3.2 grammar).
TEST(ImporterSpecEdgesTest, EmptyTraitParenthesesAreErrors) {
  for (const char* match : {"implementation={reverse_offload()}",
                            "construct={parallel()}", "device={kind()}"}) {
    ImportResult r =
        ImportVariants("e.c", std::string("#pragma omp declare variant(v) "
                                          "match(") +
                                  match + ")\nvoid f(void);\n");
    EXPECT_THAT(r.variants, IsEmpty()) << match;
    EXPECT_THAT(Errors(r), ElementsAre(HasSubstr("e.c:1:"))) << match;
  }
}

// 5.1 §2.3.5, C++: not for a virtual, defaulted or deleted function.
TEST(ImporterSpecEdgesTest, DefaultedDeletedAndVirtualFunctionsAreNotBases) {
  struct Case {
    const char* declaration;
    const char* message;
  } cases[] = {
      {"S& operator=(const S&) = default;", "defaulted"},
      {"S& operator=(S&&) = delete;", "deleted"},
      {"void g() = delete;", "deleted"},
      {"virtual void h();", "virtual"},
  };
  for (const Case& c : cases) {
    ImportResult r = ImportVariants(
        "d.cpp", std::string("struct S {\n#pragma omp declare variant(v) "
                             "match(device={kind(gpu)})\n") +
                     c.declaration + "\n};\n");
    EXPECT_THAT(r.variants, IsEmpty()) << c.declaration;
    EXPECT_THAT(Errors(r), ElementsAre(HasSubstr(c.message))) << c.declaration;
  }
}

// The variant is a name (5.1 §2.3.5: variant-name), never an expression.
TEST(ImporterSpecEdgesTest, AVariantNameIsAName) {
  for (const char* variant : {"1 + 2", "f()", "a b", ""}) {
    ImportResult r = ImportVariants(
        "n.c", std::string("#pragma omp declare variant(") + variant +
                   ") match(device={kind(gpu)})\n"
                   "void f(void);\n");
    EXPECT_THAT(r.variants, IsEmpty()) << variant;
    EXPECT_THAT(Errors(r), ElementsAre(HasSubstr("n.c:1:"))) << variant;
  }
  EXPECT_THAT(
      Bases(ImportVariants(
          "n.cpp",
          "#pragma omp declare variant(ns::v) match(device={kind(gpu)})\n"
          "void f(void);\n")),
      ElementsAre("f ns::v"));
}

// `requires(...)` (5.1) and the 5.0 spellings of the same requirements in
// one selector: both are implementation traits, each scored once.
TEST(ImporterSpecEdgesTest, RequiresMixesWithTheOlderSpelling) {
  ImportResult r = ImportVariants(
      "r.c",
      "#pragma omp declare variant(v) match(implementation={"
      "requires(unified_shared_memory), atomic_default_mem_order(seq_cst)})\n"
      "void f(void);\n");
  EXPECT_THAT(Errors(r), IsEmpty());
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_THAT(r.variants[0].selector, HasSubstr("atomic_default_mem_order"));
  EXPECT_THAT(r.variants[0].selector, HasSubstr("unified_shared_memory"));
}

// A directive in a branch the preprocessor skips is named, not lost silently.
TEST(ImporterSpecEdgesTest, SkippedBranchesWarnOfTheirDirectives) {
  ImportResult r = ImportVariants(
      "s.c",
      "#ifdef __NVPTX__\n"
      "#pragma omp declare variant(f_nv) match(device={arch(nvptx)})\n"
      "#endif\n"
      "#if 0\n"
      "#pragma omp declare variant(f_off) match(device={kind(gpu)})\n"
      "#endif\n"
      "void f(void);\n");
  EXPECT_THAT(Errors(r), IsEmpty());
  EXPECT_THAT(r.variants, IsEmpty());
  EXPECT_THAT(Warnings(r),
              ElementsAre(AllOf(HasSubstr("s.c:2:"), HasSubstr("__NVPTX__")),
                          HasSubstr("s.c:5:")));
}

TEST(ImporterSpecEdgesTest, ARedefinitionInARegionIsAnError) {
  ImportResult r = ImportVariants(
      "x.c",
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "int f(int x) { return x; }\n"
      "int f(int x) { return x + 1; }\n"
      "#pragma omp end declare variant\n");
  EXPECT_THAT(Errors(r),
              ElementsAre(AllOf(HasSubstr("x.c:3:"), HasSubstr("redefinition"),
                                HasSubstr("line 2"))));
  // Across two regions whose effective selectors are equivalent, too; an
  // overload (C++) is another function.
  ImportResult across = ImportVariants(
      "y.cpp",
      "#pragma omp begin declare variant match(device={kind(gpu), "
      "arch(nvptx)})\n"
      "int f(int x) { return x; }\n"
      "int f(double x) { return 1; }\n"
      "#pragma omp end declare variant\n"
      "#pragma omp begin declare variant match(device={arch(nvptx), "
      "kind(gpu)})\n"
      "int f(int x) { return -x; }\n"
      "#pragma omp end declare variant\n");
  EXPECT_THAT(Errors(across), ElementsAre(AllOf(HasSubstr("y.cpp:6:"),
                                                HasSubstr("redefinition"))));
  // C has no overloads: a name defined twice is a redefinition.
  ImportResult c = ImportVariants(
      "z.c",
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "int f(int x) { return x; }\n"
      "int f(long y) { return 1; }\n"
      "#pragma omp end declare variant\n");
  EXPECT_THAT(Errors(c), ElementsAre(AllOf(HasSubstr("z.c:3:"),
                                           HasSubstr("redefinition"))));
}

TEST(ImporterSpecEdgesTest, RegionVariantsAreLocatedAtTheirName) {
  ImportResult r = ImportVariants(
      "l.c",
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "static int\n"
      "twice(int x)\n"
      "{\n"
      "  return 2 * x;\n"
      "}\n"
      "#pragma omp end declare variant\n");
  ASSERT_EQ(r.variants.size(), 1u);
  EXPECT_EQ(r.variants[0].location.line, 3);
  EXPECT_EQ(r.variants[0].location.column, 1);
}

}  // namespace
}  // namespace ctxsel::pragma
