// ctxsel-cli slurm: keeps Slurm's GPU numbering and ctxsel's the same
// (formats/gres_conf.h says why they can differ).
//
//   ctxsel-cli slurm gres-conf [--node=NODE] [--file_prefix=PATH]
//       gres.conf lines for NODE's GPUs (default: this machine), in ctxsel's
//       vendor-index order.
//   ctxsel-cli slurm check --gres_conf=FILE [--node=NODE] [--file_prefix=PATH]
//       compares FILE (a gres.conf, or saved `slurmd -G` output; - reads
//       stdin) with ctxsel's view; names every GPU that differs, exit 1.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "base/flag_file.h"
#include "client/cli/command.h"
#include "client/cli/service_output.h"
#include "devices/node_id.h"
#include "formats/gres_conf.h"

// Defined with `devices ls` (inventory_commands.cc): one --node for both.
ABSL_DECLARE_FLAG(std::string, node);

ABSL_FLAG(std::string, file_prefix, "",
          "slurm: the device file path before a GPU's vendor index "
          "(default: /dev/nvidia for NVIDIA GPUs).");
ABSL_FLAG(std::string, gres_conf, "",
          "slurm check: the gres.conf or `slurmd -G` output to compare "
          "(- reads stdin).");

namespace ctxsel::cli {
namespace {

std::string Node() {
  const std::string node = absl::GetFlag(FLAGS_node);
  return node.empty() ? NodeId() : node;
}

absl::StatusOr<std::string> ReadInput(const std::string& path) {
  if (path != "-") return ReadFlagFile("gres_conf", path);
  return std::string(std::istreambuf_iterator<char>(std::cin), {});
}

int GresConfLines(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kSlurmCommand);
  const std::string node = Node();
  auto devices = ConnectToServer()->ListDevices("", node);
  if (!devices.ok()) return ReportError("slurm gres-conf", devices.status());
  absl::StatusOr<std::string> text =
      slurm::GresConf(node, *devices, absl::GetFlag(FLAGS_file_prefix));
  if (!text.ok()) return ReportError("slurm gres-conf", text.status());
  std::fputs(text->c_str(), stdout);
  return kExitOk;
}

int Check(const std::vector<std::string>& args) {
  const std::string path = absl::GetFlag(FLAGS_gres_conf);
  if (!args.empty() || path.empty()) return UsageError(kSlurmCommand);
  absl::StatusOr<std::string> text = ReadInput(path);
  if (!text.ok()) return BadUsage("slurm check", text.status().message());
  const std::string node = Node();
  absl::StatusOr<std::vector<slurm::GresDevice>> gres =
      slurm::ParseGres(*text, node);
  if (!gres.ok()) {
    return BadUsage("slurm check",
                    path + ": " + std::string(gres.status().message()));
  }
  auto devices = ConnectToServer()->ListDevices("", node);
  if (!devices.ok()) return ReportError("slurm check", devices.status());
  const std::vector<std::string> differences = slurm::CompareGres(
      *gres, node, *devices, absl::GetFlag(FLAGS_file_prefix));
  for (const std::string& line : differences) {
    std::printf("%s\n", line.c_str());
  }
  if (differences.empty()) {
    std::printf("%s: the %zu GPU(s) of node %s agree with ctxsel\n",
                path.c_str(), gres->size(), node.c_str());
    return kExitOk;
  }
  std::printf("%s: %zu difference(s) with ctxsel on node %s\n", path.c_str(),
              differences.size(), node.c_str());
  return kExitFailure;
}

int RunSlurm(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError(kSlurmCommand);
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "gres-conf") return GresConfLines(rest);
  if (args[0] == "check") return Check(rest);
  return UsageError(kSlurmCommand);
}

}  // namespace

const Command kSlurmCommand = {
    "slurm",
    "slurm gres-conf [--node=NODE] [--file_prefix=PATH]\n"
    "slurm check --gres_conf=FILE [--node=NODE] [--file_prefix=PATH]",
    "Slurm's gres.conf in ctxsel's GPU numbering, or check that they agree.",
    RunSlurm};

}  // namespace ctxsel::cli
