#include "server/registry/variant_registry.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_details.h"
#include "base/status_macros.h"
#include "server/model/kernel_errors.h"
#include "server/model/names.h"
#include "server/model/page_token.h"
#include "server/model/selector_field_error.h"
#include "server/registry/kernel_variants.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

VariantRecord ToRecord(const Variant& variant) {
  return {variant.kernel, variant.name,     variant.selector_text,
          variant.order,  variant.revision, variant.metadata};
}

// Page tokens hold the position of the last listed variant, (kernel,
// order), under the request's `kernel` filter (page_token.h).
std::string EncodeToken(const std::string& filters, const Variant& last) {
  return EncodePageToken("ListVariants", filters,
                         {last.kernel, absl::StrCat(last.order)});
}

absl::Status VariantNotFound(const std::string& kernel,
                             const std::string& name) {
  return WithResourceInfo(
      WithErrorInfo(absl::NotFoundError(absl::StrCat(
                        "kernel ", kernel, " has no variant '", name, "'")),
                    kReasonVariantNotFound,
                    {{"kernel", kernel}, {"name", name}}),
      "ctxsel.v1.Variant", absl::StrCat(kernel, "/", name));
}

// Get and Delete name one variant: both keys are required.
absl::Status CheckVariantKey(const std::string& kernel,
                             const std::string& name) {
  if (kernel.empty()) return FieldViolation("kernel", "required");
  if (name.empty()) return FieldViolation("name", "required");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<VariantRegistry>> VariantRegistry::Open(
    Store* store, VariantObserver* observer, RegistryLimits limits) {
  CTXSEL_ASSIGN_OR_RETURN(StoreContents contents, store->Load());
  std::unique_ptr<VariantRegistry> registry(
      new VariantRegistry(store, observer, limits));
  absl::MutexLock lock(&registry->mu_);
  registry->revision_ = contents.revision;
  registry->kernel_revisions_ = std::move(contents.kernel_revisions);
  for (VariantRecord& record : contents.variants) {
    int64_t& kernel_revision = registry->kernel_revisions_[record.kernel];
    kernel_revision = std::max(kernel_revision, record.revision);
    absl::StatusOr<selector::Selector> parsed =
        selector::Selector::Parse(record.selector_text);
    if (!parsed.ok()) {
      return absl::DataLossError(absl::StrCat(
          store->Describe(), ": stored variant ", record.kernel, "/",
          record.name, " no longer parses: ", parsed.status().message()));
    }
    registry->kernels_[record.kernel].push_back(
        Variant{record.kernel, record.name, std::move(record.selector_text),
                *std::move(parsed), record.order, record.revision,
                std::move(record.metadata)});
  }
  if (observer != nullptr) {
    for (const auto& [kernel, variants] : registry->kernels_) {
      observer->KernelChanged(kernel, variants);
    }
  }
  return registry;
}

absl::StatusOr<std::vector<Variant>> VariantRegistry::Validate(
    const std::string& kernel, std::vector<VariantSpec>& specs, bool replace,
    int64_t revision) const {
  CTXSEL_RETURN_IF_ERROR(ValidateName(kernel, "kernel"));
  if (specs.empty()) {
    return FieldViolation("variants", "empty batch");
  }
  if (specs.size() > static_cast<size_t>(limits_.max_batch_size)) {
    return FieldViolation(
        "variants", absl::StrCat(specs.size(), " in one batch; the limit is ",
                                 limits_.max_batch_size));
  }
  const auto existing = kernels_.find(kernel);
  absl::Span<const Variant> kept;
  if (!replace && existing != kernels_.end()) kept = existing->second;
  int64_t next_order = 0;
  for (const Variant& v : kept) next_order = std::max(next_order, v.order + 1);
  std::vector<Variant> variants;
  variants.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    CTXSEL_ASSIGN_OR_RETURN(
        Variant variant,
        VariantFromSpec(kernel, specs[i], absl::StrCat("variants[", i, "]")));
    variant.order = next_order++;
    variant.revision = revision;
    variants.push_back(std::move(variant));
  }
  // The list as placement will take it, by placement's own rule.
  CTXSEL_RETURN_IF_ERROR(CheckKernelVariants(kernel, kept, variants));
  return variants;
}

absl::StatusOr<Variant> VariantFromSpec(const std::string& kernel,
                                        VariantSpec& spec,
                                        const std::string& field) {
  CTXSEL_RETURN_IF_ERROR(ValidateName(spec.name, field + ".name"));
  absl::StatusOr<selector::Selector> parsed =
      selector::Selector::Parse(spec.selector_text);
  if (!parsed.ok()) {
    return SelectorFieldError(
        field + ".selector", parsed.status(),
        {{"kernel", kernel}, {"variant", spec.name}},
        absl::StrCat(field, " (", spec.name, ").selector"));
  }
  return Variant{kernel,
                 std::move(spec.name),
                 std::move(spec.selector_text),
                 *std::move(parsed),
                 /*order=*/0,
                 /*revision=*/0,
                 std::move(spec.metadata)};
}

template <typename Change>
auto VariantRegistry::RetryAborted(Change change) -> decltype(change()) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    auto result = change();
    if (!absl::IsAborted(result.status()) || attempt == kAttempts) {
      return result;
    }
    store_->CatchUp();  // without mu_: catching up takes it
  }
}

StoreBatch VariantRegistry::BatchFor(const std::string& kernel) const {
  StoreBatch batch;
  batch.revision = revision_ + 1;
  const auto it = kernel_revisions_.find(kernel);
  batch.expected_kernel_revisions[kernel] =
      it == kernel_revisions_.end() ? 0 : it->second;
  return batch;
}

int64_t VariantRegistry::Stored(const std::string& kernel, int64_t revision) {
  revision_ = std::max(revision_, revision);
  kernel_revisions_[kernel] = revision;
  return revision;
}

absl::StatusOr<RegisterResult> VariantRegistry::Register(
    const std::string& kernel, std::vector<VariantSpec> specs, bool replace,
    int64_t expected_revision) {
  // A replica behind the store sees an older revision than the caller's
  // and catches up before it answers ABORTED.
  return RetryAborted(
      [&] { return TryRegister(kernel, specs, replace, expected_revision); });
}

absl::StatusOr<RegisterResult> VariantRegistry::TryRegister(
    const std::string& kernel, std::vector<VariantSpec> specs, bool replace,
    int64_t expected_revision) {
  absl::MutexLock lock(&mu_);
  StoreBatch batch = BatchFor(kernel);
  const int64_t kernel_revision = batch.expected_kernel_revisions[kernel];
  if (expected_revision != 0 && kernel_revision != expected_revision) {
    return WithErrorInfo(
        absl::AbortedError(absl::StrCat("expected_revision: kernel ", kernel,
                                        " is at revision ", kernel_revision,
                                        ", not ", expected_revision,
                                        "; nothing was stored")),
        kReasonRevisionMismatch,
        {{"kernel", kernel},
         {"revision", absl::StrCat(kernel_revision)},
         {"expected_revision", absl::StrCat(expected_revision)}});
  }
  CTXSEL_ASSIGN_OR_RETURN(std::vector<Variant> added,
                          Validate(kernel, specs, replace, batch.revision));

  if (replace) batch.clear_kernels.push_back(kernel);
  for (const Variant& v : added) batch.puts.push_back(ToRecord(v));
  CTXSEL_ASSIGN_OR_RETURN(int64_t stored, store_->Apply(batch));

  const int64_t revision = Stored(kernel, stored);
  for (Variant& v : added) v.revision = revision;
  std::vector<Variant>& variants = kernels_[kernel];
  if (replace) variants.clear();
  variants.insert(variants.end(), added.begin(), added.end());
  if (observer_ != nullptr) observer_->KernelChanged(kernel, variants);
  return RegisterResult{revision, std::move(added)};
}

absl::StatusOr<VariantPage> VariantRegistry::List(
    const std::string& kernel, int page_size, const std::string& page_token,
    PageBudget<Variant> budget) const {
  CTXSEL_ASSIGN_OR_RETURN(
      const size_t limit,
      PageSizeOf(page_size, limits_.default_page_size, limits_.max_page_size));
  const std::string filters = PageFilters({{"kernel", kernel}});
  std::pair<std::string, int64_t> after = {"", -1};
  const bool resume = !page_token.empty();
  if (resume) {
    CTXSEL_ASSIGN_OR_RETURN(
        std::vector<std::string> decoded,
        DecodePageToken(page_token, "ListVariants", filters, 2));
    after.first = decoded[0];
    if (!absl::SimpleAtoi(decoded[1], &after.second)) {
      return WithErrorInfo(
          FieldViolation("page_token",
                         "not a token from a previous ListVariants answer"),
          kReasonPageTokenInvalid, {{"listing", "ListVariants"}});
    }
  }
  absl::ReaderMutexLock lock(&mu_);
  VariantPage page;
  page.revision = revision_;
  auto it = kernel.empty() ? kernels_.lower_bound(after.first)
                           : kernels_.find(kernel);
  for (; it != kernels_.end(); ++it) {
    if (!kernel.empty() && it->first != kernel) break;
    for (const Variant& v : it->second) {
      if (resume && std::make_pair(v.kernel, v.order) <= after) continue;
      const PageFit fit =
          page.variants.size() == limit ? PageFit::kFull : budget.Take(v);
      if (fit == PageFit::kTooLarge) {
        return TooLargeForAPage(absl::StrCat("variant ", v.kernel, "/", v.name),
                                budget);
      }
      if (fit == PageFit::kFull) {
        page.next_page_token = EncodeToken(filters, page.variants.back());
        return page;
      }
      page.variants.push_back(v);
    }
    if (!kernel.empty()) break;
  }
  return page;
}

absl::StatusOr<Variant> VariantRegistry::Get(const std::string& kernel,
                                             const std::string& name) const {
  CTXSEL_RETURN_IF_ERROR(CheckVariantKey(kernel, name));
  absl::ReaderMutexLock lock(&mu_);
  const auto it = kernels_.find(kernel);
  if (it != kernels_.end()) {
    for (const Variant& v : it->second) {
      if (v.name == name) return v;
    }
  }
  return VariantNotFound(kernel, name);
}

absl::StatusOr<int64_t> VariantRegistry::Delete(const std::string& kernel,
                                                const std::string& name) {
  CTXSEL_RETURN_IF_ERROR(CheckVariantKey(kernel, name));
  return RetryAborted([&] { return TryDelete(kernel, name); });
}

absl::StatusOr<int64_t> VariantRegistry::TryDelete(const std::string& kernel,
                                                   const std::string& name) {
  absl::MutexLock lock(&mu_);
  const auto it = kernels_.find(kernel);
  auto found =
      it == kernels_.end()
          ? std::vector<Variant>::iterator()
          : std::find_if(it->second.begin(), it->second.end(),
                         [&](const Variant& v) { return v.name == name; });
  if (it == kernels_.end() || found == it->second.end()) {
    return VariantNotFound(kernel, name);
  }
  StoreBatch batch = BatchFor(kernel);
  batch.deletes.emplace_back(kernel, name);
  CTXSEL_ASSIGN_OR_RETURN(int64_t stored, store_->Apply(batch));
  Stored(kernel, stored);
  it->second.erase(found);
  if (observer_ != nullptr) observer_->KernelChanged(kernel, it->second);
  if (it->second.empty()) kernels_.erase(it);
  return revision_;
}

absl::StatusOr<int64_t> VariantRegistry::DeleteAllVariants(
    const std::string& kernel) {
  if (kernel.empty()) return FieldViolation("kernel", "required");
  return RetryAborted([&] { return TryDeleteAllVariants(kernel); });
}

absl::StatusOr<int64_t> VariantRegistry::TryDeleteAllVariants(
    const std::string& kernel) {
  absl::MutexLock lock(&mu_);
  const auto it = kernels_.find(kernel);
  if (it == kernels_.end()) {
    return KernelNotFound(kernel);
  }
  StoreBatch batch = BatchFor(kernel);
  batch.clear_kernels.push_back(kernel);
  CTXSEL_ASSIGN_OR_RETURN(int64_t stored, store_->Apply(batch));
  Stored(kernel, stored);
  kernels_.erase(it);
  if (observer_ != nullptr) observer_->KernelChanged(kernel, {});
  return revision_;
}

void VariantRegistry::ApplyStored(const std::string& kernel,
                                  std::vector<VariantRecord> records,
                                  int64_t kernel_revision) {
  absl::MutexLock lock(&mu_);
  revision_ = std::max(revision_, kernel_revision);
  int64_t& known = kernel_revisions_[kernel];
  if (known >= kernel_revision) return;  // this server wrote it, or later
  known = kernel_revision;
  std::sort(records.begin(), records.end(),
            [](const VariantRecord& a, const VariantRecord& b) {
              return a.order < b.order;
            });
  // The selectors held already, by variant name: a kernel that grows by
  // one variant is not parsed again whole (a replica following a high
  // write rate to a large kernel spent its time re-parsing; issue 22).
  absl::flat_hash_map<std::string, const Variant*> held;
  if (auto it = kernels_.find(kernel); it != kernels_.end()) {
    for (const Variant& v : it->second) held.emplace(v.name, &v);
  }
  std::vector<Variant> variants;
  for (VariantRecord& record : records) {
    auto same = held.find(record.name);
    absl::StatusOr<selector::Selector> parsed =
        same != held.end() &&
                same->second->selector_text == record.selector_text
            ? absl::StatusOr<selector::Selector>(same->second->selector)
            : selector::Selector::Parse(record.selector_text);
    if (!parsed.ok()) {
      // Another server validated it; a newer selector grammar there is the
      // one way here. Serve the rest of the kernel.
      spdlog::error("stored variant {}/{} does not parse here: {}",
                    record.kernel, record.name,
                    std::string(parsed.status().message()));
      continue;
    }
    variants.push_back(Variant{record.kernel, record.name,
                               std::move(record.selector_text),
                               *std::move(parsed), record.order,
                               record.revision, std::move(record.metadata)});
  }
  if (variants.empty()) {
    kernels_.erase(kernel);
  } else {
    kernels_[kernel] = variants;
  }
  if (observer_ != nullptr) observer_->KernelChanged(kernel, variants);
}

int64_t VariantRegistry::revision() const {
  absl::ReaderMutexLock lock(&mu_);
  return revision_;
}

size_t VariantRegistry::kernel_count() const {
  absl::ReaderMutexLock lock(&mu_);
  return kernels_.size();
}

}  // namespace ctxsel::server
