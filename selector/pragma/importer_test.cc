#include "selector/pragma/importer.h"

#include <string>
#include <vector>

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
  ImportResult r = ImportVariants(
      "e.c",
      "#pragma omp begin declare variant match(device={kind(gpu), "
      "arch(nvptx)})\n"
      "void f(void) {}\n"
      "#pragma omp end declare variant\n"
      "#pragma omp begin declare variant match(device={arch(nvptx)})\n"
      "#pragma omp begin declare variant match(device={kind(gpu)})\n"
      "void f(void) {}\n"
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
