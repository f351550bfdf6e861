// ctxsel-cli nodes ls, devices ls, watch: the fleet inventory.
//
//   ctxsel-cli nodes ls
//   ctxsel-cli devices ls [--device_filter='device={arch(nvptx)}'] [--node=N]
//   ctxsel-cli watch [--initial] [--max_events=N]
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/service_output.h"

ABSL_FLAG(std::string, node, "", "devices ls: only this node's devices.");
ABSL_FLAG(
    bool, initial, false,
    "watch: print the current nodes first, as ADDED (KIND_ADDED) events.");
ABSL_FLAG(int, max_events, 0, "watch: stop after this many events (0: never).");

namespace ctxsel::cli {
namespace {

std::string Percent(double utilisation) {
  return absl::StrCat(static_cast<int>(utilisation * 100 + 0.5), "%");
}

std::string Memory(uint64_t bytes) {
  return bytes == 0 ? "-" : absl::StrCat(bytes >> 30, " GiB");
}

int RunNodes(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "ls") return UsageError(kNodesCommand);
  auto nodes = ConnectToServer()->ListNodes(/*include_devices=*/false);
  if (!nodes.ok()) return ReportError("nodes ls", nodes.status());
  v1::ListNodesResponse all;
  Listing listing;
  listing.columns = {{"NODE"}, {"DEVICES"}, {"AGENT"}};
  for (const v1::NodeSummary& n : *nodes) {
    *all.add_nodes() = n;
    listing.rows.push_back(
        {n.node().id(), std::to_string(n.device_count()),
         n.node().agent_version().empty() ? "-" : n.node().agent_version()});
    listing.names.push_back(n.node().id());
  }
  PrintListing(all, listing);
  return kExitOk;
}

int RunDevices(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "ls") return UsageError(kDevicesCommand);
  auto devices = ConnectToServer()->ListDevices(
      absl::GetFlag(FLAGS_device_filter), absl::GetFlag(FLAGS_node));
  if (!devices.ok()) return ReportError("devices ls", devices.status());
  v1::ListDevicesResponse all;
  Listing listing;
  // The trait lists and the full class run to hundreds of characters: the
  // table shows the short class name, -o wide the rest.
  listing.columns = {{"DEVICE"},
                     {"NODE"},
                     {"INDEX"},
                     {"CLASS"},
                     {"MEMORY"},
                     {"UTIL"},
                     {"KIND", true},
                     {"ARCH", true},
                     {"VENDOR", true},
                     {"SYCL", true},
                     {"UUID", true},
                     {"PCI", true},
                     {"CLASS TRAITS", true}};
  for (const v1::Device& d : *devices) {
    *all.add_devices() = d;
    listing.rows.push_back(
        {d.id(), d.node(), std::to_string(d.index()),
         d.device_class_short_name().empty() ? "-"
                                             : d.device_class_short_name(),
         Memory(d.memory_bytes()), Percent(d.utilisation()),
         JoinList(d.traits().kind()), JoinList(d.traits().arch()),
         JoinList(d.traits().vendor()),
         d.sycl_architecture().empty() ? "-" : d.sycl_architecture(),
         d.uuid().empty() ? "-" : d.uuid(),
         d.pci_bus_id().empty() ? "-" : d.pci_bus_id(),
         d.device_class().empty() ? "-" : d.device_class()});
    listing.names.push_back(d.id());
  }
  PrintListing(all, listing);
  return kExitOk;
}

int RunWatch(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kWatchCommand);
  const int max_events = absl::GetFlag(FLAGS_max_events);
  int seen = 0;
  const OutputFormat format =
      OutputFormatFromFlags().value_or(OutputFormat::kTable);
  auto client = ConnectToServer();
  // The stream has no deadline (it runs until --max_events or ^C) and
  // follows --server's list when its server goes away (WatchInventory); a
  // Ping first makes an unresponsive server exit 3 within --timeout.
  if (absl::StatusOr<std::string> pong = client->Ping(); !pong.ok()) {
    return ReportError("watch", pong.status());
  }
  absl::Status status = client->WatchInventory(
      absl::GetFlag(FLAGS_initial), [&](const v1::InventoryEvent& event) {
        if (format == OutputFormat::kJson) {
          std::printf("%s", ToJson(event).c_str());
        } else if (format == OutputFormat::kYaml) {
          std::printf("---\n%s", ToYaml(event).c_str());
        } else if (format == OutputFormat::kName) {
          std::printf("%s\n", event.node().id().c_str());
        } else {
          // "3 ADDED n1: ...": the table drops the enum's KIND_ prefix.
          const std::string kind = std::string(absl::StripPrefix(
              v1::InventoryEvent::Kind_Name(event.kind()), "KIND_"));
          std::printf("%lld %s %s: %d device(s) (%s)\n",
                      static_cast<long long>(event.sequence()), kind.c_str(),
                      event.node().id().c_str(), event.node().devices_size(),
                      event.reason().c_str());
        }
        std::fflush(stdout);
        return max_events <= 0 || ++seen < max_events;
      });
  if (!status.ok()) return ReportError("watch", status);
  return kExitOk;
}

}  // namespace

const Command kNodesCommand = {"nodes", "nodes ls [--json]",
                               "List the live nodes.", RunNodes};
const Command kDevicesCommand = {
    "devices", "devices ls [--device_filter=SELECTOR] [--node=NODE] [--json]",
    "List live devices, optionally only those that pass a device filter.",
    RunDevices};
const Command kWatchCommand = {"watch",
                               "watch [--initial] [--max_events=N] [--json]",
                               "Stream inventory changes.", RunWatch};

}  // namespace ctxsel::cli
