// kernel_entry.h: one kernel's variants and its static resolutions.
//
// Internal to the Placer. A KernelEntry is immutable once published except
// for its resolution cache, which memoises the engine's Resolve() per job
// signature (construct + implementation traits) and device class: one
// cache, found by the signature's key or, for a signature with an id, by
// the id. Only Select fills it (CacheUse::kFill); Explain and Coverage,
// which a reader may call with any number of signatures, read it and keep
// nothing (kReadOnly), so they can neither fill its signature cap nor write
// what-if points into it. Internally synchronised: lookups take a reader
// lock; a miss is resolved outside the lock and inserted under it.
//
//   auto entry = KernelEntry::Make("saxpy", variants, /*max_signatures=*/256);
//   JobSignature sig = JobSignature::Of(job);
//   absl::StatusOr<selector::Resolution> r = (*entry)->Resolution(sig, gpu);
#ifndef CTXSEL_SERVER_PLACEMENT_KERNEL_ENTRY_H_
#define CTXSEL_SERVER_PLACEMENT_KERNEL_ENTRY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "images/device_image.h"
#include "selector/selector.h"
#include "server/model/model.h"
#include "server/placement/device_class.h"

namespace ctxsel::server::placement::internal {

// How the resolution caches of one Placer's kernels fared, for metrics:
// lookups by jobs (hits and misses) and the up-front work after variants
// or device classes change (rebuilds and their time).
struct ResolutionCounters {
  std::atomic<int64_t> hits{0};
  std::atomic<int64_t> misses{0};
  std::atomic<int64_t> rebuilds{0};
  std::atomic<int64_t> rebuild_nanos{0};
};

// The static, non-device part of a job's OpenMP context, the rules of the
// compiler it asks for, and its key.
struct JobSignature {
  // Equal keys iff equal construct and implementation sets, compiler and
  // tie rule.
  std::string key;
  // The key's number in the Placer's SignatureIds, -1 when it has none:
  // with one, a kernel finds its cached resolutions by (id, class) without
  // hashing the key again or comparing it with its own (cold) copy.
  int id = -1;
  std::vector<selector::ConstructTrait> construct;
  selector::ImplementationTraits implementation;
  // The job's compiler and tie rule, and the rules they make.
  selector::CompilerProfile compiler = selector::CompilerProfile::kSpec;
  selector::TieChoice ties = selector::TieChoice::kCompilerDefault;
  selector::ResolveOptions options;

  // Copies the job's traits and builds the key: for a signature that is
  // kept (SignatureIds, the resolution cache) or used once.
  static JobSignature Of(const Job& job);
  // The static context for a device of class `c`, shared by the
  // Resolution made from it (Explain reads it again).
  std::shared_ptr<const selector::Context> ContextFor(
      const DeviceClass& c) const;
};

// Small numbers for the job signatures a Placer has seen, shared by all its
// kernels; at most `capacity` of them (later keys get none, -1, and are
// found by key). Thread-safe; a lookup takes a reader lock.
class SignatureIds {
 public:
  explicit SignatureIds(int capacity) : capacity_(capacity) {}
  int Intern(const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);
  // The id `key` has, -1 when none; never gives one.
  int Find(const std::string& key) const ABSL_LOCKS_EXCLUDED(mu_);

  // The numbered signature of `job` (its construct and implementation
  // traits), kept here while this lives; null when the ids are full and
  // the job's signature has none (the caller uses JobSignature::Of). The
  // per-request path: a job already seen is found by a hash of its traits
  // and compared field by field, so no key is built, sorted or copied.
  const JobSignature* Intern(const Job& job) ABSL_LOCKS_EXCLUDED(mu_);
  // As Intern, but never numbers a new signature (null then).
  const JobSignature* Find(const Job& job) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const JobSignature* FindLocked(const Job& job, uint64_t hash) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  int InternLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int capacity_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, int> ids_ ABSL_GUARDED_BY(mu_);
  // The signatures Intern(job) numbered, never removed (the pointers stay
  // valid), and an index of them by the hash of their traits.
  std::vector<std::unique_ptr<const JobSignature>> kept_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::vector<const JobSignature*>> by_hash_
      ABSL_GUARDED_BY(mu_);
};

// How a binary's images fare on one device class: the image that would run
// there (images::BestImage), or why none does. Decide makes it.
struct ImageCheck {
  const images::DeviceImage* image = nullptr;  // null: none runs there
  images::Fit fit = images::Fit::kNone;
  std::string note;    // why a generic image runs
  std::string reason;  // when none runs: why, naming the binary's images
};

// How a lookup may use a KernelEntry's cache (see the file comment).
enum class CacheUse { kFill, kReadOnly };

class KernelEntry {
 public:
  // Errors as CheckKernelVariants (server/registry/kernel_variants.h) gives
  // them, the check the registry made before it stored the list. Variants are
  // kept in declaration order (`order`, then name).
  static absl::StatusOr<std::shared_ptr<KernelEntry>> Make(
      const std::string& kernel, std::vector<Variant> variants,
      int max_signatures);

  const std::string& kernel() const { return kernel_; }
  // In declaration order; the engine's candidate index points here.
  const std::vector<std::shared_ptr<const Variant>>& variants() const {
    return variants_;
  }
  // True when some variant has a target_device set: a class's verdict may
  // then differ between node layouts.
  bool layout_dependent() const { return layout_dependent_; }
  // The job variables any of its variants' selectors read, sorted: a job
  // must give every one (selector::CheckVariablesGiven).
  const std::vector<std::string>& variables() const { return variables_; }
  // Some of variables() are device variables (selector/device_variables.h):
  // each device class then gets its own.
  bool reads_device_variables() const { return reads_device_variables_; }
  // The device images of the binary its latest variant with images was
  // registered from (VariantMetadata::images); empty: any device.
  const std::vector<images::DeviceImage>& images() const { return images_; }

  // The static resolution of this kernel for `signature` on class `c`, from
  // the cache or computed (and, with kFill, kept: up to max_signatures
  // signatures). Fails where the engine's Resolve fails (too many construct
  // traits, score overflow). With `counters`, counts a hit or a miss.
  absl::StatusOr<selector::Resolution> Resolution(
      const JobSignature& signature, const DeviceClass& c,
      ResolutionCounters* counters = nullptr,
      CacheUse use = CacheUse::kFill) const ABSL_LOCKS_EXCLUDED(mu_);

  // The Resolution cached for `signature` on the class numbered `class_id`,
  // or nullopt; with `counters`, counts a hit or a miss. Takes only this
  // entry's reader lock: the Placer asks it under the fleet lock, and
  // resolves a miss with ResolveFor once it has let go of that lock.
  std::optional<selector::Resolution> Cached(
      const JobSignature& signature, int class_id,
      ResolutionCounters* counters = nullptr) const ABSL_LOCKS_EXCLUDED(mu_);
  // Cached() for each of `classes`, in order, under one hold of the lock
  // (a Select asks for every class that fits its job at once), into `out`
  // (as long as `classes`, all nullopt), which the caller holds: a Select's
  // lookups allocate nothing.
  void Cached(const JobSignature& signature,
              absl::Span<const DeviceClass* const> classes,
              absl::Span<std::optional<selector::Resolution>> out,
              ResolutionCounters* counters = nullptr) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Resolves this kernel for `signature` on class `class_id`, whose static
  // context is `context` (JobSignature::ContextFor), and with kFill keeps
  // it as Resolution() does.
  absl::StatusOr<selector::Resolution> ResolveFor(
      const JobSignature& signature, int class_id,
      std::shared_ptr<const selector::Context> context,
      CacheUse use = CacheUse::kFill) const ABSL_LOCKS_EXCLUDED(mu_);

  // Keeps `resolution` for `signature` on class `class_id` (up to
  // max_signatures signatures): one a class of equal traits got from
  // ResolveFor, since the static context holds no capacity.
  void Store(const JobSignature& signature, int class_id,
             const selector::Resolution& resolution) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The check of images() on class `class_id`: `check()` the first time,
  // then kept, as it depends only on this kernel's images and the class's
  // traits (a class id is never used again for other traits). So a Select
  // runs images::BestImage and formats its text once per class, not per
  // request; a job's own images (Job::images) are checked per request.
  std::shared_ptr<const ImageCheck> ImagesOn(
      int class_id, absl::FunctionRef<ImageCheck()> check) const
      ABSL_LOCKS_EXCLUDED(images_mu_);

  // Resolves every cached signature for `classes` that lack it (the "up
  // front" part after variants or classes change).
  void ResolveAhead(const std::vector<const DeviceClass*>& classes) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Drops the cached resolutions and image checks of classes that left the
  // fleet.
  void Forget(const std::vector<int>& class_ids) const
      ABSL_LOCKS_EXCLUDED(mu_, images_mu_);

  // Adopts the signatures `other` has cached (not their resolutions).
  void AdoptSignatures(const KernelEntry& other) const ABSL_LOCKS_EXCLUDED(mu_);

  int cached_signatures() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct SignatureCache {
    JobSignature signature;
    absl::flat_hash_map<int, selector::Resolution> by_class;
  };

  KernelEntry() = default;
  // The cached signature `signature` is, or null.
  const SignatureCache* Find(const JobSignature& signature) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Indexes `cached` by `id` (when >= 0 and it has none yet).
  void Number(SignatureCache& cached, int id) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string kernel_;
  std::vector<std::shared_ptr<const Variant>> variants_;
  // Shared by every Resolution of this kernel, never copied into one.
  selector::CandidateList candidates_;
  bool layout_dependent_ = false;
  std::vector<std::string> variables_;
  bool reads_device_variables_ = false;
  std::vector<images::DeviceImage> images_;
  int max_signatures_ = 0;
  mutable absl::Mutex mu_;
  // The cache, by signature key; node-based, so by_id_ can point into it.
  mutable absl::node_hash_map<std::string, SignatureCache> cache_
      ABSL_GUARDED_BY(mu_);
  // An index of cache_ by signature id, for signatures with one: the
  // per-request path finds its entry without hashing the key.
  mutable absl::flat_hash_map<int, SignatureCache*> by_id_ ABSL_GUARDED_BY(mu_);
  // ImagesOn's, by class id; a lock of its own, as only kernels with
  // images take it.
  mutable absl::Mutex images_mu_;
  mutable absl::flat_hash_map<int, std::shared_ptr<const ImageCheck>>
      image_checks_ ABSL_GUARDED_BY(images_mu_);
};

}  // namespace ctxsel::server::placement::internal

#endif  // CTXSEL_SERVER_PLACEMENT_KERNEL_ENTRY_H_
