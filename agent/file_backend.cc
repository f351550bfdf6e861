#include "agent/file_backend.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "devices/device_json.h"

namespace ctxsel::agent {
namespace {

class FileBackend : public DiscoveryBackend {
 public:
  explicit FileBackend(std::string path) : path_(std::move(path)) {}

  std::string name() const override { return "file"; }

  absl::StatusOr<std::vector<DeviceInfo>> Discover() override {
    std::ifstream in(path_);
    if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path_));
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::vector<DeviceInfo>> devices = ParseDevices(text.str());
    if (!devices.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path_, ": ", devices.status().message()));
    }
    return devices;
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<DiscoveryBackend> MakeFileBackend(std::string path) {
  return std::make_unique<FileBackend>(std::move(path));
}

}  // namespace ctxsel::agent
