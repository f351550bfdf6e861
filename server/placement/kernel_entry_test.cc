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

}  // namespace
}  // namespace ctxsel::server::placement::internal
