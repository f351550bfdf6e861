// The device images a program carries, and which of them a device can run.
//
// A binary built for offloading carries one code object per target it was
// compiled for: an x86_64 ELF for host offload, CUDA cubins (sm_XX) and PTX,
// AMDGPU code objects ("gfx90a:xnack-"). Each is named here by an *image
// id*, "KIND:TARGET", the form the API, the store and the CLI use:
//
//   host:x86_64-pc-linux-gnu   cubin:sm_90   ptx:sm_80   amdgcn:gfx90a:xnack-
//
// ImageFit() says whether a device (its OpenMP traits) runs an image, and
// BestImage() picks the one that would run: an image built for the device's
// own architecture before a generic one (PTX, which the CUDA driver JIT
// compiles for any newer sm; a cubin of the same major version).
//
//   absl::StatusOr<DeviceImage> image = ParseImageId("ptx:sm_80");
//   ImageFit(*image, h100_traits);  // Fit::kGeneric ("JIT-compiled ...")
//
// Pure: no I/O (binary_images.h reads images from a binary's bytes).
#ifndef CTXSEL_IMAGES_DEVICE_IMAGE_H_
#define CTXSEL_IMAGES_DEVICE_IMAGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "selector/selector.h"

namespace ctxsel::images {

enum class ImageKind {
  kHost,        // a host-offload ELF ("host"): runs on the host CPU
  kCubin,       // CUDA machine code for one sm ("cubin")
  kPtx,         // CUDA PTX for a virtual sm ("ptx")
  kCodeObject,  // an AMDGPU code object ("amdgcn")
  kSpirv,       // SPIR-V for Intel GPUs ("spirv")
};

struct DeviceImage {
  ImageKind kind = ImageKind::kHost;
  // As the binary names it: a triple for host images, "sm_80", or an AMD
  // target id "gfx90a:xnack-" (processor, then features).
  std::string target;
  // The SYCL architecture (selector/sycl/arch_catalog.def) it was built for;
  // empty when the catalog has none (a newer sm, generic SPIR-V).
  std::string sycl_architecture;
  // The OpenMP `isa` of its processor ("sm_80", "gfx90a"); empty for host.
  std::string isa;
  // AMD target-id features, e.g. {"xnack-", "sramecc+"}.
  std::vector<std::string> features;

  friend bool operator==(const DeviceImage& a, const DeviceImage& b) {
    return a.kind == b.kind && a.target == b.target;
  }
};

// "host", "cubin", "ptx", "amdgcn", "spirv".
absl::string_view KindName(ImageKind kind);

// The image's id, "KIND:TARGET".
std::string ImageId(const DeviceImage& image);

// The image an id names, with its SYCL architecture, isa and features from
// the tables (images/image_targets.def and the SYCL catalog). An unknown
// kind or a target of the wrong form is InvalidArgumentError naming it.
absl::StatusOr<DeviceImage> ParseImageId(absl::string_view id);

// The image of a code object for `triple_arch` ("nvptx64", "amdgcn",
// "x86_64") and `processor` ("sm_80", "gfx90a:xnack-", "" for host), as an
// offload bundle or an ELF header names it. NotFoundError for a triple the
// table does not list.
absl::StatusOr<DeviceImage> ImageFor(absl::string_view triple_arch,
                                     absl::string_view processor,
                                     absl::string_view triple = "");

// The AMDGPU processor of an ELF's EF_AMDGPU_MACH value; empty if unknown.
absl::string_view AmdgpuProcessor(unsigned mach);

// The triple arch ("x86_64", "nvptx64", "amdgcn") of an ELF e_machine;
// empty if the table has none.
absl::string_view TripleArchOfMachine(unsigned e_machine);

enum class Fit {
  kNone,     // the device cannot run it
  kGeneric,  // runs, but not built for this device (PTX JIT, older cubin)
  kExact,    // built for the device's own architecture
};

// Whether a device with `traits` runs `image`. When `why` is given it gets a
// short reason for kGeneric ("PTX sm_80, JIT-compiled by the CUDA driver for
// sm_90") and for kNone ("built for sm_90").
Fit ImageFit(const DeviceImage& image, const selector::DeviceTraits& traits,
             std::string* why = nullptr);

// The image of `images` that a device with `traits` would run: the first
// exact one, else the first generic one; nullptr when none fits.
const DeviceImage* BestImage(const std::vector<DeviceImage>& images,
                             const selector::DeviceTraits& traits,
                             Fit* fit = nullptr, std::string* why = nullptr);

}  // namespace ctxsel::images

#endif  // CTXSEL_IMAGES_DEVICE_IMAGE_H_
