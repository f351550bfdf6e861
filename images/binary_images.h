// Reads the device images an executable, shared object or object file
// carries, from its bytes (no I/O: binary_file.h reads the file).
//
// What it understands:
// - clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__` magic): a whole file
//   made by clang-offload-bundler, or inside an ELF section (`.hip_fatbin`,
//   `.llvm.offloading`); in clang-14 object files each bundle entry is its
//   own section named `__CLANG_OFFLOAD_BUNDLE__<entry id>`. Entry ids are
//   "KIND-TRIPLE[-TARGET ID]": `openmp-x86_64-pc-linux-gnu`,
//   `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`; `host-` entries are the host
//   code, not an image.
// - CUDA fatbins (`.nv_fatbin`, or a whole .fatbin file): a 16-byte header
//   (magic 0xBA55ED50, version, header size, size of the entries) and
//   entries of kind 1 (PTX) or 2 (ELF cubin), each with its sm.
// - OpenMP offload programs linked by clang 14: the device ELF images
//   clang-offload-wrapper embeds in `.rodata` next to the
//   `omp_offloading_entries` table, named by their ELF header's machine
//   (and, for GPUs, the sm or gfx processor in e_flags).
// - A device code object on its own (a cubin, an AMDGPU .hsaco).
//
//   absl::StatusOr<BinaryImages> found = ReadBinaryImages(bytes);
//   for (const DeviceImage& image : found->images) ... ImageId(image) ...
#ifndef CTXSEL_IMAGES_BINARY_IMAGES_H_
#define CTXSEL_IMAGES_BINARY_IMAGES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "images/device_image.h"

namespace ctxsel::images {

struct BinaryImages {
  // Each distinct image once, in the order found.
  std::vector<DeviceImage> images;
  // Entries that name no target the tables know, each "ENTRY: why".
  std::vector<std::string> skipped;
  // Target regions in `omp_offloading_entries` (0 without the section).
  int offload_entries = 0;
};

// The images in `bytes`. InvalidArgumentError when the bytes are neither an
// ELF64 little-endian file, a clang offload bundle nor a CUDA fatbin, or
// when a structure points outside them. Finding no image is not an error.
absl::StatusOr<BinaryImages> ReadBinaryImages(absl::string_view bytes);

}  // namespace ctxsel::images

#endif  // CTXSEL_IMAGES_BINARY_IMAGES_H_
