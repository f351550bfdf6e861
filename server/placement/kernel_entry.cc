#include "server/placement/kernel_entry.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "selector/compiler_profile.h"
#include "selector/device_variables.h"
#include "server/registry/kernel_variants.h"

namespace ctxsel::server::placement::internal {
namespace {

std::string SortedList(const selector::NameSet& names) {
  std::vector<absl::string_view> v(names.begin(), names.end());
  std::sort(v.begin(), v.end());
  return absl::StrJoin(v, ",");
}

void AppendConstruct(const selector::ConstructTrait& t, std::string* key) {
  std::vector<std::pair<std::string, int64_t>> aligned(t.aligned.begin(),
                                                       t.aligned.end());
  std::sort(aligned.begin(), aligned.end());
  selector::NameSet linear;
  for (const auto& [variable, step] : t.linear) {
    linear.insert(absl::StrCat(variable, ":", step.ToString()));
  }
  absl::StrAppend(key, t.name, "(", t.simdlen, ";",
                  absl::StrJoin(aligned, ",", absl::PairFormatter(":")), ";",
                  SortedList(linear), ";", SortedList(t.uniform), ";",
                  t.inbranch, t.notinbranch, ")");
}

// Hashes of the traits a signature holds, equal for equal signatures (sets
// and maps hash the same in any order: their elements' hashes are summed).
uint64_t Mix(uint64_t h, uint64_t v) {
  return (h ^ v) * uint64_t{0x9E3779B97F4A7C15} + (h >> 29);
}

// A job's construct names are a few short words, hashed on every Select:
// FNV-1a inline, where absl::Hash costs a few calls per string.
uint64_t NameHash(absl::string_view name) {
  uint64_t h = 0xcbf29ce484222325;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3;
  return h;
}

uint64_t NamesHash(const selector::NameSet& names) {
  uint64_t sum = names.size();
  for (const std::string& n : names) sum += absl::HashOf(n);
  return sum;
}

uint64_t SignatureHash(const Job& job) {
  uint64_t h = job.construct.size();
  for (const selector::ConstructTrait& t : job.construct) {
    uint64_t aligned = 0;
    for (const auto& [variable, alignment] : t.aligned) {
      aligned += absl::HashOf(variable, alignment);
    }
    uint64_t linear = 0;
    for (const auto& [variable, step] : t.linear) {
      // As LinearStep's operator==: a uniform step ignores `constant`.
      linear += step.uniform.empty() ? absl::HashOf(variable, step.constant)
                                     : absl::HashOf(variable, step.uniform);
    }
    h = Mix(h, NameHash(t.name));
    h = Mix(h, static_cast<uint64_t>(t.simdlen) * 4 + t.inbranch * 2 +
                   t.notinbranch);
    h = Mix(h, aligned);
    h = Mix(h, linear);
    h = Mix(h, NamesHash(t.uniform));
  }
  const selector::ImplementationTraits& impl = job.implementation;
  h = Mix(h, NamesHash(impl.vendor));
  h = Mix(h, NamesHash(impl.extension));
  h = Mix(h, NamesHash(impl.requires_));
  h = Mix(h, NameHash(impl.atomic_default_mem_order));
  return Mix(h, static_cast<uint64_t>(job.compiler) * 64 +
                    static_cast<uint64_t>(job.ties));
}

// Equal containers; most of a job's are empty, which this tells without
// a call.
template <typename C>
bool SameContainer(const C& a, const C& b) {
  return a.size() == b.size() && (a.empty() || a == b);
}

// Whether `job` has the traits of `s`: what equal keys say, without a key.
bool SameSignature(const Job& job, const JobSignature& s) {
  if (job.construct.size() != s.construct.size()) return false;
  for (size_t i = 0; i < s.construct.size(); ++i) {
    const selector::ConstructTrait& a = job.construct[i];
    const selector::ConstructTrait& b = s.construct[i];
    if (a.name != b.name || a.simdlen != b.simdlen ||
        a.inbranch != b.inbranch || a.notinbranch != b.notinbranch ||
        !SameContainer(a.aligned, b.aligned) ||
        !SameContainer(a.linear, b.linear) ||
        !SameContainer(a.uniform, b.uniform)) {
      return false;
    }
  }
  const selector::ImplementationTraits& a = job.implementation;
  const selector::ImplementationTraits& b = s.implementation;
  return SameContainer(a.vendor, b.vendor) &&
         SameContainer(a.extension, b.extension) &&
         SameContainer(a.requires_, b.requires_) &&
         a.atomic_default_mem_order == b.atomic_default_mem_order &&
         job.compiler == s.compiler && job.ties == s.ties;
}

}  // namespace

JobSignature JobSignature::Of(const Job& job) {
  JobSignature s;
  s.construct = job.construct;
  s.implementation = job.implementation;
  for (const selector::ConstructTrait& t : job.construct) {
    AppendConstruct(t, &s.key);
  }
  const selector::ImplementationTraits& impl = job.implementation;
  absl::StrAppend(&s.key, "|", SortedList(impl.vendor), "|",
                  SortedList(impl.extension), "|", SortedList(impl.requires_),
                  "|", impl.atomic_default_mem_order);
  // Registered variants are declare variants (a begin declare variant's
  // follow the same rules).
  s.compiler = job.compiler;
  s.ties = job.ties;
  s.options = selector::ResolveOptionsFor(
      job.compiler, selector::Directive::kDeclareVariant, job.ties);
  absl::StrAppend(&s.key, "|", selector::CompilerProfileName(job.compiler), "|",
                  selector::TieChoiceName(job.ties));
  return s;
}

std::shared_ptr<const selector::Context> JobSignature::ContextFor(
    const DeviceClass& c) const {
  auto ctx = std::make_shared<selector::Context>();
  ctx->construct = construct;
  ctx->device = c.traits;
  ctx->implementation = implementation;
  return ctx;
}

absl::StatusOr<std::shared_ptr<KernelEntry>> KernelEntry::Make(
    const std::string& kernel, std::vector<Variant> variants,
    int max_signatures) {
  // The registry made this same check before it stored the list.
  if (absl::Status s = CheckKernelVariants(kernel, {}, variants); !s.ok()) {
    return s;
  }
  std::sort(variants.begin(), variants.end(),
            [](const Variant& a, const Variant& b) {
              return std::tie(a.order, a.name) < std::tie(b.order, b.name);
            });
  std::shared_ptr<KernelEntry> entry(new KernelEntry);
  entry->kernel_ = kernel;
  entry->max_signatures_ = max_signatures;
  std::vector<selector::Candidate> candidates;
  for (Variant& v : variants) {
    if (v.selector.has_target_device()) entry->layout_dependent_ = true;
    for (std::string& name : v.selector.variables()) {
      if (selector::IsDeviceVariable(name)) {
        entry->reads_device_variables_ = true;
      }
      entry->variables_.push_back(std::move(name));
    }
    if (!v.metadata.images.empty()) {
      // Sorted by order: the latest registration's images win.
      entry->images_.clear();
      for (const std::string& id : v.metadata.images) {
        // Checked by CheckKernelVariants above.
        entry->images_.push_back(*images::ParseImageId(id));
      }
    }
    candidates.push_back({v.name, v.selector});
    entry->variants_.push_back(std::make_shared<const Variant>(std::move(v)));
  }
  entry->candidates_ = std::make_shared<const std::vector<selector::Candidate>>(
      std::move(candidates));
  std::vector<std::string>& vars = entry->variables_;
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  return entry;
}

int SignatureIds::Intern(const std::string& key) {
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
  }
  absl::MutexLock lock(&mu_);
  return InternLocked(key);
}

int SignatureIds::InternLocked(const std::string& key) {
  if (static_cast<int>(ids_.size()) >= capacity_) {
    auto it = ids_.find(key);
    return it == ids_.end() ? -1 : it->second;
  }
  return ids_.try_emplace(key, static_cast<int>(ids_.size())).first->second;
}

const JobSignature* SignatureIds::FindLocked(const Job& job,
                                             uint64_t hash) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return nullptr;
  for (const JobSignature* s : it->second) {
    if (SameSignature(job, *s)) return s;
  }
  return nullptr;
}

const JobSignature* SignatureIds::Intern(const Job& job) {
  const uint64_t hash = SignatureHash(job);
  {
    absl::ReaderMutexLock lock(&mu_);
    if (const JobSignature* s = FindLocked(job, hash)) return s;
  }
  auto made = std::make_unique<JobSignature>(JobSignature::Of(job));
  absl::MutexLock lock(&mu_);
  if (const JobSignature* s = FindLocked(job, hash)) return s;
  made->id = InternLocked(made->key);
  if (made->id < 0) return nullptr;
  const JobSignature* kept = made.get();
  kept_.push_back(std::move(made));
  by_hash_[hash].push_back(kept);
  return kept;
}

const JobSignature* SignatureIds::Find(const Job& job) const {
  const uint64_t hash = SignatureHash(job);
  absl::ReaderMutexLock lock(&mu_);
  return FindLocked(job, hash);
}

int SignatureIds::Find(const std::string& key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = ids_.find(key);
  return it == ids_.end() ? -1 : it->second;
}

const KernelEntry::SignatureCache* KernelEntry::Find(
    const JobSignature& signature) const {
  if (signature.id >= 0) {
    auto it = by_id_.find(signature.id);
    if (it != by_id_.end()) return it->second;
  }
  auto it = cache_.find(signature.key);
  return it == cache_.end() ? nullptr : &it->second;
}

void KernelEntry::Number(SignatureCache& cached, int id) const {
  if (id < 0 || cached.signature.id >= 0) return;
  cached.signature.id = id;
  by_id_.emplace(id, &cached);
}

std::optional<selector::Resolution> KernelEntry::Cached(
    const JobSignature& signature, int class_id,
    ResolutionCounters* counters) const {
  {
    absl::ReaderMutexLock lock(&mu_);
    if (const SignatureCache* cached = Find(signature); cached != nullptr) {
      auto r = cached->by_class.find(class_id);
      if (r != cached->by_class.end()) {
        if (counters != nullptr) counters->hits.fetch_add(1);
        return r->second;
      }
    }
  }
  if (counters != nullptr) counters->misses.fetch_add(1);
  return std::nullopt;
}

void KernelEntry::Cached(const JobSignature& signature,
                         absl::Span<const DeviceClass* const> classes,
                         absl::Span<std::optional<selector::Resolution>> out,
                         ResolutionCounters* counters) const {
  int64_t hits = 0;
  {
    absl::ReaderMutexLock lock(&mu_);
    if (const SignatureCache* cached = Find(signature); cached != nullptr) {
      for (size_t i = 0; i < classes.size(); ++i) {
        auto r = cached->by_class.find(classes[i]->id);
        if (r == cached->by_class.end()) continue;
        out[i] = r->second;
        ++hits;
      }
    }
  }
  if (counters != nullptr) {
    counters->hits.fetch_add(hits);
    counters->misses.fetch_add(static_cast<int64_t>(classes.size()) - hits);
  }
}

absl::StatusOr<selector::Resolution> KernelEntry::ResolveFor(
    const JobSignature& signature, int class_id,
    std::shared_ptr<const selector::Context> context, CacheUse use) const {
  absl::StatusOr<selector::Resolution> r =
      selector::Resolve(candidates_, std::move(context), signature.options);
  if (r.ok() && use == CacheUse::kFill) Store(signature, class_id, *r);
  return r;
}

absl::StatusOr<selector::Resolution> KernelEntry::Resolution(
    const JobSignature& signature, const DeviceClass& c,
    ResolutionCounters* counters, CacheUse use) const {
  if (std::optional<selector::Resolution> cached =
          Cached(signature, c.id, counters)) {
    return *std::move(cached);
  }
  return ResolveFor(signature, c.id, signature.ContextFor(c), use);
}

void KernelEntry::Store(const JobSignature& signature, int class_id,
                        const selector::Resolution& resolution) const {
  absl::MutexLock lock(&mu_);
  auto it = cache_.find(signature.key);
  if (it == cache_.end()) {
    if (static_cast<int>(cache_.size()) >= max_signatures_) return;
    it = cache_.emplace(signature.key, SignatureCache{signature, {}}).first;
  }
  it->second.by_class.emplace(class_id, resolution);
  Number(it->second, signature.id);
}

void KernelEntry::ResolveAhead(
    const std::vector<const DeviceClass*>& classes) const {
  std::vector<JobSignature> signatures;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [key, cached] : cache_) {
      signatures.push_back(cached.signature);
    }
  }
  for (const JobSignature& s : signatures) {
    for (const DeviceClass* c : classes) {
      // Resolution() computes and stores what is missing; a failing
      // signature fails again per request, with its status.
      Resolution(s, *c).IgnoreError();
    }
  }
}

std::shared_ptr<const ImageCheck> KernelEntry::ImagesOn(
    int class_id, absl::FunctionRef<ImageCheck()> check) const {
  {
    absl::ReaderMutexLock lock(&images_mu_);
    auto it = image_checks_.find(class_id);
    if (it != image_checks_.end()) return it->second;
  }
  auto made = std::make_shared<const ImageCheck>(check());
  absl::MutexLock lock(&images_mu_);
  // A request that made it meanwhile won: both are equal.
  return image_checks_.try_emplace(class_id, std::move(made)).first->second;
}

void KernelEntry::Forget(const std::vector<int>& class_ids) const {
  if (class_ids.empty()) return;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, cached] : cache_) {
      for (int id : class_ids) cached.by_class.erase(id);
    }
  }
  absl::MutexLock lock(&images_mu_);
  for (int id : class_ids) image_checks_.erase(id);
}

void KernelEntry::AdoptSignatures(const KernelEntry& other) const {
  if (&other == this) return;
  std::vector<JobSignature> signatures;
  {
    absl::ReaderMutexLock lock(&other.mu_);
    for (const auto& [key, cached] : other.cache_) {
      signatures.push_back(cached.signature);
    }
  }
  absl::MutexLock lock(&mu_);
  for (JobSignature& s : signatures) {
    if (static_cast<int>(cache_.size()) >= max_signatures_) break;
    const int id = s.id;
    s.id = -1;  // Number() sets it with its index
    std::string key = s.key;
    auto [it, added] =
        cache_.emplace(std::move(key), SignatureCache{std::move(s), {}});
    if (added) Number(it->second, id);
  }
}

int KernelEntry::cached_signatures() const {
  absl::ReaderMutexLock lock(&mu_);
  return static_cast<int>(cache_.size());
}

}  // namespace ctxsel::server::placement::internal
