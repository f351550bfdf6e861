// Small helpers to read sysfs-style trees under a configurable root.
//
// Discovery backends read /sys through these so that tests can point them at
// fixture trees (`--sysfs_root=agent/testdata/sysfs_amd`).
//
//   Sysfs sys("/");
//   absl::StatusOr<std::string> v = sys.Read("class/drm/card0/device/vendor");
//   std::vector<std::string> nodes = sys.List("class/kfd/kfd/topology/nodes");
#ifndef CTXSEL_AGENT_SYSFS_H_
#define CTXSEL_AGENT_SYSFS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ctxsel::agent {

class Sysfs {
 public:
  // `root` is the directory that stands for "/" (the tree below it has
  // "sys/..."); "/" for the real system.
  explicit Sysfs(std::string root) : root_(std::move(root)) {}

  // Contents of /sys/`path`, surrounding whitespace trimmed. NotFoundError if
  // the file does not exist.
  absl::StatusOr<std::string> Read(const std::string& path) const;

  // Read() parsed as an integer (decimal, or hex with "0x").
  absl::StatusOr<int64_t> ReadInt(const std::string& path) const;

  // Names of the entries of directory /sys/`path`, sorted naturally
  // ("node2" before "node10"); empty if it does not exist.
  std::vector<std::string> List(const std::string& path) const;

  // A "key value" per line file (KFD's `properties`) as a map.
  absl::StatusOr<std::map<std::string, int64_t>> ReadProperties(
      const std::string& path) const;

  bool Exists(const std::string& path) const;

 private:
  std::string Full(const std::string& path) const;
  std::string root_;
};

// Parses "123" or "0x7b" (surrounding whitespace allowed).
absl::StatusOr<int64_t> ParseSysfsInt(const std::string& text);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_SYSFS_H_
