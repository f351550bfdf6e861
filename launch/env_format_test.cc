#include "launch/env_format.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::launch {
namespace {

using ::testing::HasSubstr;

const LaunchEnvironment kGpu = {
    {"CTXSEL_VARIANT", "saxpy_nv"},
    {"CTXSEL_DEVICE", "n1/gpu0"},
    {"CUDA_VISIBLE_DEVICES", "GPU-8c5b4a1e-0000-1111"},
    {"OMP_DEFAULT_DEVICE", "0"},
};

TEST(EnvFormatTest, ShellQuotesForEval) {
  EXPECT_EQ(*FormatEnv(kGpu, EnvFormat::kShell),
            "export CTXSEL_VARIANT='saxpy_nv'\n"
            "export CTXSEL_DEVICE='n1/gpu0'\n"
            "export CUDA_VISIBLE_DEVICES='GPU-8c5b4a1e-0000-1111'\n"
            "export OMP_DEFAULT_DEVICE='0'\n");
  EXPECT_EQ(*FormatEnv({{"X", "it's"}}, EnvFormat::kShell),
            "export X='it'\\''s'\n");
}

// A Slurm TaskProlog's `export NAME=value` takes the value literally: the
// quotes of the shell format used to reach the task.
TEST(EnvFormatTest, SlurmAndDotenvAreUnquoted) {
  EXPECT_EQ(*FormatEnv(kGpu, EnvFormat::kSlurm),
            "export CTXSEL_VARIANT=saxpy_nv\n"
            "export CTXSEL_DEVICE=n1/gpu0\n"
            "export CUDA_VISIBLE_DEVICES=GPU-8c5b4a1e-0000-1111\n"
            "export OMP_DEFAULT_DEVICE=0\n");
  EXPECT_EQ(*FormatEnv(kGpu, EnvFormat::kDotenv),
            "CTXSEL_VARIANT=saxpy_nv\n"
            "CTXSEL_DEVICE=n1/gpu0\n"
            "CUDA_VISIBLE_DEVICES=GPU-8c5b4a1e-0000-1111\n"
            "OMP_DEFAULT_DEVICE=0\n");
  EXPECT_EQ(*FormatEnv({{"CTXSEL_RUNTIME_ONLY_VARIANTS", "a,b"},
                        {"X", "host@n1:/x+y=z"},
                        {"EMPTY", ""}},
                       EnvFormat::kDotenv),
            "CTXSEL_RUNTIME_ONLY_VARIANTS=a,b\nX=host@n1:/x+y=z\nEMPTY=\n");
}

TEST(EnvFormatTest, LiteralFormatsRefuseValuesThatNeedQuoting) {
  for (const char* value :
       {"a b", "it's", "$HOME", "a\"b", "x;y", "a\nb", "*", "~", "a\\b"}) {
    for (EnvFormat format : {EnvFormat::kSlurm, EnvFormat::kDotenv}) {
      absl::StatusOr<std::string> text =
          FormatEnv({{"OK", "1"}, {"BAD", value}}, format);
      ASSERT_FALSE(text.ok()) << value;
      EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(text.status().message(), HasSubstr("BAD"));
    }
    EXPECT_TRUE(FormatEnv({{"BAD", value}}, EnvFormat::kShell).ok()) << value;
  }
}

TEST(EnvFormatTest, NamesAreChecked) {
  for (const char* name : {"", "1X", "A-B", "A B", "A=B"}) {
    EXPECT_FALSE(FormatEnv({{name, "1"}}, EnvFormat::kShell).ok()) << name;
  }
  EXPECT_TRUE(FormatEnv({{"_A1", "1"}}, EnvFormat::kDotenv).ok());
}

TEST(EnvFormatTest, ParsesTheFormatNames) {
  EXPECT_EQ(*ParseEnvFormat("env"), EnvFormat::kShell);
  EXPECT_EQ(*ParseEnvFormat("slurm"), EnvFormat::kSlurm);
  EXPECT_EQ(*ParseEnvFormat("dotenv"), EnvFormat::kDotenv);
  EXPECT_FALSE(ParseEnvFormat("json").ok());
  EXPECT_FALSE(ParseEnvFormat("ENV").ok());
}

}  // namespace
}  // namespace ctxsel::launch
