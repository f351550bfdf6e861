#include "server/store/etcd/etcd_store.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/backoff.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace ctxsel::server::etcd {
namespace {

using etcdserverpb::Compare;
using etcdserverpb::RequestOp;
using etcdserverpb::TxnRequest;
using Json = nlohmann::json;

// A claim's lease outlives its expiry by this much: the ClaimBook judges
// expiry by its own clock, the lease only cleans etcd up.
constexpr absl::Duration kLeaseSlack = absl::Seconds(5);

void AddPut(TxnRequest& txn, const std::string& key, const std::string& value,
            int64_t lease = 0) {
  auto* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  put->set_lease(lease);
}

void AddDelete(TxnRequest& txn, const std::string& key,
               const std::string& range_end = "") {
  auto* del = txn.add_success()->mutable_request_delete_range();
  del->set_key(key);
  del->set_range_end(range_end);
}

void AddCompare(TxnRequest& txn, const std::string& key,
                Compare::CompareTarget target, int64_t revision) {
  Compare* compare = txn.add_compare();
  compare->set_key(key);
  compare->set_target(target);
  compare->set_result(Compare::EQUAL);
  if (target == Compare::MOD) {
    compare->set_mod_revision(revision);
  } else {
    compare->set_create_revision(revision);
  }
}

// Deletes `key` only if its mod revision is still `revision`, as a nested
// transaction: a place another replica took since it was read is left to
// its new claim, and the rest of the batch still applies.
void AddDeleteIfUnchanged(TxnRequest& txn, const std::string& key,
                          int64_t revision) {
  TxnRequest* nested = txn.add_success()->mutable_request_txn();
  AddCompare(*nested, key, Compare::MOD, revision);
  AddDelete(*nested, key);
}

// Every key in [key, range_end) was created before `revision`, as a nested
// compare of the transaction: true for an empty range.
void AddCreatedBefore(TxnRequest& txn, const std::string& key,
                      const std::string& range_end, int64_t revision) {
  Compare* compare = txn.add_compare();
  compare->set_key(key);
  compare->set_range_end(range_end);
  compare->set_target(Compare::CREATE);
  compare->set_result(Compare::LESS);
  compare->set_create_revision(revision);
}

absl::Status ClaimedFirst() {
  return WithErrorInfo(
      absl::AbortedError(
          "another server claimed the device first; the claim was not made"),
      kReasonStoreConflict);
}

// Store errors go to clients as they are; say what failed.
absl::Status Failed(const absl::Status& status, const std::string& what) {
  return absl::Status(
      status.code(),
      absl::StrCat(what, " was not applied: ", status.message()));
}

}  // namespace

std::string EscapeKeySegment(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '%') {
      out += "%25";
    } else if (c == '/') {
      out += "%2F";
    } else {
      out += c;
    }
  }
  return out;
}

std::string UnescapeKeySegment(const std::string& segment) {
  std::string out;
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment.compare(i, 3, "%25") == 0) {
      out += '%';
      i += 2;
    } else if (segment.compare(i, 3, "%2F") == 0) {
      out += '/';
      i += 2;
    } else {
      out += segment[i];
    }
  }
  return out;
}

std::string NameAfter(const std::string& folder, const std::string& key) {
  const std::string rest = key.substr(folder.size());
  return UnescapeKeySegment(rest.substr(0, rest.find('/')));
}

std::string VariantValue(const VariantRecord& record) {
  Json json{{"kernel", record.kernel},
            {"name", record.name},
            {"selector", record.selector_text},
            {"order", record.order},
            {"adjust_args", record.metadata.adjust_args},
            {"append_args", record.metadata.append_args},
            {"source_file", record.metadata.source_file},
            {"source_line", record.metadata.source_line}};
  // Only when set: values stay as replicas from before images wrote them.
  if (!record.metadata.images.empty()) json["images"] = record.metadata.images;
  return json.dump();
}

absl::StatusOr<VariantRecord> VariantFromValue(const std::string& value) {
  try {
    const Json json = Json::parse(value);
    VariantRecord record;
    record.kernel = json.at("kernel").get<std::string>();
    record.name = json.at("name").get<std::string>();
    record.selector_text = json.at("selector").get<std::string>();
    record.order = json.at("order").get<int64_t>();
    record.metadata.adjust_args =
        json.value("adjust_args", std::vector<std::string>{});
    record.metadata.append_args =
        json.value("append_args", std::vector<std::string>{});
    record.metadata.source_file = json.value("source_file", "");
    record.metadata.source_line = json.value("source_line", 0);
    record.metadata.images = json.value("images", std::vector<std::string>{});
    return record;
  } catch (const Json::exception& e) {
    return WithErrorInfo(
        absl::DataLossError(absl::StrCat("not a stored variant: ", e.what())),
        kReasonStoreDamaged);
  }
}

std::string ClaimValue(const ClaimRecord& record) {
  Json json{{"id", record.id},
            {"node", record.node},
            {"device", record.device},
            {"holder", record.holder},
            {"expires_unix_ms", record.expires_unix_ms},
            {"owner", record.owner},
            {"slot", record.slot}};
  // Only for shares: a whole claim is stored as before them.
  if (record.memory_bytes > 0) json["memory_bytes"] = record.memory_bytes;
  if (record.compute_percent > 0) {
    json["compute_percent"] = record.compute_percent;
  }
  return json.dump();
}

absl::StatusOr<ClaimRecord> ClaimFromValue(const std::string& value) {
  try {
    const Json json = Json::parse(value);
    ClaimRecord record;
    record.id = json.at("id").get<std::string>();
    record.node = json.at("node").get<std::string>();
    record.device = json.at("device").get<std::string>();
    record.holder = json.value("holder", "");
    record.expires_unix_ms = json.at("expires_unix_ms").get<int64_t>();
    record.owner = json.value("owner", "");
    record.slot = json.value("slot", 0);
    record.memory_bytes = json.value("memory_bytes", uint64_t{0});
    record.compute_percent = json.value("compute_percent", 0);
    return record;
  } catch (const Json::exception& e) {
    return WithErrorInfo(
        absl::DataLossError(absl::StrCat("not a stored claim: ", e.what())),
        kReasonStoreDamaged);
  }
}

std::string CordonValue(const Cordon& cordon) {
  return Json{{"device", cordon.device}, {"node", cordon.node},
              {"reason", cordon.reason}, {"drain", cordon.drain},
              {"by", cordon.by},         {"unix_ms", cordon.unix_ms}}
      .dump();
}

absl::StatusOr<Cordon> CordonFromValue(const std::string& value) {
  try {
    const Json json = Json::parse(value);
    Cordon cordon;
    cordon.device = json.value("device", "");
    cordon.node = json.value("node", "");
    cordon.reason = json.value("reason", "");
    cordon.drain = json.value("drain", false);
    cordon.by = json.value("by", "");
    cordon.unix_ms = json.value("unix_ms", int64_t{0});
    if (cordon.device.empty() != cordon.node.empty()) return cordon;
    return WithErrorInfo(absl::DataLossError("not a stored cordon: neither "
                                             "or both of device and node"),
                         kReasonStoreDamaged);
  } catch (const Json::exception& e) {
    return WithErrorInfo(
        absl::DataLossError(absl::StrCat("not a stored cordon: ", e.what())),
        kReasonStoreDamaged);
  }
}

std::string EtcdKeys::DeviceClaimSlots(const ClaimRecord& claim) const {
  return absl::StrCat(prefix_, "claim-slots/", EscapeKeySegment(claim.node),
                      "/", EscapeKeySegment(claim.device), "/");
}

std::string EtcdKeys::ClaimSlot(const ClaimRecord& claim) const {
  return absl::StrCat(DeviceClaimSlots(claim), claim.slot);
}

absl::StatusOr<std::unique_ptr<EtcdStore>> EtcdStore::Open(
    const std::vector<std::string>& endpoints, const std::string& prefix,
    EtcdClientOptions options) {
  if (prefix.empty() || prefix.back() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("store_prefix: '", prefix, "' must end with '/'"));
  }
  // One cheap read: a wrong address fails here, not at the first write.
  // Fresh channels for each try: a channel whose first connection met an
  // etcd that was not serving yet kept failing for many seconds.
  const absl::Time deadline = absl::Now() + kOpenPatience;
  Backoff backoff({absl::Milliseconds(100), absl::Seconds(1)});
  // A TLS handshake that fails three times in a row (well under a second)
  // fails again: say so now, not in 15 s. Once can be a connection lost
  // mid-handshake on a loaded machine.
  int tls_failures = 0;
  for (;;) {
    CTXSEL_ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> client,
                            EtcdClient::Create(endpoints, options));
    absl::StatusOr<etcdserverpb::RangeResponse> probe =
        client->Range(prefix, "");
    if (probe.ok()) {
      return std::unique_ptr<EtcdStore>(
          new EtcdStore(std::move(client), prefix));
    }
    tls_failures = IsEtcdTlsFailure(probe.status()) ? tls_failures + 1 : 0;
    if (!absl::IsUnavailable(probe.status()) || tls_failures >= 3 ||
        absl::Now() > deadline) {
      return probe.status();
    }
    spdlog::warn("waiting for etcd: {}", probe.status().ToString());
    absl::SleepFor(backoff.Next());
  }
}

std::string EtcdStore::Describe() const {
  return absl::StrCat("etcd://", client_->Describe(), " prefix ",
                      keys_.prefix());
}

absl::StatusOr<StoreContents> EtcdStore::Load() {
  CTXSEL_ASSIGN_OR_RETURN(
      etcdserverpb::RangeResponse variants,
      client_->Range(keys_.Variants(), PrefixEnd(keys_.Variants())));
  const int64_t revision = variants.header().revision();
  CTXSEL_ASSIGN_OR_RETURN(
      etcdserverpb::RangeResponse kernels,
      client_->Range(keys_.Kernels(), PrefixEnd(keys_.Kernels()), revision));

  StoreContents contents;
  contents.revision = revision;
  for (const mvccpb::KeyValue& kv : kernels.kvs()) {
    contents.kernel_revisions[NameAfter(keys_.Kernels(), kv.key())] =
        kv.mod_revision();
  }
  for (const mvccpb::KeyValue& kv : variants.kvs()) {
    absl::StatusOr<VariantRecord> record = VariantFromValue(kv.value());
    if (!record.ok()) return CorruptRecord(kv.key(), record.status());
    record->revision = kv.mod_revision();
    contents.variants.push_back(*std::move(record));
  }
  std::sort(contents.variants.begin(), contents.variants.end(),
            [](const VariantRecord& a, const VariantRecord& b) {
              return std::tie(a.kernel, a.order) < std::tie(b.kernel, b.order);
            });
  absl::MutexLock lock(&mu_);
  loaded_revision_ = revision;
  return contents;
}

int64_t EtcdStore::loaded_revision() const {
  absl::MutexLock lock(&mu_);
  return loaded_revision_;
}

absl::StatusOr<int64_t> EtcdStore::Apply(const StoreBatch& batch) {
  TxnRequest txn;
  std::map<std::string, int64_t> guards = batch.expected_kernel_revisions;
  std::set<std::string> put_keys;
  std::set<std::string> touched;
  for (const VariantRecord& record : batch.puts) {
    put_keys.insert(keys_.Variant(record.kernel, record.name));
  }
  // etcd refuses a transaction that deletes a key it also puts, so a
  // cleared kernel's keys are deleted one by one, as read now; the guard
  // on the kernel's revision makes sure they are still the kernel's keys.
  for (const std::string& kernel : batch.clear_kernels) {
    touched.insert(kernel);
    absl::StatusOr<etcdserverpb::RangeResponse> existing = client_->Range(
        keys_.KernelVariants(kernel), PrefixEnd(keys_.KernelVariants(kernel)));
    if (!existing.ok()) return Failed(existing.status(), "the write");
    if (!guards.count(kernel)) {
      absl::StatusOr<etcdserverpb::RangeResponse> marker = client_->Range(
          keys_.Kernel(kernel), "", existing->header().revision());
      if (!marker.ok()) return Failed(marker.status(), "the write");
      guards[kernel] = marker->kvs_size() ? marker->kvs(0).mod_revision() : 0;
    }
    for (const mvccpb::KeyValue& kv : existing->kvs()) {
      if (!put_keys.count(kv.key())) AddDelete(txn, kv.key());
    }
  }
  for (const auto& [kernel, name] : batch.deletes) {
    touched.insert(kernel);
    const std::string key = keys_.Variant(kernel, name);
    if (!put_keys.count(key)) AddDelete(txn, key);
  }
  for (const VariantRecord& record : batch.puts) {
    touched.insert(record.kernel);
    AddPut(txn, keys_.Variant(record.kernel, record.name),
           VariantValue(record));
  }
  for (const std::string& kernel : touched)
    AddPut(txn, keys_.Kernel(kernel), "");
  for (const auto& [kernel, revision] : guards) {
    AddCompare(txn, keys_.Kernel(kernel), Compare::MOD, revision);
    txn.add_failure()->mutable_request_range()->set_key(keys_.Kernel(kernel));
  }
  absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn);
  if (!response.ok()) return Failed(response.status(), "the write");
  if (!response->succeeded()) {
    std::vector<std::string> changed;
    int i = 0;
    for (const auto& [kernel, expected] : guards) {
      const auto& kvs = response->responses(i++).response_range().kvs();
      const int64_t now = kvs.empty() ? 0 : kvs[0].mod_revision();
      if (now != expected) {
        changed.push_back(absl::StrCat(kernel, " (revision ", now,
                                       ", expected ", expected, ")"));
      }
    }
    return WithErrorInfo(
        absl::AbortedError(absl::StrCat("another server changed kernel ",
                                        absl::StrJoin(changed, ", "),
                                        " first; the write was not applied")),
        kReasonStoreConflict);
  }
  return response->header().revision();
}

absl::StatusOr<StoreSummary> EtcdStore::Backup(const std::string&) {
  return WithErrorInfo(
      absl::UnimplementedError(
          "the etcd store is backed up with `etcdctl snapshot save` "
          "(docs/deployment.md)"),
      kReasonBackupUnsupported);
}

absl::Status EtcdStore::CorruptRecord(absl::string_view key,
                                      const absl::Status& why) const {
  absl::Status status =
      WithErrorInfo(absl::DataLossError(absl::StrCat(Describe(), ": key ", key,
                                                     ": ", why.message())),
                    kReasonStoreDamaged);
  corrupt_records_.fetch_add(1);
  spdlog::error("{}", status.ToString());
  return status;
}

absl::StatusOr<std::vector<ClaimRecord>> EtcdStore::LoadClaims() {
  return ReadClaims(/*skip_corrupt=*/false);
}

absl::StatusOr<std::vector<ClaimRecord>> EtcdStore::ReadClaims(
    bool skip_corrupt) {
  CTXSEL_ASSIGN_OR_RETURN(
      etcdserverpb::RangeResponse claims,
      client_->Range(keys_.Claims(), PrefixEnd(keys_.Claims())));
  std::vector<ClaimRecord> records;
  for (const mvccpb::KeyValue& kv : claims.kvs()) {
    absl::StatusOr<ClaimRecord> record = ClaimFromValue(kv.value());
    if (!record.ok()) {
      absl::Status corrupt = CorruptRecord(kv.key(), record.status());
      if (skip_corrupt) continue;
      return corrupt;
    }
    records.push_back(*std::move(record));
  }
  return records;
}

absl::StatusOr<std::vector<Cordon>> EtcdStore::LoadCordons() {
  CTXSEL_ASSIGN_OR_RETURN(
      etcdserverpb::RangeResponse stored,
      client_->Range(keys_.Cordons(), PrefixEnd(keys_.Cordons())));
  std::vector<Cordon> cordons;
  for (const mvccpb::KeyValue& kv : stored.kvs()) {
    absl::StatusOr<Cordon> cordon = CordonFromValue(kv.value());
    if (!cordon.ok()) {
      // Keep the others: a cordon that cannot be read is logged, counted.
      CorruptRecord(kv.key(), cordon.status()).IgnoreError();
      continue;
    }
    cordons.push_back(*std::move(cordon));
  }
  return cordons;
}

absl::Status EtcdStore::PutCordon(const Cordon& cordon) {
  TxnRequest txn;
  AddPut(txn, keys_.Cordon(cordon.Key()), CordonValue(cordon));
  absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn);
  if (!response.ok()) return Failed(response.status(), "the cordon");
  return absl::OkStatus();
}

absl::Status EtcdStore::DeleteCordon(const std::string& key) {
  TxnRequest txn;
  AddDelete(txn, keys_.Cordon(key));
  absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn);
  if (!response.ok()) return Failed(response.status(), "the uncordon");
  if (response->responses_size() == 0 ||
      response->responses(0).response_delete_range().deleted() == 0) {
    return absl::NotFoundError(absl::StrCat("no cordon on ", key));
  }
  return absl::OkStatus();
}

absl::Status EtcdStore::ApplyClaims(const ClaimBatch& batch) {
  TxnRequest txn;
  std::vector<int64_t> old_leases;  // revoked once the batch holds
  std::vector<int64_t> new_leases;  // revoked if it does not
  auto revoke = [&](const std::vector<int64_t>& leases) {
    for (int64_t lease : leases) client_->LeaseRevoke(lease).IgnoreError();
  };
  const absl::Time now = absl::Now();
  // The places this batch frees, with the revision their slot key had: a
  // put of the same place below takes it over in place, since etcd refuses
  // a transaction that deletes and puts one key.
  std::map<std::string, int64_t> freed_slots;
  auto end_claim = [&](const std::string& id, bool expired) -> absl::Status {
    absl::StatusOr<etcdserverpb::RangeResponse> stored =
        client_->Range(keys_.Claim(id), "");
    if (!stored.ok()) return Failed(stored.status(), "the claim change");
    if (stored->kvs_size() == 0) return absl::OkStatus();  // gone already
    const mvccpb::KeyValue& kv = stored->kvs(0);
    absl::StatusOr<ClaimRecord> record = ClaimFromValue(kv.value());
    if (expired) {
      // This server believes the claim expired, but another may have
      // renewed it since: the stored expiry decides, and the delete holds
      // only if nobody changed the claim after this read. A claim renewed
      // elsewhere stays; its lease or a later expiry ends it.
      if (record.ok() && absl::FromUnixMillis(record->expires_unix_ms) > now) {
        return absl::OkStatus();
      }
      AddCompare(txn, kv.key(), Compare::MOD, kv.mod_revision());
    }
    AddDelete(txn, kv.key());
    if (kv.lease() != 0) old_leases.push_back(kv.lease());
    if (!record.ok()) return absl::OkStatus();
    const std::string slot_key = keys_.ClaimSlot(*record);
    absl::StatusOr<etcdserverpb::RangeResponse> slot =
        client_->Range(slot_key, "");
    if (!slot.ok()) return Failed(slot.status(), "the claim change");
    if (slot->kvs_size() > 0 && slot->kvs(0).value() == id) {
      freed_slots[slot_key] = slot->kvs(0).mod_revision();
    }
    return absl::OkStatus();
  };
  for (const std::string& id : batch.deletes) {
    CTXSEL_RETURN_IF_ERROR(end_claim(id, /*expired=*/false));
  }
  for (const std::string& id : batch.expired) {
    CTXSEL_RETURN_IF_ERROR(end_claim(id, /*expired=*/true));
  }
  // A new claim's room was judged against the claims its book counted on
  // the device: another replica's claim there since (a share, or the whole
  // device) may leave none, so the device must hold no other live claim
  // now, and no place may be created on it before the batch commits.
  std::set<std::string> ending(batch.deletes.begin(), batch.deletes.end());
  ending.insert(batch.expired.begin(), batch.expired.end());
  std::set<std::string> guarded;  // devices' place folders, once each
  auto guard_device = [&](const ClaimRecord& record) -> absl::Status {
    auto counted = batch.counted.find(record.device);
    if (counted == batch.counted.end()) return absl::OkStatus();
    const std::string places = keys_.DeviceClaimSlots(record);
    if (!guarded.insert(places).second) return absl::OkStatus();
    absl::StatusOr<etcdserverpb::RangeResponse> held =
        client_->Range(places, PrefixEnd(places));
    if (!held.ok()) return Failed(held.status(), "the claim");
    std::vector<std::string> others;
    for (const mvccpb::KeyValue& kv : held->kvs()) {
      if (!counted->second.count(kv.value()) && !ending.count(kv.value())) {
        others.push_back(kv.value());
      }
    }
    if (!others.empty()) {
      // A place whose claim is gone or expired holds no room.
      absl::StatusOr<std::vector<ClaimRecord>> stored = StoredClaims(others);
      if (!stored.ok()) return Failed(stored.status(), "the claim");
      for (const ClaimRecord& other : *stored) {
        if (absl::FromUnixMillis(other.expires_unix_ms) > now) {
          return ClaimedFirst();
        }
      }
    }
    AddCreatedBefore(txn, places, PrefixEnd(places),
                     held->header().revision() + 1);
    return absl::OkStatus();
  };
  for (const ClaimRecord& record : batch.puts) {
    absl::StatusOr<etcdserverpb::RangeResponse> stored =
        client_->Range(keys_.Claim(record.id), "");
    if (!stored.ok()) {
      revoke(new_leases);
      return Failed(stored.status(), "the claim");
    }
    const std::string slot_key = keys_.ClaimSlot(record);
    if (stored->kvs_size() > 0) {
      // A renewal: it still holds its place if nobody changed the claim.
      AddCompare(txn, keys_.Claim(record.id), Compare::MOD,
                 stored->kvs(0).mod_revision());
      if (stored->kvs(0).lease() != 0) {
        old_leases.push_back(stored->kvs(0).lease());
      }
    } else if (auto freed = freed_slots.find(slot_key);
               freed != freed_slots.end()) {
      // A new claim on a place this batch frees: the place must still be
      // the freed claim's.
      AddCompare(txn, slot_key, Compare::MOD, freed->second);
      freed_slots.erase(freed);
    } else {
      // A new claim: its place must be free.
      AddCompare(txn, slot_key, Compare::CREATE, 0);
    }
    if (stored->kvs_size() == 0) {
      if (absl::Status guard = guard_device(record); !guard.ok()) {
        revoke(new_leases);
        return guard;
      }
    }
    absl::StatusOr<int64_t> lease = client_->LeaseGrant(
        absl::FromUnixMillis(record.expires_unix_ms) - now + kLeaseSlack);
    if (!lease.ok()) {
      revoke(new_leases);
      return Failed(lease.status(), "the claim");
    }
    new_leases.push_back(*lease);
    AddPut(txn, keys_.Claim(record.id), ClaimValue(record), *lease);
    AddPut(txn, slot_key, record.id, *lease);
  }
  // A slot read as this claim's may have been taken over since (an expired
  // claim re-claimed by another replica): delete it only if unchanged.
  for (const auto& [slot_key, revision] : freed_slots) {
    AddDeleteIfUnchanged(txn, slot_key, revision);
  }
  if (txn.success_size() == 0) return absl::OkStatus();
  absl::StatusOr<etcdserverpb::TxnResponse> response = client_->Txn(txn);
  if (response.ok() && response->succeeded()) {
    revoke(old_leases);
    return absl::OkStatus();
  }
  // The client retries a transaction on another endpoint when one does not
  // answer, so a failed compare or an error can follow an attempt that was
  // stored: read back before saying what happened.
  if (!batch.puts.empty() && StoredAsPut(batch.puts)) {
    revoke(old_leases);
    return absl::OkStatus();
  }
  if (!response.ok()) {
    // Unknown outcome (the read-back did not find the batch, or failed
    // too): its new leases are left to their TTL, since revoking them would
    // delete a batch that did hold.
    return WithErrorInfo(
        absl::UnavailableError(absl::StrCat(
            "the claim may not have been stored (etcd did not confirm it: ",
            response.status().message(), "); try again")),
        kReasonStoreUnavailable);
  }
  revoke(new_leases);
  return ClaimedFirst();
}

bool EtcdStore::StoredAsPut(const std::vector<ClaimRecord>& puts) {
  for (const ClaimRecord& record : puts) {
    absl::StatusOr<etcdserverpb::RangeResponse> stored =
        client_->Range(keys_.Claim(record.id), "");
    if (!stored.ok() || stored->kvs_size() == 0 ||
        stored->kvs(0).value() != ClaimValue(record)) {
      return false;
    }
    absl::StatusOr<etcdserverpb::RangeResponse> slot =
        client_->Range(keys_.ClaimSlot(record), "");
    if (!slot.ok() || slot->kvs_size() == 0 ||
        slot->kvs(0).value() != record.id) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::vector<ClaimRecord>> EtcdStore::StoredClaims(
    const std::vector<std::string>& ids) {
  std::vector<ClaimRecord> records;
  for (const std::string& id : ids) {
    CTXSEL_ASSIGN_OR_RETURN(etcdserverpb::RangeResponse claim,
                            client_->Range(keys_.Claim(id), ""));
    if (claim.kvs_size() == 0) continue;  // released meanwhile
    absl::StatusOr<ClaimRecord> record = ClaimFromValue(claim.kvs(0).value());
    if (record.ok()) records.push_back(*std::move(record));
  }
  return records;
}

absl::StatusOr<std::vector<ClaimRecord>> EtcdStore::ClaimsHolding(
    const std::vector<ClaimRecord>& wanted) {
  // Every claim on the wanted devices: on the place a put asked for, or
  // one its room was not judged against (ClaimBatch::counted). Expired
  // ones too: the caller drops them, and its store write frees them.
  std::set<std::string> wanted_ids;
  for (const ClaimRecord& place : wanted) wanted_ids.insert(place.id);
  std::set<std::string> folders;
  std::vector<std::string> ids;
  for (const ClaimRecord& place : wanted) {
    const std::string folder = keys_.DeviceClaimSlots(place);
    if (!folders.insert(folder).second) continue;
    CTXSEL_ASSIGN_OR_RETURN(etcdserverpb::RangeResponse slots,
                            client_->Range(folder, PrefixEnd(folder)));
    for (const mvccpb::KeyValue& kv : slots.kvs()) {
      if (!wanted_ids.count(kv.value())) ids.push_back(kv.value());
    }
  }
  return StoredClaims(ids);
}

void EtcdStore::MarkApplied(int64_t revision) {
  absl::MutexLock lock(&mu_);
  if (!applied_revision_ || *applied_revision_ < revision) {
    applied_revision_ = revision;
  }
}

void EtcdStore::CatchUp() {
  {
    absl::MutexLock lock(&mu_);
    if (!applied_revision_) return;
  }
  // The last change under the prefix that still has a key: the kernel or
  // claim place that made the write fail is one.
  etcdserverpb::RangeRequest latest;
  latest.set_key(keys_.prefix());
  latest.set_range_end(PrefixEnd(keys_.prefix()));
  latest.set_sort_target(etcdserverpb::RangeRequest::MOD);
  latest.set_sort_order(etcdserverpb::RangeRequest::DESCEND);
  latest.set_limit(1);
  latest.set_keys_only(true);
  absl::StatusOr<etcdserverpb::RangeResponse> now = client_->Range(latest);
  if (!now.ok() || now->kvs_size() == 0) return;
  const int64_t target = now->kvs(0).mod_revision();
  absl::MutexLock lock(&mu_);
  auto caught_up = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return *applied_revision_ >= target;
  };
  mu_.AwaitWithTimeout(absl::Condition(&caught_up), absl::Seconds(2));
}

}  // namespace ctxsel::server::etcd
