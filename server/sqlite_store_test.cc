#include "server/sqlite_store.h"

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir =
      std::filesystem::path(tmp != nullptr ? tmp : "/tmp") / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

VariantRecord Record(const std::string& kernel, const std::string& name,
                     int64_t order, int64_t revision) {
  VariantRecord record;
  record.kernel = kernel;
  record.name = name;
  record.selector_text = "device={arch(nvptx)}";
  record.order = order;
  record.revision = revision;
  record.metadata.adjust_args = {"need_device_ptr: a, b"};
  record.metadata.append_args = {"interop(target)", "x"};
  record.metadata.source_file = "saxpy.c";
  record.metadata.source_line = 12;
  return record;
}

TEST(SqliteStoreTest, NewStoreIsEmpty) {
  auto store = SqliteStore::Open(FreshDir("empty"));
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->revision, 0);
  EXPECT_TRUE(contents->variants.empty());
}

TEST(SqliteStoreTest, ChangesSurviveReopen) {
  const std::string dir = FreshDir("reopen");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    StoreBatch batch;
    batch.puts = {Record("saxpy", "b", 1, 1), Record("saxpy", "a", 0, 1),
                  Record("gemm", "g", 0, 1)};
    batch.revision = 1;
    ASSERT_TRUE((*store)->Apply(batch).ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->revision, 1);
  ASSERT_EQ(contents->variants.size(), 3u);
  // Ordered by kernel, then declaration order.
  EXPECT_EQ(contents->variants[0].name, "g");
  EXPECT_EQ(contents->variants[1].name, "a");
  EXPECT_EQ(contents->variants[2].name, "b");
  const VariantRecord& b = contents->variants[2];
  EXPECT_EQ(b.selector_text, "device={arch(nvptx)}");
  EXPECT_EQ(b.metadata.adjust_args,
            std::vector<std::string>{"need_device_ptr: a, b"});
  EXPECT_EQ(b.metadata.append_args,
            (std::vector<std::string>{"interop(target)", "x"}));
  EXPECT_EQ(b.metadata.source_file, "saxpy.c");
  EXPECT_EQ(b.metadata.source_line, 12);
}

TEST(SqliteStoreTest, ClearDeleteAndReplace) {
  auto store = SqliteStore::Open(FreshDir("clear"));
  ASSERT_TRUE(store.ok()) << store.status();
  StoreBatch first;
  first.puts = {Record("k", "a", 0, 1), Record("k", "b", 1, 1),
                Record("other", "c", 0, 1)};
  first.revision = 1;
  ASSERT_TRUE((*store)->Apply(first).ok());

  StoreBatch second;
  second.clear_kernels = {"k"};
  second.puts = {Record("k", "z", 0, 2)};
  second.deletes = {{"other", "c"}, {"absent", "x"}};
  second.revision = 2;
  ASSERT_TRUE((*store)->Apply(second).ok());

  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->revision, 2);
  ASSERT_EQ(contents->variants.size(), 1u);
  EXPECT_EQ(contents->variants[0].name, "z");
  EXPECT_EQ(contents->variants[0].revision, 2);
}

TEST(SqliteStoreTest, GarbageFileIsDataLoss) {
  const std::string dir = FreshDir("garbage");
  std::filesystem::create_directories(dir);
  std::ofstream(std::filesystem::path(dir) / SqliteStore::kFileName)
      << std::string(8192, 'x');
  auto store = SqliteStore::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), HasSubstr("ctxsel.db"));
}

TEST(SqliteStoreTest, TruncatedFileIsDataLoss) {
  const std::string dir = FreshDir("truncated");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    StoreBatch batch;
    for (int i = 0; i < 400; ++i) {
      batch.puts.push_back(Record("k" + std::to_string(i % 7),
                                  "variant_" + std::to_string(i), i, 1));
    }
    batch.revision = 1;
    ASSERT_TRUE((*store)->Apply(batch).ok());
  }  // Closing checkpoints the WAL into the main file.
  const auto path = std::filesystem::path(dir) / SqliteStore::kFileName;
  const auto size = std::filesystem::file_size(path);
  ASSERT_GT(size, 8192u);
  std::filesystem::resize_file(path, size / 2);
  auto store = SqliteStore::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss)
      << store.status();
}

TEST(SqliteStoreTest, UnknownSchemaVersionIsRefused) {
  const std::string dir = FreshDir("schema");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
  }
  // Simulate a store written by a future server.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/ctxsel.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE meta SET value = 99 WHERE key = "
                         "'schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = SqliteStore::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), HasSubstr("schema version 99"));
}

// --- Claims ----------------------------------------------------------------

ClaimRecord Claim(const std::string& id, const std::string& device,
                  int64_t expires_unix_ms) {
  return {id, "n1", device, "alice@n1:42", expires_unix_ms};
}

TEST(SqliteStoreTest, ClaimsSurviveReopenAndApplyAsOneBatch) {
  const std::string dir = FreshDir("claims");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    auto empty = (*store)->LoadClaims();
    ASSERT_TRUE(empty.ok()) << empty.status();
    EXPECT_TRUE(empty->empty());
    ClaimBatch first;
    first.puts = {Claim("c-2", "n1/gpu1", 2000), Claim("c-1", "n1/gpu0", 1000)};
    ASSERT_TRUE((*store)->ApplyClaims(first).ok());
    ClaimBatch second;  // renew c-2, release c-1, add c-3
    second.deletes = {"c-1", "c-absent"};
    second.puts = {Claim("c-2", "n1/gpu1", 9000), Claim("c-3", "n1/gpu0", 500)};
    ASSERT_TRUE((*store)->ApplyClaims(second).ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto claims = (*store)->LoadClaims();
  ASSERT_TRUE(claims.ok()) << claims.status();
  ASSERT_EQ(claims->size(), 2u);
  EXPECT_EQ((*claims)[0].id, "c-2");
  EXPECT_EQ((*claims)[0].device, "n1/gpu1");
  EXPECT_EQ((*claims)[0].node, "n1");
  EXPECT_EQ((*claims)[0].holder, "alice@n1:42");
  EXPECT_EQ((*claims)[0].expires_unix_ms, 9000);
  EXPECT_EQ((*claims)[1].id, "c-3");
  // Variants are untouched by claims.
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok());
  EXPECT_TRUE(contents->variants.empty());
}

}  // namespace
}  // namespace ctxsel::server
