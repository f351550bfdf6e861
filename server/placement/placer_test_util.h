// placer_test_util.h: devices and variants for the placement tests and
// benchmarks — three device classes (H100, MI250X, a Xeon host) and the
// `saxpy` kernel with one variant per class.
#ifndef CTXSEL_SERVER_PLACEMENT_PLACER_TEST_UTIL_H_
#define CTXSEL_SERVER_PLACEMENT_PLACER_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "server/model.h"

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

}  // namespace ctxsel::server::placement::testing

#endif  // CTXSEL_SERVER_PLACEMENT_PLACER_TEST_UTIL_H_
