#include "server/placement/kernel_entry.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/placement/placer_test_util.h"

namespace ctxsel::server::placement::internal {
namespace {

using ::ctxsel::server::placement::testing::MakeVariant;
using ::ctxsel::server::placement::testing::SaxpyVariants;

Job JobWith(std::vector<std::string> construct,
            std::vector<std::string> vendors) {
  Job job;
  job.kernel = "saxpy";
  for (std::string& c : construct) {
    job.construct.emplace_back();
    job.construct.back().name = std::move(c);
  }
  for (std::string& v : vendors) job.implementation.vendor.insert(v);
  return job;
}

TEST(JobSignatureTest, KeysFollowConstructOrderNotSetOrder) {
  EXPECT_EQ(
      JobSignature::Of(JobWith({"target", "teams"}, {"llvm", "gnu"})).key,
      JobSignature::Of(JobWith({"target", "teams"}, {"gnu", "llvm"})).key);
  EXPECT_NE(JobSignature::Of(JobWith({"target", "teams"}, {})).key,
            JobSignature::Of(JobWith({"teams", "target"}, {})).key);
  Job simd = JobWith({"simd"}, {});
  std::string plain = JobSignature::Of(simd).key;
  simd.construct[0].simdlen = 8;
  EXPECT_NE(JobSignature::Of(simd).key, plain);
  Job vars = JobWith({"simd"}, {});
  vars.variables["N"] = 3;  // variables are dynamic: same signature
  EXPECT_EQ(JobSignature::Of(vars).key, plain);
}

TEST(KernelEntryTest, OrdersVariantsAndDetectsTargetDevice) {
  std::vector<Variant> v = SaxpyVariants();
  std::swap(v[0], v[2]);
  absl::StatusOr<std::shared_ptr<KernelEntry>> e =
      KernelEntry::Make("saxpy", v, 4);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->variants()[0]->name, "saxpy_cuda");
  EXPECT_FALSE((*e)->layout_dependent());
  // The set's name inside a string property does not make it dependent.
  v.push_back(MakeVariant("saxpy", "saxpy_ext",
                          "implementation={extension(\"target_device=\")}", 8));
  e = KernelEntry::Make("saxpy", v, 4);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE((*e)->layout_dependent());
  v.push_back(MakeVariant("saxpy", "saxpy_td", "target_device={kind(gpu)}", 9));
  e = KernelEntry::Make("saxpy", v, 4);
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE((*e)->layout_dependent());
}

// The image check of a kernel's images on a class is made once and kept
// until the class leaves: it does not depend on the request.
TEST(KernelEntryTest, ChecksImagesOncePerClassUntilForgotten) {
  absl::StatusOr<std::shared_ptr<KernelEntry>> e =
      KernelEntry::Make("saxpy", SaxpyVariants(), 4);
  ASSERT_TRUE(e.ok()) << e.status();
  int made = 0;
  auto check = [&] {
    ++made;
    ImageCheck c;
    c.note = "made";
    return c;
  };
  std::shared_ptr<const ImageCheck> first = (*e)->ImagesOn(3, check);
  EXPECT_EQ((*e)->ImagesOn(3, check), first);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(first->note, "made");
  (*e)->ImagesOn(4, check);
  EXPECT_EQ(made, 2);
  (*e)->Forget({3});
  EXPECT_NE((*e)->ImagesOn(3, check), first);
  EXPECT_EQ(made, 3);
  (*e)->ImagesOn(4, check);
  EXPECT_EQ(made, 3);
}

TEST(KernelEntryTest, CachesPerSignatureUpToTheLimitAndAdopts) {
  absl::StatusOr<std::shared_ptr<KernelEntry>> e =
      KernelEntry::Make("saxpy", SaxpyVariants(), 2);
  ASSERT_TRUE(e.ok());
  DeviceClass gpu = MakeDeviceClass(0, {{"gpu"}, {"nvptx"}, {}, {}, {}}, "");
  for (const char* c : {"target", "teams", "parallel"}) {
    absl::StatusOr<selector::Resolution> r =
        (*e)->Resolution(JobSignature::Of(JobWith({c}, {})), gpu);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_FALSE(r->candidates().empty());
    EXPECT_EQ(r->declared()[r->candidates()[0].index].name, "saxpy_cuda");
  }
  EXPECT_EQ((*e)->cached_signatures(), 2);  // the third was not kept

  absl::StatusOr<std::shared_ptr<KernelEntry>> next =
      KernelEntry::Make("saxpy", SaxpyVariants(), 8);
  ASSERT_TRUE(next.ok());
  (*next)->AdoptSignatures(**e);
  EXPECT_EQ((*next)->cached_signatures(), 2);
  (*next)->ResolveAhead({&gpu});  // resolves them now, no error
}

TEST(SignatureIdsTest, SameKeySameIdUpToCapacity) {
  SignatureIds ids(2);
  const int a = ids.Intern("a");
  EXPECT_EQ(ids.Intern("a"), a);
  const int b = ids.Intern("b");
  EXPECT_NE(a, b);
  EXPECT_EQ(ids.Intern("c"), -1);  // full: found by key instead
  EXPECT_EQ(ids.Intern("b"), b);
}

TEST(SignatureIdsTest, JobsOfEqualTraitsGetOneNumberedSignature) {
  SignatureIds ids(3);
  Job gnu_llvm = JobWith({"target", "teams"}, {"gnu", "llvm"});
  const JobSignature* a =
      ids.Intern(JobWith({"target", "teams"}, {"llvm", "gnu"}));
  ASSERT_NE(a, nullptr);
  EXPECT_GE(a->id, 0);
  EXPECT_EQ(a->key, JobSignature::Of(gnu_llvm).key);
  EXPECT_EQ(ids.Intern(gnu_llvm), a);
  EXPECT_EQ(ids.Find(gnu_llvm), a);
  EXPECT_EQ(ids.Find(JobWith({"teams", "target"}, {})), nullptr);  // not new
  const JobSignature* reordered = ids.Intern(JobWith({"teams", "target"}, {}));
  ASSERT_NE(reordered, nullptr);
  EXPECT_NE(reordered, a);
  EXPECT_NE(reordered->id, a->id);
  // Clause values count; a uniform linear step ignores its constant.
  Job simd = JobWith({"simd"}, {});
  simd.construct[0].linear["x"].uniform = "n";
  const JobSignature* uniform_step = ids.Intern(simd);
  ASSERT_NE(uniform_step, nullptr);
  simd.construct[0].linear["x"].constant = 4;
  EXPECT_EQ(ids.Intern(simd), uniform_step);
  simd.construct[0].simdlen = 8;
  EXPECT_EQ(ids.Intern(simd), nullptr);  // full: found by key instead
  EXPECT_EQ(ids.Intern(gnu_llvm), a);
}

TEST(KernelEntryTest, FindsResolutionsByIdAndForgetsThem) {
  absl::StatusOr<std::shared_ptr<KernelEntry>> e =
      KernelEntry::Make("saxpy", SaxpyVariants(), 4);
  ASSERT_TRUE(e.ok());
  DeviceClass gpu = MakeDeviceClass(3, {{"gpu"}, {"nvptx"}, {}, {}, {}}, "");
  JobSignature keyed = JobSignature::Of(JobWith({"target"}, {}));
  JobSignature numbered = keyed;
  numbered.id = 7;
  ResolutionCounters counters;
  ASSERT_TRUE((*e)->Resolution(keyed, gpu, &counters).ok());  // by key
  ASSERT_TRUE((*e)->Resolution(numbered, gpu, &counters).ok());
  ASSERT_TRUE((*e)->Resolution(numbered, gpu, &counters).ok());
  EXPECT_EQ(counters.misses.load(), 1);
  EXPECT_EQ(counters.hits.load(), 2);
  // A numbered job finds what a keyed one cached, and the same Resolution.
  absl::StatusOr<selector::Resolution> a = (*e)->Resolution(keyed, gpu);
  absl::StatusOr<selector::Resolution> b = (*e)->Resolution(numbered, gpu);
  EXPECT_EQ(&a->data(), &b->data());
  (*e)->Forget({gpu.id});
  ASSERT_TRUE((*e)->Resolution(numbered, gpu, &counters).ok());
  EXPECT_EQ(counters.misses.load(), 2);  // the class's resolutions went
}

TEST(KernelEntryTest, CachedLooksUpEveryClassInOrderUnderOneLock) {
  absl::StatusOr<std::shared_ptr<KernelEntry>> e =
      KernelEntry::Make("saxpy", SaxpyVariants(), 4);
  ASSERT_TRUE(e.ok());
  DeviceClass gpu = MakeDeviceClass(1, {{"gpu"}, {"nvptx"}, {}, {}, {}}, "");
  DeviceClass amd = MakeDeviceClass(2, {{"gpu"}, {"amdgcn"}, {}, {}, {}}, "");
  JobSignature target = JobSignature::Of(JobWith({"target"}, {}));
  ResolutionCounters counters;
  ASSERT_TRUE((*e)->Resolution(target, gpu, &counters).ok());
  const std::vector<const DeviceClass*> classes = {&amd, &gpu, &amd};
  std::vector<std::optional<selector::Resolution>> three(classes.size());
  (*e)->Cached(target, classes, absl::MakeSpan(three), &counters);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_FALSE(three[0].has_value());  // never resolved: left to the caller
  ASSERT_TRUE(three[1].has_value());
  EXPECT_FALSE(three[2].has_value());
  EXPECT_EQ(counters.misses.load(), 3);  // gpu first, then amd twice
  EXPECT_EQ(counters.hits.load(), 1);    // gpu
  absl::StatusOr<selector::Resolution> gpu_alone =
      (*e)->Resolution(target, gpu);
  EXPECT_EQ(&three[1]->data(), &gpu_alone->data());
}

// Explain and Coverage read the cache and keep nothing: a reader's jobs,
// however many signatures, leave the cap to Select's (they used to fill it).
TEST(KernelEntryTest, ReadOnlyLookupsNeitherFillTheCapNorTheCache) {
  absl::StatusOr<std::shared_ptr<KernelEntry>> e =
      KernelEntry::Make("saxpy", SaxpyVariants(), 2);
  ASSERT_TRUE(e.ok());
  DeviceClass gpu = MakeDeviceClass(0, {{"gpu"}, {"nvptx"}, {}, {}, {}}, "");
  ResolutionCounters counters;
  for (const char* c : {"target", "teams", "parallel", "simd"}) {
    ASSERT_TRUE((*e)->Resolution(JobSignature::Of(JobWith({c}, {})), gpu,
                                 &counters, CacheUse::kReadOnly)
                    .ok());
  }
  EXPECT_EQ((*e)->cached_signatures(), 0);
  EXPECT_EQ(counters.misses.load(), 4);
  // Select's signatures still find room, and then read-only lookups hit.
  JobSignature select = JobSignature::Of(JobWith({"target"}, {}));
  select.id = 0;
  ASSERT_TRUE((*e)->Resolution(select, gpu, &counters).ok());
  EXPECT_EQ((*e)->cached_signatures(), 1);
  ASSERT_TRUE((*e)->Resolution(JobSignature::Of(JobWith({"target"}, {})), gpu,
                               &counters, CacheUse::kReadOnly)
                  .ok());
  EXPECT_EQ(counters.hits.load(), 1);
}

// The per-request lookup finds a job's signature by a hash of its traits,
// then compares them field by field (an empty container without a call):
// every trait that changes the key changes the signature found, and an
// equal job finds the same one again.
TEST(SignatureIdsTest, EveryTraitOfTheKeyTellsSignaturesApart) {
  SignatureIds ids(64);
  const Job base = JobWith({"target", "simd"}, {"llvm"});
  std::vector<Job> jobs = {base};
  auto with = [&](void (*change)(Job&)) {
    jobs.push_back(base);
    change(jobs.back());
  };
  with([](Job& j) { j.construct[1].name = "for"; });
  with([](Job& j) { j.construct[1].simdlen = 8; });
  with([](Job& j) { j.construct[1].inbranch = true; });
  with([](Job& j) { j.construct[1].notinbranch = true; });
  with([](Job& j) { j.construct[1].uniform.insert("a"); });
  with([](Job& j) { j.construct[1].uniform.insert("b"); });  // same size
  with([](Job& j) { j.construct[1].aligned["x"] = 64; });
  with([](Job& j) { j.construct[1].aligned["x"] = 32; });
  with([](Job& j) { j.construct[1].linear["x"].constant = 2; });
  with([](Job& j) { j.implementation.vendor = {"gnu"}; });  // same size
  with([](Job& j) { j.implementation.extension.insert("e"); });
  with([](Job& j) { j.implementation.requires_.insert("reverse_offload"); });
  with([](Job& j) { j.implementation.atomic_default_mem_order = "seq_cst"; });
  with([](Job& j) { j.compiler = selector::CompilerProfile::kGcc12; });
  with([](Job& j) { j.ties = selector::TieChoice::kLastDeclared; });
  std::vector<const JobSignature*> seen;
  for (const Job& job : jobs) {
    const JobSignature* s = ids.Intern(job);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->key, JobSignature::Of(job).key);
    for (const JobSignature* other : seen) EXPECT_NE(s, other) << s->key;
    seen.push_back(s);
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    Job again = jobs[i];
    EXPECT_EQ(ids.Intern(again), seen[i]) << seen[i]->key;
    EXPECT_EQ(ids.Find(again), seen[i]) << seen[i]->key;
  }
}

}  // namespace
}  // namespace ctxsel::server::placement::internal
