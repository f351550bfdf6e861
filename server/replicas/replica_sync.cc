#include "server/replicas/replica_sync.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/backoff.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server::etcd {

absl::StatusOr<std::unique_ptr<ReplicaSync>> ReplicaSync::Start(
    EtcdStore* store, VariantRegistry* registry, ClaimBook* claims) {
  std::unique_ptr<ReplicaSync> sync(new ReplicaSync(store, registry, claims));
  const int64_t loaded = store->loaded_revision();
  {
    absl::MutexLock lock(&sync->mu_);
    std::map<std::string, int64_t> kernels;
    int64_t read_at = 0;
    CTXSEL_RETURN_IF_ERROR(
        sync->ReadVariants(loaded, sync->mirror_, kernels, read_at));
  }
  sync->applied_.store(loaded);
  store->MarkApplied(loaded);
  const EtcdKeys& keys = store->keys();
  EtcdClient::WatchCallbacks callbacks;
  ReplicaSync* self = sync.get();
  callbacks.on_events = [self](const etcdserverpb::WatchResponse& response) {
    self->OnEvents(response);
  };
  callbacks.on_state = [self](bool connected) { self->OnState(connected); };
  callbacks.on_compacted = [self](int64_t) { return self->Reload(); };
  sync->applier_ = std::thread([self] { self->ApplyLoop(); });
  sync->watch_ = store->client().Watch(keys.prefix(), PrefixEnd(keys.prefix()),
                                       loaded + 1, std::move(callbacks));
  return sync;
}

ReplicaSync::~ReplicaSync() {
  watch_.reset();
  {
    absl::MutexLock lock(&queue_mu_);
    stopping_ = true;
  }
  if (applier_.joinable()) applier_.join();
}

absl::Status ReplicaSync::ReadVariants(int64_t revision, Mirror& mirror,
                                       std::map<std::string, int64_t>& kernels,
                                       int64_t& read_at) {
  const EtcdKeys& keys = store_->keys();
  EtcdClient& client = store_->client();
  CTXSEL_ASSIGN_OR_RETURN(
      etcdserverpb::RangeResponse variants,
      client.Range(keys.Variants(), PrefixEnd(keys.Variants()), revision));
  read_at = variants.header().revision();
  CTXSEL_ASSIGN_OR_RETURN(
      etcdserverpb::RangeResponse markers,
      client.Range(keys.Kernels(), PrefixEnd(keys.Kernels()),
                   revision != 0 ? revision : read_at));
  for (const mvccpb::KeyValue& kv : variants.kvs()) {
    absl::StatusOr<VariantRecord> record = VariantFromValue(kv.value());
    if (!record.ok()) {
      // At start Load() refused it already; on a reload, left out.
      store_->CorruptRecord(kv.key(), record.status()).IgnoreError();
      continue;
    }
    record->revision = kv.mod_revision();
    mirror[record->kernel][kv.key()] = *std::move(record);
  }
  for (const mvccpb::KeyValue& kv : markers.kvs()) {
    kernels[NameAfter(keys.Kernels(), kv.key())] = kv.mod_revision();
  }
  return absl::OkStatus();
}

std::vector<VariantRecord> ReplicaSync::MirroredRecords(
    const std::string& kernel) {
  std::vector<VariantRecord> records;
  auto it = mirror_.find(kernel);
  if (it == mirror_.end()) return records;
  for (const auto& [key, record] : it->second) records.push_back(record);
  if (it->second.empty()) mirror_.erase(it);
  return records;
}

void ReplicaSync::OnEvents(const etcdserverpb::WatchResponse& response) {
  absl::MutexLock lock(&queue_mu_);
  queue_.push_back(response);
}

void ReplicaSync::ApplyLoop() {
  for (;;) {
    std::vector<etcdserverpb::WatchResponse> batch;
    {
      absl::MutexLock lock(&queue_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
        return stopping_ || !queue_.empty();
      };
      queue_mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      batch.swap(queue_);
    }
    ApplyBatch(batch);
  }
}

void ReplicaSync::ApplyBatch(
    const std::vector<etcdserverpb::WatchResponse>& batch) {
  const EtcdKeys& keys = store_->keys();
  // Kernels changed in this batch, with the revision of their last
  // change (the marker every change of a kernel puts).
  std::map<std::string, int64_t> changed;
  int64_t last = 0;
  absl::MutexLock lock(&mu_);
  const int64_t applied = applied_.load();
  for (const etcdserverpb::WatchResponse& response : batch) {
    for (const mvccpb::Event& event : response.events()) {
      const mvccpb::KeyValue& kv = event.kv();
      if (kv.mod_revision() <= applied) continue;
      const std::string& key = kv.key();
      const bool put = event.type() == mvccpb::Event::PUT;
      last = std::max(last, kv.mod_revision());
      if (absl::StartsWith(key, keys.Variants())) {
        // The kernel is in the key's first segment; the record repeats it.
        const std::string kernel = NameAfter(keys.Variants(), key);
        if (put) {
          absl::StatusOr<VariantRecord> record = VariantFromValue(kv.value());
          if (!record.ok()) {
            store_->CorruptRecord(key, record.status()).IgnoreError();
            continue;
          }
          record->revision = kv.mod_revision();
          mirror_[kernel][key] = *std::move(record);
        } else {
          mirror_[kernel].erase(key);
        }
      } else if (absl::StartsWith(key, keys.Kernels()) && put) {
        changed[NameAfter(keys.Kernels(), key)] = kv.mod_revision();
      } else if (absl::StartsWith(key, keys.Claims())) {
        if (put) {
          absl::StatusOr<ClaimRecord> record = ClaimFromValue(kv.value());
          if (record.ok()) {
            claims_->ApplyStored(*record);
          } else {
            store_->CorruptRecord(key, record.status()).IgnoreError();
          }
        } else {
          claims_->ApplyStoredDelete(NameAfter(keys.Claims(), key));
        }
      }
    }
  }
  for (const auto& [kernel, revision] : changed) {
    registry_->ApplyStored(kernel, MirroredRecords(kernel), revision);
  }
  if (last > 0) {
    applied_.store(last);
    store_->MarkApplied(last);
  }
}

void ReplicaSync::OnStaleChanged(std::function<void(bool)> callback) {
  absl::MutexLock lock(&callback_mu_);
  on_stale_changed_ = std::move(callback);
  on_stale_changed_(stale_.load());
}

void ReplicaSync::OnState(bool connected) {
  if (stale_.exchange(!connected) != !connected) {
    {
      absl::MutexLock lock(&callback_mu_);
      if (on_stale_changed_) on_stale_changed_(!connected);
    }
    if (connected) {
      spdlog::info("etcd watch back at revision {}: in step again",
                   applied_.load());
    } else {
      spdlog::warn(
          "etcd watch lost at revision {}: serving the last state (stale) "
          "until etcd answers",
          applied_.load());
    }
  }
}

int64_t ReplicaSync::Reload() {
  Backoff backoff({absl::Milliseconds(100), absl::Seconds(2)});
  for (;;) {
    Mirror mirror;
    std::map<std::string, int64_t> kernels;
    int64_t read_at = 0;
    absl::Status read = ReadVariants(0, mirror, kernels, read_at);
    if (!read.ok()) {
      spdlog::warn("etcd reload after compaction: {}", read.ToString());
      absl::SleepFor(backoff.Next());
      continue;
    }
    absl::MutexLock lock(&mu_);
    std::set<std::string> all;
    for (const auto& [kernel, revision] : kernels) all.insert(kernel);
    for (const auto& [kernel, variants] : mirror_) all.insert(kernel);
    mirror_ = std::move(mirror);
    for (const std::string& kernel : all) {
      auto revision = kernels.find(kernel);
      registry_->ApplyStored(
          kernel, MirroredRecords(kernel),
          revision != kernels.end() ? revision->second : read_at);
    }
    absl::StatusOr<std::vector<ClaimRecord>> claims =
        store_->ReadClaims(/*skip_corrupt=*/true);
    if (claims.ok()) {
      for (const ClaimRecord& claim : *claims) claims_->ApplyStored(claim);
    } else {
      spdlog::warn("etcd reload after compaction: claims: {}",
                   claims.status().ToString());
    }
    applied_.store(read_at);
    store_->MarkApplied(read_at);
    return read_at;
  }
}

}  // namespace ctxsel::server::etcd
