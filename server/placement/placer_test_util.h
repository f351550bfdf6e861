// placer_test_util.h: devices, variants and a fixture for the placement
// tests — three device classes (H100, MI250X, a Xeon host) and the `saxpy`
// kernel with one variant per class.
#ifndef CTXSEL_SERVER_PLACEMENT_PLACER_TEST_UTIL_H_
#define CTXSEL_SERVER_PLACEMENT_PLACER_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/model/model.h"
#include "server/placement/placer.h"

namespace ctxsel::server::placement::testing {

enum class Kind { kH100, kMi250, kXeon };

// A device of `kind` at `index` on `node`, id "<node>/<index>" ("/host" for
// -1).
Device MakeDevice(const std::string& node, int32_t index, Kind kind,
                  double utilisation = 0.0);

// A variant of `kernel`; the selector must parse (checked).
Variant MakeVariant(const std::string& kernel, const std::string& name,
                    const std::string& selector, int64_t order);

// saxpy_cuda (score 4 on H100), saxpy_hip (8 on MI250X), saxpy_avx (6 on
// the Xeon), with an empty construct set.
std::vector<Variant> SaxpyVariants();

// A job for `saxpy` with defaults.
Job SaxpyJob();

// The chosen variant's name ("base" for the base function), or the status
// text when Select fails.
std::string Pick(const Placer& placer, const Job& job);

// The chosen device's id, or the status text when Select fails.
std::string DeviceOf(const Placer& placer, const Job& job);

// A Placer with the saxpy variants registered.
class PlacerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(placer_.SetVariants("saxpy", SaxpyVariants()).ok());
  }
  void AddNode(const std::string& node, std::vector<Device> devices) {
    absl::Status s = placer_.SetNodeDevices(node, std::move(devices));
    ASSERT_TRUE(s.ok()) << s;
  }
  Placer placer_;
};

}  // namespace ctxsel::server::placement::testing

#endif  // CTXSEL_SERVER_PLACEMENT_PLACER_TEST_UTIL_H_
