#include "client/cli/eval_context.h"

#include <string>

#include "gtest/gtest.h"

namespace ctxsel::cli {
namespace {

using nlohmann::json;

TEST(ReadEvalContextTest, ReadsEveryField) {
  absl::StatusOr<selector::Context> ctx = ReadEvalContext(json::parse(R"({
      "construct": ["target", "teams",
                    {"name": "simd", "simdlen": 8, "aligned": {"a": 64},
                     "linear": ["i"], "uniform": ["n"], "notinbranch": true}],
      "device": {"kind": ["gpu", "nohost"], "arch": ["nvptx"],
                 "isa": ["sm_70"], "vendor": ["nvidia"], "extension": ["x"]},
      "target_devices": {"default": 1,
                         "devices": {"1": {"arch": ["amdgcn"]},
                                     "-1": {"kind": ["host"]}}},
      "implementation": {"vendor": ["llvm"], "requires": ["reverse_offload"],
                         "atomic_default_mem_order": "seq_cst",
                         "extension": []},
      "variables": {"N": 64, "tasking": true}})"));
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  ASSERT_EQ(ctx->construct.size(), 3u);
  EXPECT_EQ(ctx->construct[1].name, "teams");
  const selector::ConstructTrait& simd = ctx->construct[2];
  EXPECT_EQ(simd.name, "simd");
  EXPECT_EQ(simd.simdlen, 8);
  EXPECT_EQ(simd.aligned.at("a"), 64);
  EXPECT_TRUE(simd.linear.contains("i"));
  EXPECT_TRUE(simd.uniform.contains("n"));
  EXPECT_TRUE(simd.notinbranch);
  EXPECT_FALSE(simd.inbranch);
  EXPECT_TRUE(ctx->device.kind.contains("nohost"));
  EXPECT_TRUE(ctx->device.arch.contains("nvptx"));
  EXPECT_TRUE(ctx->device.isa.contains("sm_70"));
  EXPECT_TRUE(ctx->device.vendor.contains("nvidia"));
  EXPECT_TRUE(ctx->device.extension.contains("x"));
  EXPECT_EQ(ctx->target_devices.default_device, 1);
  EXPECT_TRUE(ctx->target_devices.devices.at(1).arch.contains("amdgcn"));
  EXPECT_TRUE(ctx->target_devices.devices.at(-1).kind.contains("host"));
  EXPECT_TRUE(ctx->implementation.vendor.contains("llvm"));
  EXPECT_TRUE(ctx->implementation.requires_.contains("reverse_offload"));
  EXPECT_EQ(ctx->implementation.atomic_default_mem_order, "seq_cst");
  EXPECT_EQ(ctx->variables.at("N"), 64);
  EXPECT_EQ(ctx->variables.at("tasking"), 1);
}

TEST(ReadEvalContextTest, LinearStepsAsAnObject) {
  absl::StatusOr<selector::Context> ctx = ReadEvalContext(json::parse(R"({
      "construct": [{"name": "simd", "linear": {"i": 2, "j": -1, "k": "n"},
                     "uniform": ["n"]}]})"));
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  const auto& linear = ctx->construct[0].linear;
  EXPECT_EQ(linear.at("i").constant, 2);
  EXPECT_EQ(linear.at("j").constant, -1);
  EXPECT_EQ(linear.at("k").uniform, "n");
  ctx = ReadEvalContext(
      json::parse(R"({"construct": [{"name": "simd", "linear": ["i"]}]})"));
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ(ctx->construct[0].linear.at("i"), selector::LinearStep{});
}

TEST(ReadEvalContextTest, NullIsTheEmptyContext) {
  absl::StatusOr<selector::Context> ctx = ReadEvalContext(json());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_TRUE(ctx->construct.empty());
  EXPECT_TRUE(ctx->device.kind.empty());
  EXPECT_TRUE(ctx->variables.empty());
}

// A bad field is named by its path in the document.
struct BadField {
  const char* context;
  const char* message;
};

constexpr BadField kBadFields[] = {
    {R"([])", "context must be an object"},
    {R"({"devcie": {}})", "unknown field 'devcie' in context"},
    {R"({"construct": "target"})", "context.construct must be an array"},
    {R"({"construct": ["target", 3]})",
     "context.construct[1] must be an object"},
    {R"({"construct": [{"simdlen": 8}]})",
     "context.construct[0].name must be a string"},
    {R"({"construct": [{"name": "simd", "simdlen": "8"}]})",
     "context.construct[0].simdlen must be an integer"},
    {R"({"construct": [{"name": "simd", "aligned": {"a": 1.5}}]})",
     "context.construct[0].aligned.a must be an integer"},
    {R"({"construct": [{"name": "simd", "aligned": ["a"]}]})",
     "context.construct[0].aligned must be an object"},
    {R"({"construct": [{"name": "simd", "linear": "i"}]})",
     "context.construct[0].linear must be an array of strings or an object "
     "of steps"},
    {R"({"construct": [{"name": "simd", "linear": {"i": 1.5}}]})",
     "context.construct[0].linear.i must be an integer or a uniform "
     "variable's name"},
    {R"({"construct": [{"name": "simd", "inbranch": 1}]})",
     "context.construct[0].inbranch must be a boolean"},
    {R"({"construct": [{"name": "simd", "simdln": 8}]})",
     "unknown field 'simdln' in context.construct[0]"},
    {R"({"device": {"kind": "gpu"}})",
     "context.device.kind must be an array of strings"},
    {R"({"device": {"arch": ["nvptx", 7]}})",
     "context.device.arch must be an array of strings"},
    {R"({"device": {"cores": 4}})", "unknown field 'cores' in context.device"},
    {R"({"target_devices": {"default": "0"}})",
     "context.target_devices.default must be an integer"},
    {R"({"target_devices": {"devices": {"gpu0": {}}}})",
     "context.target_devices.devices: device number 'gpu0' is not an "
     "integer"},
    {R"({"target_devices": {"devices": {"0": {"isa": [1]}}}})",
     "context.target_devices.devices.0.isa must be an array of strings"},
    {R"({"target_devices": {"devices": []}})",
     "context.target_devices.devices must be an object"},
    {R"({"implementation": {"requires": "usm"}})",
     "context.implementation.requires must be an array of strings"},
    {R"({"implementation": {"atomic_default_mem_order": 1}})",
     "context.implementation.atomic_default_mem_order must be a string"},
    {R"({"implementation": {"version": 5}})",
     "unknown field 'version' in context.implementation"},
    {R"({"variables": {"N": "64"}})", "context.variables.N must be an integer"},
    {R"({"variables": [1]})", "context.variables must be an object"},
};

TEST(ReadEvalContextTest, BadFieldsNameTheField) {
  for (const BadField& bad : kBadFields) {
    absl::StatusOr<selector::Context> ctx =
        ReadEvalContext(json::parse(bad.context));
    ASSERT_FALSE(ctx.ok()) << bad.context;
    EXPECT_EQ(ctx.status().code(), absl::StatusCode::kInvalidArgument)
        << bad.context;
    EXPECT_EQ(ctx.status().message(), bad.message) << bad.context;
  }
}

TEST(CheckFieldsTest, AllowsListedKeysOnly) {
  EXPECT_TRUE(CheckFields(json::parse(R"({"a": 1})"), "x", {"a", "b"}).ok());
  EXPECT_EQ(CheckFields(json::parse(R"({"c": 1})"), "x", {"a"}).message(),
            "unknown field 'c' in x");
  EXPECT_EQ(CheckFields(json(3), "x", {"a"}).message(), "x must be an object");
}

}  // namespace
}  // namespace ctxsel::cli
