// libFuzzer entry point for the binary reader (binary_images.h) and the
// image rules (device_image.h). Beyond "no crash, no sanitizer report":
// every image found has an id that ParseImageId reads back to the same id,
// and a fit is decided for it on every kind of device.
//
// tools/fuzz.sh runs it under libFuzzer (--config=fuzz);
// binary_images_test's corruption cases drive the same reader without it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "images/binary_images.h"
#include "images/device_image.h"
#include "selector/sycl/arch_catalog.h"

namespace {

const std::vector<ctxsel::selector::DeviceTraits>& Devices() {
  static const auto* devices = [] {
    auto* out = new std::vector<ctxsel::selector::DeviceTraits>;
    for (const char* arch : {"x86_64", "nvidia_gpu_sm_80", "nvidia_gpu_sm_90",
                             "amd_gpu_gfx90a", "intel_gpu_pvc"}) {
      out->push_back(*ctxsel::sycl::DeviceTraitsFor(arch));
    }
    return out;
  }();
  return *devices;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace images = ::ctxsel::images;
  absl::StatusOr<images::BinaryImages> found = images::ReadBinaryImages(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!found.ok()) return 0;
  for (const images::DeviceImage& image : found->images) {
    const std::string id = images::ImageId(image);
    absl::StatusOr<images::DeviceImage> back = images::ParseImageId(id);
    if (!back.ok() || images::ImageId(*back) != id) std::abort();
    for (const auto& device : Devices()) {
      std::string why;
      (void)images::ImageFit(*back, device, &why);
    }
  }
  return 0;
}
