// The device images of a binary on disk (binary_images.h parses the bytes).
//
//   absl::StatusOr<BinaryImages> found = ReadBinaryFile("./app");
//   absl::StatusOr<std::vector<std::string>> ids = ReadImageIds("./app");
#ifndef CTXSEL_IMAGES_BINARY_FILE_H_
#define CTXSEL_IMAGES_BINARY_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "images/binary_images.h"

namespace ctxsel::images {

// ReadBinaryImages() of the file at `path`; errors name the path. A binary
// that carries no device image is FailedPreconditionError: asking placement
// to fit it would refuse every device.
absl::StatusOr<BinaryImages> ReadBinaryFile(const std::string& path);

// The image ids (ImageId: "cubin:sm_90") of ReadBinaryFile(path)'s images,
// in the order found; its errors.
absl::StatusOr<std::vector<std::string>> ReadImageIds(const std::string& path);

}  // namespace ctxsel::images

#endif  // CTXSEL_IMAGES_BINARY_FILE_H_
