#include "images/binary_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace ctxsel::images {

absl::StatusOr<BinaryImages> ReadBinaryFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  absl::StatusOr<BinaryImages> found = ReadBinaryImages(bytes.str());
  if (!found.ok()) {
    return absl::Status(found.status().code(),
                        absl::StrCat(path, ": ", found.status().message()));
  }
  if (found->images.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": carries no device image"));
  }
  return found;
}

absl::StatusOr<std::vector<std::string>> ReadImageIds(const std::string& path) {
  absl::StatusOr<BinaryImages> found = ReadBinaryFile(path);
  if (!found.ok()) return found.status();
  std::vector<std::string> ids;
  for (const DeviceImage& image : found->images) ids.push_back(ImageId(image));
  return ids;
}

}  // namespace ctxsel::images
