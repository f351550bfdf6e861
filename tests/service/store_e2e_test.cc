// The variant store through the real ctxsel-server and ctxsel-cli: it never
// silently loses data (docs/operations.md). One server per data directory;
// an emptied database or a deleted WAL stops the start with DATA_LOSS; a
// full disk is RESOURCE_EXHAUSTED and the server keeps answering, with the
// services that write the store NOT_SERVING in health checks until a write
// succeeds again; an online backup taken with `ctxsel-cli admin backup`
// restores every variant.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class StoreE2E : public ::testing::Test {
 protected:
  void SetUp() override { data_dir_ = MakeTempDir("data"); }

  std::unique_ptr<ServerProcess> Start(std::vector<std::string> flags = {}) {
    flags.push_back("--data_dir=" + data_dir_);
    auto server = ServerProcess::Start(flags);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }
  // Runs a server that is expected not to start; its exit code and log.
  CommandResult StartFails(const std::string& data_dir) {
    return RunCommand({ServerPath(), "--insecure", "--listen=127.0.0.1:0",
                       "--data_dir=" + data_dir});
  }
  CommandResult Cli(const ServerProcess& server,
                    std::vector<std::string> args) {
    args.insert(args.begin(),
                {CliPath(), "--insecure", "--server=" + server.address()});
    return RunCommand(args);
  }
  // Registers `kernels` kernels of `per_kernel` variants, one batch each.
  void Register(const ServerProcess& server, int kernels, int per_kernel) {
    auto client = client::CtxselClient::Connect(server.address());
    for (int k = 0; k < kernels; ++k) {
      v1::RegisterVariantsRequest request;
      request.set_kernel(absl::StrCat("kernel", k));
      for (int i = 0; i < per_kernel; ++i) {
        v1::Variant* variant = request.add_variants();
        variant->set_name(absl::StrCat("v", i));
        variant->set_selector(
            absl::StrCat("user={condition(N > ", i, ")}, device={kind(gpu)}"));
      }
      auto response = client->RegisterVariants(request);
      ASSERT_TRUE(response.ok()) << response.status();
    }
  }
  // One service's status as a gRPC health check through a real channel
  // reads it ("" is the server as a whole).
  static std::string Health(const ServerProcess& server,
                            const std::string& service) {
    auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
        server.address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status s = health->Check(&context, request, &response);
    if (!s.ok()) return "error " + s.error_message();
    return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
        response.status());
  }

  size_t VariantCount(const ServerProcess& server) {
    auto listed =
        client::CtxselClient::Connect(server.address())->ListVariants("");
    EXPECT_TRUE(listed.ok()) << listed.status();
    return listed.ok() ? listed->size() : 0;
  }

  std::string data_dir_;
};

TEST_F(StoreE2E, SecondServerOnTheDataDirExitsNamingTheFirstsPid) {
  auto first = Start();
  ASSERT_NE(first, nullptr);
  CommandResult second = StartFails(data_dir_);
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_THAT(second.stderr_text,
              HasSubstr(absl::StrCat("data directory ", data_dir_,
                                     " is in use by ctxsel-server pid ",
                                     first->process().pid())));
  // The first one never noticed.
  EXPECT_EQ(Cli(*first, {"ping"}).exit_code, 0);
  Register(*first, 1, 3);
  EXPECT_EQ(VariantCount(*first), 3u);
}

TEST_F(StoreE2E, EmptiedDatabaseIsDataLossAtStart) {
  {
    auto server = Start();
    ASSERT_NE(server, nullptr);
    Register(*server, 3, 100);
    server->process().Signal(SIGTERM);
    ASSERT_EQ(server->process().Wait(std::chrono::seconds(10)), 0);
  }
  std::filesystem::resize_file(data_dir_ + "/ctxsel.db", 0);
  CommandResult start = StartFails(data_dir_);
  EXPECT_EQ(start.exit_code, 1);
  EXPECT_THAT(start.stderr_text, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(start.stderr_text, HasSubstr(data_dir_ + "/ctxsel.db is empty"));
  EXPECT_THAT(start.stderr_text, HasSubstr("revision 3 with 300 variant(s)"));
  EXPECT_THAT(start.stderr_text, HasSubstr("--data_dir of a backup"));
}

TEST_F(StoreE2E, DeletedWalAfterKill9IsDataLossAtStart) {
  {
    auto server = Start();
    ASSERT_NE(server, nullptr);
    Register(*server, 3, 100);
    server->process().Signal(SIGKILL);
    server->process().Wait(std::chrono::seconds(10));
  }
  ASSERT_TRUE(std::filesystem::exists(data_dir_ + "/ctxsel.db-wal"));
  std::filesystem::remove(data_dir_ + "/ctxsel.db-wal");
  std::filesystem::remove(data_dir_ + "/ctxsel.db-shm");
  CommandResult start = StartFails(data_dir_);
  EXPECT_EQ(start.exit_code, 1);
  EXPECT_THAT(start.stderr_text, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(start.stderr_text, HasSubstr(data_dir_ + "/ctxsel.db"));
  EXPECT_THAT(start.stderr_text, HasSubstr("--data_dir of a backup"));
}

TEST_F(StoreE2E, FullDiskIsResourceExhaustedAndTheServerKeepsAnswering) {
  auto server = Start({"--max_store_bytes=65536"});
  ASSERT_NE(server, nullptr);
  for (const char* service :
       {"", "ctxsel.v1.Placement", "ctxsel.v1.Variants", "ctxsel.v1.Inventory",
        "ctxsel.v1.Admin", "ctxsel.v1.Ctxsel"}) {
    EXPECT_EQ(Health(*server, service), "SERVING") << service;
  }
  // About 3 KB each: a few dozen fill 64 KiB.
  std::string selector = "device={isa(";
  for (int i = 0; i < 300; ++i) absl::StrAppend(&selector, "isa_", i, ",");
  selector.back() = ')';
  selector += "}";
  CommandResult full;
  int stored = 0;
  for (; stored < 100; ++stored) {
    full = Cli(*server, {"variants", "register", "big",
                         absl::StrCat("v", stored, "=", selector)});
    if (full.exit_code != 0) break;
  }
  ASSERT_LT(stored, 100) << "the limit was never reached";
  ASSERT_GT(stored, 0);
  // 4: RESOURCE_EXHAUSTED (docs/service.md).
  EXPECT_EQ(full.exit_code, 4) << full.stderr_text;
  EXPECT_THAT(full.stderr_text,
              HasSubstr("RESOURCE_EXHAUSTED: the server's disk is full; the "
                        "write was not applied"));
  EXPECT_THAT(full.stderr_text, Not(HasSubstr(data_dir_)));
  EXPECT_THAT(full.stderr_text, HasSubstr("\n  reason STORE_FULL\n"));
  EXPECT_THAT(server->Log(), HasSubstr(data_dir_ + "/ctxsel.db"));
  // The services that write the store say so to health checks; reads and
  // the inventory serve on.
  EXPECT_EQ(Health(*server, "ctxsel.v1.Placement"), "NOT_SERVING");
  EXPECT_EQ(Health(*server, "ctxsel.v1.Variants"), "NOT_SERVING");
  EXPECT_EQ(Health(*server, "ctxsel.v1.Admin"), "NOT_SERVING");
  EXPECT_EQ(Health(*server, "ctxsel.v1.Inventory"), "SERVING");
  EXPECT_EQ(Health(*server, "ctxsel.v1.Ctxsel"), "SERVING");
  EXPECT_EQ(Health(*server, ""), "SERVING");
  // Still answering, with everything acknowledged before.
  EXPECT_EQ(Cli(*server, {"ping"}).exit_code, 0);
  EXPECT_EQ(VariantCount(*server), static_cast<size_t>(stored));
  EXPECT_EQ(Cli(*server, {"variants", "rm", "big", "v0"}).exit_code, 0);
  // A write went through: the store serves again.
  EXPECT_EQ(Health(*server, "ctxsel.v1.Placement"), "SERVING");
}

// The commands of docs/operations.md, "Backup and restore".
TEST_F(StoreE2E, OnlineBackupRestoresEveryVariant) {
  auto server = Start();
  ASSERT_NE(server, nullptr);
  Register(*server, 3, 100);
  const std::string file = MakeTempDir("backups") + "/ctxsel-backup.db";
  CommandResult backup = Cli(*server, {"admin", "backup", file});
  ASSERT_EQ(backup.exit_code, 0) << backup.stderr_text;
  EXPECT_THAT(backup.stdout_text,
              HasSubstr("backed up revision 3 of " + server->address() +
                        ": 300 variant(s) of 3 kernel(s)"));
  EXPECT_FALSE(
      std::filesystem::exists(file + ".tmp-" + std::to_string(getpid())));
  // The server kept serving and left no staged copy behind.
  EXPECT_EQ(
      Cli(*server, {"variants", "register", "later", "v=device={kind(cpu)}"})
          .exit_code,
      0);
  for (const auto& entry : std::filesystem::directory_iterator(data_dir_)) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr("backup")));
  }

  const std::string restored_dir = MakeTempDir("restored");
  auto restored = ServerProcess::Start(
      {"--data_dir=" + restored_dir, "--restore_from=" + file});
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(VariantCount(**restored), 300u);
  CommandResult get = Cli(**restored, {"variants", "get", "kernel2", "v99"});
  EXPECT_EQ(get.exit_code, 0) << get.stderr_text;

  // Restoring over a store is refused: it may hold data the backup lacks.
  (*restored)->process().Signal(SIGTERM);
  ASSERT_EQ((*restored)->process().Wait(std::chrono::seconds(10)), 0);
  CommandResult over =
      RunCommand({ServerPath(), "--insecure", "--listen=127.0.0.1:0",
                  "--data_dir=" + restored_dir, "--restore_from=" + file});
  EXPECT_EQ(over.exit_code, 1);
  EXPECT_THAT(over.stderr_text, HasSubstr("already holds a store"));
}

}  // namespace
}  // namespace ctxsel::testing
