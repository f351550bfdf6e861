// Variants through the real server and ctxsel-cli: registration, atomic
// rejection, bad input, durability across kill -9, a corrupt store.
#include <signal.h>

#include <filesystem>
#include <fstream>

#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class VariantsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = MakeTempDir("data");
    Start();
  }
  void Start(std::vector<std::string> flags = {}) {
    flags.push_back("--data_dir=" + data_dir_);
    auto server = ServerProcess::Start(flags);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }

  std::string data_dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(VariantsE2E, RegisteredVariantsSurviveKill9) {
  CommandResult reg =
      Cli({"variants", "register", "saxpy", "saxpy_nv=device={arch(nvptx)}",
           "saxpy_big=user={condition(N > 4096)}"});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  EXPECT_THAT(reg.stdout_text, HasSubstr("registered 2 variant(s)"));
  ASSERT_EQ(Cli({"variants", "rm", "saxpy", "saxpy_big"}).exit_code, 0);
  ASSERT_EQ(
      Cli({"variants", "register", "gemm", "g=device={kind(gpu)}"}).exit_code,
      0);

  server_->process().Signal(SIGKILL);
  server_->process().Wait(std::chrono::seconds(10));
  Start();

  CommandResult ls = Cli({"variants", "ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.stderr_text;
  EXPECT_THAT(ls.stdout_text, HasSubstr("saxpy_nv"));
  EXPECT_THAT(ls.stdout_text, Not(HasSubstr("saxpy_big")));
  EXPECT_THAT(ls.stdout_text, HasSubstr("gemm"));
  CommandResult get = Cli({"--json", "variants", "get", "gemm", "g"});
  ASSERT_EQ(get.exit_code, 0) << get.stderr_text;
  // Revisions continue: register (1), rm (2), register (3).
  EXPECT_THAT(get.stdout_text, HasSubstr("\"revision\":3"));
}

TEST_F(VariantsE2E, BatchWithOneBadSelectorStoresNothing) {
  CommandResult reg =
      Cli({"variants", "register", "saxpy", "ok=device={kind(gpu)}",
           "bad=device={kind(gpu)}, devce={arch(x)}"});
  EXPECT_EQ(reg.exit_code, 2);
  EXPECT_THAT(reg.stderr_text, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(reg.stderr_text, HasSubstr("variants[1] (bad).selector: 1:"));
  // The details the server sent, printed under the message.
  EXPECT_THAT(reg.stderr_text, HasSubstr("\n  field variants[1].selector: 1:"));
  EXPECT_THAT(reg.stderr_text,
              HasSubstr("\n  reason SELECTOR_INVALID column=21 kernel=saxpy "
                        "line=1 variant=bad\n"));
  CommandResult ls = Cli({"variants", "ls", "saxpy"});
  ASSERT_EQ(ls.exit_code, 0);
  EXPECT_THAT(ls.stdout_text, Not(HasSubstr("ok")));
}

TEST_F(VariantsE2E, BadInputGetsClearStatus) {
  CommandResult empty = Cli({"variants", "register", "saxpy"});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.stderr_text, HasSubstr("variants: empty batch"));
  EXPECT_THAT(empty.stderr_text,
              HasSubstr("\n  field variants: empty batch\n"));
  EXPECT_THAT(empty.stderr_text, HasSubstr("\n  reason FIELD_INVALID\n"));

  CommandResult missing = Cli({"variants", "get", "saxpy", "nope"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.stderr_text, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(missing.stderr_text,
              HasSubstr("\n  reason VARIANT_NOT_FOUND kernel=saxpy name=nope\n"
                        "  resource ctxsel.v1.Variant saxpy/nope\n"));

  CommandResult unknown_kernel = Cli({"select", "--kernel=nope"});
  EXPECT_EQ(unknown_kernel.exit_code, 2) << unknown_kernel.stderr_text;
  EXPECT_THAT(unknown_kernel.stderr_text, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(unknown_kernel.stderr_text,
              HasSubstr("\n  reason KERNEL_NOT_FOUND kernel=nope\n"
                        "  resource ctxsel.v1.Kernel nope\n"));

  CommandResult flag = Cli({"--no_such_flag", "variants", "ls"});
  EXPECT_NE(flag.exit_code, 0);
  EXPECT_THAT(flag.stderr_text, HasSubstr("no_such_flag"));

  ASSERT_EQ(
      Cli({"variants", "register", "saxpy", "a=device={kind(gpu)}"}).exit_code,
      0);
  CommandResult again =
      Cli({"variants", "register", "saxpy", "a=device={kind(cpu)}"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.stderr_text, HasSubstr("ALREADY_EXISTS"));
  EXPECT_THAT(again.stderr_text,
              HasSubstr("\n  reason VARIANT_EXISTS kernel=saxpy name=a\n"
                        "  resource ctxsel.v1.Variant saxpy/a\n"));
}

TEST_F(VariantsE2E, OversizeMessageIsRejectedAndNothingStored) {
  server_->process().Signal(SIGTERM);
  server_->process().Wait(std::chrono::seconds(10));
  Start({"--max_message_bytes=65536"});
  auto client = client::CtxselClient::Connect(server_->address());
  v1::RegisterVariantsRequest request;
  request.set_kernel("huge");
  v1::Variant* v = request.add_variants();
  v->set_name("v");
  v->set_selector("user={condition(" + std::string(100000, '1') + ")}");
  auto response = client->RegisterVariants(request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted)
      << response.status();
  auto listed = client->ListVariants("huge");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_TRUE(listed->empty());
}

TEST_F(VariantsE2E, RegistersFromSourceFiles) {
  const std::string source = MakeTempDir("src") + "/saxpy.c";
  std::ofstream(source) << R"(
void saxpy_nv(int n, float a, float *x, float *y);
void saxpy_usm(int n, float a, float *x, float *y);
#pragma omp declare variant(saxpy_nv) match(device={arch(nvptx)}) \
    adjust_args(need_device_ptr: x, y)
#pragma omp declare variant(saxpy_usm) \
    match(implementation={requires(unified_shared_memory)})
void saxpy(int n, float a, float *x, float *y);
)";
  CommandResult reg = Cli({"variants", "register", "--from_source", source});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  EXPECT_THAT(reg.stdout_text, HasSubstr("registered 2 variant(s) of saxpy"));
  CommandResult get = Cli({"variants", "get", "saxpy", "saxpy_nv"});
  ASSERT_EQ(get.exit_code, 0) << get.stderr_text;
  EXPECT_THAT(get.stdout_text, HasSubstr("need_device_ptr: x, y"));
  EXPECT_THAT(get.stdout_text, HasSubstr("saxpy.c:"));

  const std::string broken = MakeTempDir("src") + "/broken.c";
  std::ofstream(broken) << "#pragma omp declare variant(v) match(devce={})\n"
                           "void k(void);\n";
  CommandResult bad = Cli({"variants", "register", "--from_source", broken});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.stderr_text, HasSubstr("broken.c:1:"));
}

TEST_F(VariantsE2E, CorruptStoreIsReportedAtStart) {
  server_->process().Signal(SIGTERM);
  ASSERT_EQ(server_->process().Wait(std::chrono::seconds(10)), 0);
  {
    std::ofstream db(data_dir_ + "/ctxsel.db", std::ios::trunc);
    db << std::string(16384, 'x');
  }
  std::filesystem::remove(data_dir_ + "/ctxsel.db-wal");
  auto server = ServerProcess::Start({"--data_dir=" + data_dir_});
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("ctxsel.db"));
  EXPECT_THAT(server.status().message(), HasSubstr("DATA_LOSS"));
}

}  // namespace
}  // namespace ctxsel::testing
