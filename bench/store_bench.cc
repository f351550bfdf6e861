// Benchmarks of the durable variant store: one Apply (a one-variant
// registration: a synced commit, plus the STATE file that guards against
// silent loss), and an online Backup of 1000 variants.
//
//   bazel run -c opt //bench:store_bench -- --benchmark_min_time=2
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "server/store/sqlite_store.h"

namespace {

using ctxsel::server::SqliteStore;
using ctxsel::server::StoreBatch;
using ctxsel::server::VariantRecord;

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(tmp != nullptr ? tmp : "/tmp") /
      absl::StrCat("ctxsel-store-bench-", getpid(), "-", name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

StoreBatch OneVariant(int64_t revision) {
  StoreBatch batch;
  VariantRecord record;
  record.kernel = absl::StrCat("kernel", revision % 10);
  record.name = absl::StrCat("v", revision);
  record.selector_text = "device={arch(nvptx)}, user={condition(N > 32)}";
  record.revision = revision;
  batch.puts = {record};
  batch.revision = revision;
  return batch;
}

void BM_ApplyOneVariant(benchmark::State& state) {
  const std::string dir = FreshDir("apply");
  auto store = SqliteStore::Open(dir);
  if (!store.ok()) {
    state.SkipWithError(std::string(store.status().message()).c_str());
    return;
  }
  int64_t revision = 0;
  for (auto _ : state) {
    if (!(*store)->Apply(OneVariant(++revision)).ok()) {
      state.SkipWithError("Apply failed");
      break;
    }
  }
  store->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ApplyOneVariant)->Unit(benchmark::kMicrosecond);

void BM_Backup1000Variants(benchmark::State& state) {
  const std::string dir = FreshDir("backup");
  auto store = SqliteStore::Open(dir);
  if (!store.ok()) {
    state.SkipWithError(std::string(store.status().message()).c_str());
    return;
  }
  StoreBatch batch;
  for (int64_t i = 1; i <= 1000; ++i)
    batch.puts.push_back(OneVariant(i).puts[0]);
  batch.revision = 1;
  if (!(*store)->Apply(batch).ok()) state.SkipWithError("Apply failed");
  const std::string file = dir + "/copy.db";
  for (auto _ : state) {
    if (!(*store)->Backup(file).ok()) {
      state.SkipWithError("Backup failed");
      break;
    }
  }
  store->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Backup1000Variants)->Unit(benchmark::kMillisecond);

}  // namespace
