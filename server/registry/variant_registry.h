// variant_registry.h: the registered kernel variants, durable through a Store.
//
// The registry validates every change completely (names, selectors, and the
// kernel's resulting list by placement's own rule, CheckKernelVariants in
// kernel_variants.h) before writing it through the Store; only when the Store
// has made it durable is the in-memory state changed and the observer told. A
// batch is atomic: all of it is stored, or nothing and an error naming the
// first bad variant.
//
//   absl::StatusOr<std::unique_ptr<VariantRegistry>> registry =
//       VariantRegistry::Open(store.get(), &placer_observer);
//   absl::StatusOr<RegisterResult> r = (*registry)->Register(
//       "saxpy", {{"saxpy_nv", "device={arch(nvptx)}", {}}}, false);
//   // r->revision == 1, r->variants[0].order == 0
//
// Thread safety: every method may be called from any thread.
#ifndef CTXSEL_SERVER_REGISTRY_VARIANT_REGISTRY_H_
#define CTXSEL_SERVER_REGISTRY_VARIANT_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/model/model.h"
#include "server/model/page_budget.h"
#include "server/store/store.h"

namespace ctxsel::server {

// Told about every committed change, in commit order, while the registry's
// lock is held (so observers see changes in the order they were stored).
class VariantObserver {
 public:
  virtual ~VariantObserver() = default;
  // `variants` is now the whole of `kernel` (declaration order); empty when
  // the kernel has no variants left.
  virtual void KernelChanged(const std::string& kernel,
                             const std::vector<Variant>& variants) = 0;
};

// A variant to register: what a client sends.
struct VariantSpec {
  std::string name;
  std::string selector_text;
  VariantMetadata metadata;
};

// The checks Register makes on each variant on its own: a valid name and a
// selector that parses. Errors start with `field` ("variants[1]"), e.g.
// "variants[1] (foo).selector: 1:9: ...". Moves from `spec`; order and
// revision are 0.
absl::StatusOr<Variant> VariantFromSpec(const std::string& kernel,
                                        VariantSpec& spec,
                                        const std::string& field);

struct RegisterResult {
  int64_t revision = 0;
  std::vector<Variant> variants;  // as stored, declaration order
};

struct VariantPage {
  std::vector<Variant> variants;
  std::string next_page_token;  // empty on the last page
  int64_t revision = 0;
};

struct RegistryLimits {
  int max_batch_size = 1000;  // variants per Register call
  int default_page_size = 500;
  int max_page_size = 5000;
};

class VariantRegistry {
 public:
  // Loads every variant from `store` and tells `observer` (may be null)
  // about each kernel. DataLossError if a stored selector no longer parses.
  static absl::StatusOr<std::unique_ptr<VariantRegistry>> Open(
      Store* store, VariantObserver* observer, RegistryLimits limits = {});

  // Stores `specs` as variants of `kernel`, appended after its existing ones
  // or, with `replace`, instead of them. InvalidArgumentError (empty kernel
  // or batch, a bad name, a selector that does not parse: "variants[1]
  // (foo).selector: 1:9: ..."), AlreadyExistsError (name taken), AbortedError
  // when `expected_revision` is not 0 and the kernel's revision (its last
  // change's) is another, or the Store's error; in every error case nothing
  // is changed.
  absl::StatusOr<RegisterResult> Register(const std::string& kernel,
                                          std::vector<VariantSpec> specs,
                                          bool replace,
                                          int64_t expected_revision = 0);

  // Variants of `kernel` (all kernels when empty), kernel then declaration
  // order, from `page_token` on; a page ends at `page_size` variants or
  // before `budget` runs out. InvalidArgumentError for a bad token or a
  // negative page size, ResourceExhaustedError naming a variant too large
  // for a page on its own.
  absl::StatusOr<VariantPage> List(const std::string& kernel, int page_size,
                                   const std::string& page_token,
                                   PageBudget<Variant> budget = {}) const;

  // NotFoundError when the kernel has no variant `name`.
  absl::StatusOr<Variant> Get(const std::string& kernel,
                              const std::string& name) const;

  // Removes one variant; returns the new revision. NotFoundError if absent.
  absl::StatusOr<int64_t> Delete(const std::string& kernel,
                                 const std::string& name);

  // Removes every variant of `kernel` in one Store batch (one revision);
  // returns the new revision. NotFoundError if the kernel has no variants.
  absl::StatusOr<int64_t> DeleteAllVariants(const std::string& kernel);

  // A change another server made to a store it shares with this one
  // (etcd; server/replicas/replica_sync.h): `records` are now the whole of
  // `kernel` (none: no variants left), as of `kernel_revision`. Ignored
  // when the registry holds that revision of the kernel or a later one (it
  // wrote it itself); nothing is written back. A record whose selector
  // does not parse here is logged and left out. The observer is told as
  // for a local change.
  void ApplyStored(const std::string& kernel,
                   std::vector<VariantRecord> records, int64_t kernel_revision);

  int64_t revision() const;
  // Registered kernels and their variant counts, for logs.
  size_t kernel_count() const;

 private:
  VariantRegistry(Store* store, VariantObserver* observer,
                  RegistryLimits limits)
      : store_(store), observer_(observer), limits_(limits) {}
  // Runs `change` again, after Store::CatchUp, when the store says another
  // server changed the kernel first (ABORTED); three attempts at most.
  template <typename Change>
  auto RetryAborted(Change change) -> decltype(change());
  absl::StatusOr<RegisterResult> TryRegister(const std::string& kernel,
                                             std::vector<VariantSpec> specs,
                                             bool replace,
                                             int64_t expected_revision);
  absl::StatusOr<int64_t> TryDelete(const std::string& kernel,
                                    const std::string& name);
  absl::StatusOr<int64_t> TryDeleteAllVariants(const std::string& kernel);
  // A batch that changes `kernel`, guarded by its revision as known here.
  StoreBatch BatchFor(const std::string& kernel) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Records that `kernel` was stored at `revision`; returns it.
  int64_t Stored(const std::string& kernel, int64_t revision)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<Variant>> Validate(const std::string& kernel,
                                                std::vector<VariantSpec>& specs,
                                                bool replace,
                                                int64_t revision) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Store* const store_;
  VariantObserver* const observer_;
  const RegistryLimits limits_;
  mutable absl::Mutex mu_;
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  // kernel -> variants in declaration order.
  std::map<std::string, std::vector<Variant>> kernels_ ABSL_GUARDED_BY(mu_);
  // kernel -> the revision that last changed it (kept after its last
  // variant goes: the store's guard compares it).
  std::map<std::string, int64_t> kernel_revisions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_REGISTRY_VARIANT_REGISTRY_H_
