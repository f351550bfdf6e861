#include "server/store/sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
  record.metadata.images = {"cubin:sm_90", "ptx:sm_80"};
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
  EXPECT_EQ(b.metadata.images,
            (std::vector<std::string>{"cubin:sm_90", "ptx:sm_80"}));
}

// A store written before device images (no images column) opens, its
// variants with none, and stores images from then on.
TEST(SqliteStoreTest, StoreFromBeforeImagesGetsTheColumn) {
  const std::string dir = FreshDir("before_images");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    StoreBatch batch;
    batch.puts = {Record("saxpy", "a", 0, 1)};
    batch.revision = 1;
    ASSERT_TRUE((*store)->Apply(batch).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/ctxsel.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE variants DROP COLUMN images", nullptr,
                         nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->variants.size(), 1u);
  EXPECT_TRUE(contents->variants[0].metadata.images.empty());
  StoreBatch batch;
  batch.puts = {Record("saxpy", "b", 1, 2)};
  batch.revision = 2;
  ASSERT_TRUE((*store)->Apply(batch).ok());
  contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->variants[1].metadata.images,
            (std::vector<std::string>{"cubin:sm_90", "ptx:sm_80"}));
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

// A store in `dir` holding `count` variants, written by `count` batches so
// the revision ends at `count`.
void Fill(SqliteStore& store, int count) {
  for (int i = 1; i <= count; ++i) {
    StoreBatch batch;
    batch.puts = {Record("k" + std::to_string(i % 7),
                         "variant_" + std::to_string(i), i, i)};
    batch.revision = i;
    ASSERT_TRUE(store.Apply(batch).ok());
  }
}

// Copies every file of `from` into a fresh `to`: what a machine crash (or
// kill -9) leaves on disk while a store is open, since each Apply is synced.
void CopyDir(const std::string& from, const std::string& to) {
  std::filesystem::create_directories(to);
  for (const auto& entry : std::filesystem::directory_iterator(from)) {
    std::filesystem::copy_file(
        entry.path(), std::filesystem::path(to) / entry.path().filename());
  }
}

void ExpectDataLoss(const absl::Status& status, const std::string& file) {
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(status.message(), HasSubstr(file));
  EXPECT_THAT(status.message(), HasSubstr("--data_dir of a backup"));
}

TEST(SqliteStoreTest, SecondOpenOfTheDirectoryIsRefusedNamingThePid) {
  const std::string dir = FreshDir("locked");
  auto first = SqliteStore::Open(dir);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = SqliteStore::Open(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      second.status().message(),
      HasSubstr("data directory " + dir + " is in use by ctxsel-server pid " +
                std::to_string(getpid())));
  first->reset();
  EXPECT_TRUE(SqliteStore::Open(dir).ok());
}

TEST(SqliteStoreTest, EmptiedDatabaseOfAStoreThatHeldDataIsDataLoss) {
  const std::string dir = FreshDir("emptied");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    Fill(**store, 3);
  }
  std::filesystem::resize_file(std::filesystem::path(dir) / "ctxsel.db", 0);
  auto store = SqliteStore::Open(dir);
  ASSERT_FALSE(store.ok());
  ExpectDataLoss(store.status(), dir + "/ctxsel.db");
}

TEST(SqliteStoreTest, DeletedDatabaseOfAStoreThatHeldDataIsDataLoss) {
  const std::string dir = FreshDir("deleted");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    Fill(**store, 2);
  }
  std::filesystem::remove(std::filesystem::path(dir) / "ctxsel.db");
  auto store = SqliteStore::Open(dir);
  ASSERT_FALSE(store.ok());
  ExpectDataLoss(store.status(), dir + "/ctxsel.db");
}

TEST(SqliteStoreTest, DroppedTableIsDataLoss) {
  for (const char* table : {"variants", "meta"}) {
    SCOPED_TRACE(table);
    const std::string dir = FreshDir(std::string("dropped_") + table);
    {
      auto store = SqliteStore::Open(dir);
      ASSERT_TRUE(store.ok()) << store.status();
      Fill(**store, 3);
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir + "/ctxsel.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, (std::string("DROP TABLE ") + table).c_str(),
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    auto store = SqliteStore::Open(dir);
    ASSERT_FALSE(store.ok());
    ExpectDataLoss(store.status(), dir + "/ctxsel.db");
    EXPECT_THAT(store.status().message(), HasSubstr(table));
  }
}

TEST(SqliteStoreTest, DeletedWalAfterACrashIsDataLoss) {
  const std::string dir = FreshDir("wal_live");
  const std::string crashed = FreshDir("wal_deleted");
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  Fill(**store, 5);
  CopyDir(dir, crashed);  // the store is still open: its WAL is not merged
  std::filesystem::remove(crashed + "/LOCK");
  ASSERT_TRUE(std::filesystem::exists(crashed + "/ctxsel.db-wal"));
  std::filesystem::remove(crashed + "/ctxsel.db-wal");
  auto reopened = SqliteStore::Open(crashed);
  ASSERT_FALSE(reopened.ok());
  ExpectDataLoss(reopened.status(), crashed + "/ctxsel.db");
}

TEST(SqliteStoreTest, CorruptWalAfterACrashIsDataLoss) {
  const std::string dir = FreshDir("wal_live2");
  const std::string crashed = FreshDir("wal_corrupt");
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  Fill(**store, 5);
  CopyDir(dir, crashed);
  std::filesystem::remove(crashed + "/LOCK");
  {
    // Damages the first frame (after the 32-byte WAL header and the 24-byte
    // frame header): its checksum fails, so SQLite ignores every frame.
    std::fstream wal(crashed + "/ctxsel.db-wal",
                     std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(wal.is_open());
    wal.seekp(32 + 24 + 100);
    wal.write("garbage!", 8);
  }
  auto reopened = SqliteStore::Open(crashed);
  ASSERT_FALSE(reopened.ok());
  ExpectDataLoss(reopened.status(), crashed + "/ctxsel.db");
}

// A crash between a commit and the marker update leaves the marker behind
// the database, never ahead: the store opens with everything committed.
TEST(SqliteStoreTest, CrashBeforeTheMarkerUpdateIsNoDataLoss) {
  const std::string dir = FreshDir("marker_live");
  const std::string crashed = FreshDir("marker_behind");
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  Fill(**store, 2);
  const std::string old_state = FreshDir("old_state");
  CopyDir(dir, old_state);
  StoreBatch batch;
  batch.puts = {Record("late", "v", 0, 3)};
  batch.revision = 3;
  ASSERT_TRUE((*store)->Apply(batch).ok());
  CopyDir(dir, crashed);
  std::filesystem::remove(crashed + "/LOCK");
  if (std::filesystem::exists(old_state + "/STATE")) {
    std::filesystem::copy_file(
        old_state + "/STATE", crashed + "/STATE",
        std::filesystem::copy_options::overwrite_existing);
  }
  auto reopened = SqliteStore::Open(crashed);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto contents = (*reopened)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->revision, 3);
  EXPECT_EQ(contents->variants.size(), 3u);
}

// Closing merges the WAL into ctxsel.db, so the file alone is the store.
TEST(SqliteStoreTest, CloseCheckpointsTheWal) {
  const std::string dir = FreshDir("checkpoint");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    Fill(**store, 4);
  }
  const auto wal = std::filesystem::path(dir) / "ctxsel.db-wal";
  EXPECT_TRUE(!std::filesystem::exists(wal) ||
              std::filesystem::file_size(wal) == 0);
  const std::string copy = FreshDir("checkpoint_copy");
  std::filesystem::create_directories(copy);
  std::filesystem::copy_file(dir + "/ctxsel.db", copy + "/ctxsel.db");
  auto store = SqliteStore::Open(copy);
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->revision, 4);
  EXPECT_EQ(contents->variants.size(), 4u);
}

// max_bytes makes a full disk without filling one: the write fails with
// RESOURCE_EXHAUSTED, a message for clients (no file names), and nothing
// of it is stored.
TEST(SqliteStoreTest, FullDiskIsResourceExhaustedAndNamesNoFile) {
  const std::string dir = FreshDir("full");
  SqliteStoreOptions options;
  options.max_bytes = 64 << 10;
  auto store = SqliteStore::Open(dir, options);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::Status written;
  int64_t revision = 0;
  while (written.ok() && revision < 1000) {
    StoreBatch batch;
    VariantRecord record = Record("k", "v" + std::to_string(revision), 0, 0);
    record.selector_text = std::string(4000, 'x');
    batch.puts = {record};
    batch.revision = revision + 1;
    written = (*store)->Apply(batch).status();
    if (written.ok()) ++revision;
  }
  ASSERT_GT(revision, 0);
  EXPECT_EQ(written.code(), absl::StatusCode::kResourceExhausted) << written;
  EXPECT_THAT(written.message(), HasSubstr("the server's disk is full"));
  EXPECT_THAT(written.message(), HasSubstr("the write was not applied"));
  EXPECT_THAT(written.message(), Not(HasSubstr(dir)));
  EXPECT_THAT(written.message(), Not(HasSubstr("ctxsel.db")));
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->revision, revision);
  EXPECT_EQ(contents->variants.size(), static_cast<size_t>(revision));
  // A write that fits still succeeds, and the store reopens whole.
  StoreBatch remove;
  remove.deletes = {{"k", "v0"}};
  remove.revision = revision + 1;
  EXPECT_TRUE((*store)->Apply(remove).ok());
  store->reset();
  auto reopened = SqliteStore::Open(dir);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
}

TEST(SqliteStoreTest, BackupOfAnOpenStoreRestoresIntoANewDirectory) {
  const std::string dir = FreshDir("backup_source");
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  Fill(**store, 30);
  const std::string file = FreshDir("backup_file.db");
  auto summary = (*store)->Backup(file);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->revision, 30);
  EXPECT_EQ(summary->variant_count, 30);
  EXPECT_EQ(summary->kernel_count, 7);
  auto inspected = InspectStoreFile(file);
  ASSERT_TRUE(inspected.ok()) << inspected.status();
  EXPECT_EQ(inspected->variant_count, 30);

  SqliteStoreOptions restore;
  restore.restore_from = file;
  // Never over a store: that one still has its lock, data and STATE.
  store->reset();
  auto over = SqliteStore::Open(dir, restore);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(over.status().message(), HasSubstr("already holds a store"));

  const std::string fresh = FreshDir("backup_restored");
  auto restored = SqliteStore::Open(fresh, restore);
  ASSERT_TRUE(restored.ok()) << restored.status();
  auto contents = (*restored)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->revision, 30);
  EXPECT_EQ(contents->variants.size(), 30u);
  // The restored store is guarded like any other.
  restored->reset();
  std::filesystem::resize_file(fresh + "/ctxsel.db", 0);
  ExpectDataLoss(SqliteStore::Open(fresh).status(), fresh + "/ctxsel.db");
}

TEST(SqliteStoreTest, InspectRefusesWhatIsNotAStore) {
  const std::string dir = FreshDir("inspect");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/garbage.db") << std::string(8192, 'x');
  EXPECT_EQ(InspectStoreFile(dir + "/garbage.db").status().code(),
            absl::StatusCode::kDataLoss);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/other.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto other = InspectStoreFile(dir + "/other.db");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(other.status().message(), HasSubstr("not a ctxsel store"));
  EXPECT_EQ(InspectStoreFile(dir + "/missing.db").status().code(),
            absl::StatusCode::kNotFound);
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

// The store is the server's user's alone, whatever the umask, and the
// server writes through no link another user planted (issue 23).
TEST(SqliteStoreTest, FilesAreTheServersAloneWhateverTheUmask) {
  const std::string dir = FreshDir("modes") + "/data";
  const mode_t old_umask = umask(022);
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    StoreBatch batch;
    batch.puts = {Record("saxpy", "a", 0, 1)};
    batch.revision = 1;
    ASSERT_TRUE((*store)->Apply(batch).ok());
    auto mode = [](const std::string& path) {
      return std::filesystem::status(path).permissions() &
             std::filesystem::perms::all;
    };
    using std::filesystem::perms;
    EXPECT_EQ(mode(dir), perms::owner_all);
    for (const char* name : {"ctxsel.db", "ctxsel.db-wal", "LOCK", "STATE"}) {
      EXPECT_EQ(mode(dir + "/" + name), perms::owner_read | perms::owner_write)
          << name;
    }
  }
  umask(old_umask);
}

TEST(SqliteStoreTest, ALinkPlantedInTheDataDirIsNeverWrittenThrough) {
  const std::string dir = FreshDir("planted");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  const std::string victim = FreshDir("victim.txt");
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_symlink(victim, dir + "/STATE.tmp");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    StoreBatch batch;
    batch.puts = {Record("saxpy", "a", 0, 1)};
    batch.revision = 1;
    ASSERT_TRUE((*store)->Apply(batch).ok());  // writes STATE via STATE.tmp
  }
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "precious\n");

  // A LOCK that is a link is refused, not followed.
  const std::string other = FreshDir("linked-lock");
  std::filesystem::create_directories(other);
  std::filesystem::permissions(other, std::filesystem::perms::owner_all);
  std::filesystem::create_symlink(victim, other + "/LOCK");
  EXPECT_EQ(SqliteStore::Open(other).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(SqliteStoreTest, ADataDirOthersMayWriteIsRefused) {
  const std::string dir = FreshDir("shared");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  absl::Status refused = SqliteStore::Open(dir).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(), HasSubstr("chmod go-w " + dir));
}

}  // namespace
}  // namespace ctxsel::server
