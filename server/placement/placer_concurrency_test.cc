// Many Select threads against writers changing variants, nodes and
// utilisation: every answer must be a consistent placement or a clean
// FAILED_PRECONDITION (run under --config=tsan to catch races).
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/placement/placer.h"
#include "server/placement/placer_test_util.h"

namespace ctxsel::server::placement {
namespace {

using ::ctxsel::server::placement::testing::Kind;
using ::ctxsel::server::placement::testing::MakeDevice;
using ::ctxsel::server::placement::testing::MakeVariant;
using ::ctxsel::server::placement::testing::SaxpyVariants;

TEST(PlacerConcurrencyTest, SelectsStayConsistentUnderWriters) {
  Placer placer;
  ASSERT_TRUE(placer.SetVariants("saxpy", SaxpyVariants()).ok());
  for (int n = 0; n < 8; ++n) {
    std::string node = absl::StrCat("n", n);
    ASSERT_TRUE(placer
                    .SetNodeDevices(node, {MakeDevice(node, 0, Kind::kH100),
                                           MakeDevice(node, 1, Kind::kMi250)})
                    .ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> answers{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      Job job;
      job.kernel = "saxpy";
      job.policy = static_cast<Policy>(t % 3);
      while (!stop.load()) {
        absl::StatusOr<Placement> p = placer.Select(job);
        if (!p.ok()) {
          if (p.status().code() != absl::StatusCode::kFailedPrecondition) {
            failures.fetch_add(1);
          }
          continue;
        }
        // The variant must fit the chosen device's class.
        const Choice& c = p->choice;
        bool amd = c.device_class->traits.arch.count("amdgcn") > 0;
        if (c.base() ||
            (amd && c.variant->name != "saxpy_hip" &&
             c.variant->name != "saxpy_hip2") ||
            (!amd && c.variant->name != "saxpy_cuda")) {
          failures.fetch_add(1);
        }
        answers.fetch_add(1);
      }
    });
  }
  threads.emplace_back([&] {  // heartbeats
    for (int i = 0; !stop.load(); ++i) {
      const std::string node = absl::StrCat("n", i % 8);
      const double u = (i % 10) / 10.0;
      absl::Status s = placer.UpdateUtilisations(
          node, {{absl::StrCat(node, "/0"), u}, {absl::StrCat(node, "/1"), u}});
      if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
        failures.fetch_add(1);
      }
    }
  });
  for (int i = 0; i < 300; ++i) {  // nodes come and go; variants change
    std::string node = absl::StrCat("n", i % 8);
    if (i % 2 == 0) {
      placer.RemoveNode(node);
    } else {
      ASSERT_TRUE(placer
                      .SetNodeDevices(node, {MakeDevice(node, 0, Kind::kH100),
                                             MakeDevice(node, 1, Kind::kMi250)})
                      .ok());
    }
    if (i % 30 == 0) {
      std::vector<Variant> v = SaxpyVariants();
      if (i % 60 == 0)
        v[1] = MakeVariant("saxpy", "saxpy_hip2", "device={arch(amdgcn)}", 1);
      ASSERT_TRUE(placer.SetVariants("saxpy", v).ok());
    }
  }
  while (answers.load() < 1000) std::this_thread::yield();
  stop.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(answers.load(), 1000);
}

// A kernel's first resolution on a kernel of 40,000 conditional variants
// (issue 22: 1.5 s at 4,000 once, under the fleet lock) must not hold the
// heartbeats of the fleet, which take that lock exclusively: heartbeats go
// on while the Select resolves. Before resolution moved off the lock, the
// first beat waited for the whole Select and no other came in time.
TEST(PlacerConcurrencyTest, HeartbeatsGoOnWhileABigKernelIsFirstResolved) {
  Placer placer;
  ASSERT_TRUE(placer
                  .SetNodeDevices("a", {MakeDevice("a", 0, Kind::kH100),
                                        MakeDevice("a", 1, Kind::kMi250),
                                        MakeDevice("a", -1, Kind::kXeon)})
                  .ok());
  std::vector<Variant> variants;
  for (int v = 0; v < 40000; ++v) {
    variants.push_back(
        MakeVariant("big", absl::StrCat("big_v", v),
                    absl::StrCat("user={condition(N > ", v, ")}"), v));
  }
  ASSERT_TRUE(placer.SetVariants("big", std::move(variants)).ok());
  Job job;
  job.kernel = "big";
  job.variables["N"] = 4096;
  std::atomic<bool> done{false};
  std::thread select([&] {
    EXPECT_TRUE(placer.Select(job).ok());
    done = true;
  });
  // The Select has looked its classes up: it is resolving from here on.
  while (placer.cache_stats().misses == 0 && !done)
    absl::SleepFor(absl::Microseconds(50));
  int beats_during = 0;
  absl::Duration slowest;
  while (!done) {
    const absl::Time start = absl::Now();
    ASSERT_TRUE(placer.UpdateUtilisations("a", {{"a/0", 0.5}}).ok());
    slowest = std::max(slowest, absl::Now() - start);
    if (!done) ++beats_during;
    absl::SleepFor(absl::Milliseconds(1));
  }
  select.join();
  EXPECT_GE(beats_during, 3) << "slowest beat " << slowest;
}

}  // namespace
}  // namespace ctxsel::server::placement
