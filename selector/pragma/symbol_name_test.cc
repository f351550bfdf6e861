#include "selector/pragma/symbol_name.h"

#include "gtest/gtest.h"

namespace ctxsel::pragma {
namespace {

selector::Selector Parse(absl::string_view text) {
  absl::StatusOr<selector::Selector> s = selector::Selector::Parse(
      text, selector::Directive::kBeginDeclareVariant);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

TEST(SymbolNameTest, EncodingIsInjectiveAndIdentifierSafe) {
  EXPECT_EQ(EncodeSymbolPart("ab_1"), "ab__1");
  EXPECT_EQ(EncodeSymbolPart("a b"), "a_20b");
  EXPECT_NE(EncodeSymbolPart("a_20b"), EncodeSymbolPart("a b"));
  EXPECT_NE(EncodeSymbolPart("a__"), EncodeSymbolPart("a_5F"));
  for (char c : EncodeSymbolPart("device={arch(\"x-y\")}")) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  }
}

TEST(SymbolNameTest, EqualIffEquivalent) {
  const std::string a =
      VariantSymbolName("f", Parse("device={kind(gpu), arch(nvptx)}"));
  const std::string b =
      VariantSymbolName("f", Parse("device = { arch(nvptx), kind(gpu) }"));
  const std::string c =
      VariantSymbolName("f", Parse("device={kind(gpu), arch(amdgcn)}"));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.rfind("f$ompvariant$", 0), 0u);
  EXPECT_NE(VariantSymbolName("g", Parse("device={kind(gpu)}")),
            VariantSymbolName("f", Parse("device={kind(gpu)}")));
}

// The example at the top of symbol_name.h.
TEST(SymbolNameTest, HeaderExample) {
  EXPECT_EQ(VariantSymbolName("my_fun", Parse("device={kind(gpu)}")),
            "my_fun$ompvariant$device_3D_7Bkind_28gpu_29_7D");
}

}  // namespace
}  // namespace ctxsel::pragma
