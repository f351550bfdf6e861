#include "server/claims/cordons.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/error_reasons.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "server/model/names.h"

namespace ctxsel::server {
namespace {

// Exactly one of device and node, each by the names rule.
absl::Status CheckTarget(const std::string& device, const std::string& node) {
  if (device.empty() == node.empty()) {
    return FieldViolation(device.empty() ? "device" : "node",
                          "set exactly one of device and node");
  }
  return device.empty() ? ValidateName(node, "node")
                        : ValidateName(device, "device");
}

}  // namespace

absl::Status CordonBook::Reload() {
  CTXSEL_ASSIGN_OR_RETURN(std::vector<Cordon> stored, store_->LoadCordons());
  std::map<std::string, Cordon> by_key;
  for (Cordon& c : stored) by_key[c.Key()] = std::move(c);
  absl::MutexLock lock(&mu_);
  const auto same = [](const Cordon& a, const Cordon& b) {
    return a.device == b.device && a.node == b.node && a.reason == b.reason &&
           a.drain == b.drain;
  };
  if (std::equal(by_key.begin(), by_key.end(), by_key_.begin(), by_key_.end(),
                 [&](const auto& a, const auto& b) {
                   return a.first == b.first && same(a.second, b.second);
                 })) {
    return absl::OkStatus();  // nothing changed: placement untouched
  }
  by_key_ = std::move(by_key);
  ApplyLocked();
  return absl::OkStatus();
}

absl::StatusOr<Cordon> CordonBook::Put(Cordon cordon) {
  CTXSEL_RETURN_IF_ERROR(CheckTarget(cordon.device, cordon.node));
  CTXSEL_RETURN_IF_ERROR(ValidateName(cordon.reason, "reason"));
  if (cordon.unix_ms == 0) cordon.unix_ms = absl::ToUnixMillis(absl::Now());
  absl::MutexLock lock(&mu_);
  // Stored first: a cordon the store did not take is no cordon.
  CTXSEL_RETURN_IF_ERROR(store_->PutCordon(cordon));
  by_key_[cordon.Key()] = cordon;
  ApplyLocked();
  return cordon;
}

absl::Status CordonBook::Remove(const std::string& device,
                                const std::string& node) {
  CTXSEL_RETURN_IF_ERROR(CheckTarget(device, node));
  Cordon target;
  target.device = device;
  target.node = node;
  absl::MutexLock lock(&mu_);
  absl::Status removed = store_->DeleteCordon(target.Key());
  if (absl::IsNotFound(removed)) {
    by_key_.erase(target.Key());  // another replica removed it
    ApplyLocked();
    return WithErrorInfo(
        absl::NotFoundError(absl::StrCat("no cordon on ",
                                         device.empty() ? "node '" : "device '",
                                         device.empty() ? node : device, "'")),
        kReasonCordonNotFound, {{"device", device}, {"node", node}});
  }
  CTXSEL_RETURN_IF_ERROR(removed);
  by_key_.erase(target.Key());
  ApplyLocked();
  return absl::OkStatus();
}

std::vector<Cordon> CordonBook::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<Cordon> out;
  for (const auto& [key, c] : by_key_) out.push_back(c);
  return out;
}

absl::Status CordonBook::CheckRenewal(const std::string& device,
                                      const std::string& node) const {
  absl::MutexLock lock(&mu_);
  const Cordon* drain = nullptr;
  for (const std::string& key : {"device:" + device, "node:" + node}) {
    auto it = by_key_.find(key);
    if (it != by_key_.end() && it->second.drain) {
      drain = &it->second;
      break;
    }
  }
  if (drain == nullptr) return absl::OkStatus();
  return WithErrorInfo(
      absl::FailedPreconditionError(absl::StrCat(
          "device '", device, "' is drained (",
          drain->device.empty() ? "node '" + node + "'" : "device",
          " cordoned: ", drain->reason, "): the claim is not renewed")),
      kReasonDeviceDrained,
      {{"device", device}, {"node", node}, {"reason", drain->reason}});
}

void CordonBook::ApplyLocked() {
  std::vector<Cordon> all;
  all.reserve(by_key_.size());
  for (const auto& [key, c] : by_key_) all.push_back(c);
  const std::vector<std::string> nodes = placer_->SetCordons(all);
  if (changed_ && !nodes.empty()) changed_(nodes);
}

}  // namespace ctxsel::server
