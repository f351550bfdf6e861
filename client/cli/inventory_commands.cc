// ctxsel-cli nodes ls, devices ls, watch: the fleet inventory.
//
//   ctxsel-cli nodes ls
//   ctxsel-cli devices ls [--device_filter='device={arch(nvptx)}'] [--node=N]
//   ctxsel-cli devices cordon DEVICE|--node=N --reason=WHY [--drain]
//   ctxsel-cli devices uncordon DEVICE|--node=N
//   ctxsel-cli devices cordons
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

ABSL_FLAG(std::string, node, "",
          "devices ls: only this node's devices; devices cordon, uncordon: "
          "every device of this node.");
ABSL_FLAG(std::string, reason, "",
          "devices cordon: why (shown in listings, Explain and drained "
          "claims' errors); required.");
ABSL_FLAG(bool, drain, false,
          "devices cordon: also fail renewals of the claims on the devices, "
          "so that their launchers stop (ctxsel-cli run sends SIGTERM).");
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

// A cordon first (the operator's word), then the agent's health.
std::string State(const v1::Device& d) {
  if (d.draining()) return "draining";
  if (d.cordoned()) return "cordoned";
  switch (d.health()) {
    case v1::DEVICE_HEALTH_DEGRADED:
      return "degraded";
    case v1::DEVICE_HEALTH_UNHEALTHY:
      return "unhealthy";
    default:
      return "healthy";
  }
}

std::string Why(const v1::Device& d) {
  std::string why = d.cordon_reason();
  if (!d.health_reason().empty()) {
    absl::StrAppend(&why, why.empty() ? "" : "; ", d.health_reason());
  }
  if (!d.parent().empty()) {
    absl::StrAppend(&why, why.empty() ? "" : "; ", "part of ", d.parent());
  }
  return why.empty() ? "-" : why;
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

// `devices cordon` / `uncordon`: DEVICE or --node=N, exactly one.
int RunCordon(const std::vector<std::string>& args) {
  const bool cordon = args[0] == "cordon";
  const std::string node = absl::GetFlag(FLAGS_node);
  if (args.size() > 2 || (args.size() == 2) == !node.empty()) {
    return BadUsage("devices " + args[0],
                    "name one DEVICE (its id, e.g. n7/gpu0), or --node=NODE");
  }
  const std::string device = args.size() == 2 ? args[1] : "";
  const std::string what = absl::StrCat(
      "devices ", args[0], " ", device.empty() ? "--node=" + node : device);
  auto client = ConnectToServer();
  if (!cordon) {
    absl::Status s = client->UncordonDevices(device, node);
    if (!s.ok()) return ReportError(what, s);
    std::printf("uncordoned %s\n",
                device.empty() ? ("node " + node).c_str() : device.c_str());
    return kExitOk;
  }
  if (absl::GetFlag(FLAGS_reason).empty()) {
    return BadUsage(what, "--reason=WHY is required");
  }
  v1::DeviceCordon request;
  request.set_device(device);
  request.set_node(node);
  request.set_reason(absl::GetFlag(FLAGS_reason));
  request.set_drain(absl::GetFlag(FLAGS_drain));
  absl::StatusOr<v1::DeviceCordon> stored = client->CordonDevices(request);
  if (!stored.ok()) return ReportError(what, stored.status());
  if (PrintMessage(*stored)) return kExitOk;
  std::printf("%s %s: %s\n", stored->drain() ? "drained" : "cordoned",
              device.empty() ? ("node " + node).c_str() : device.c_str(),
              stored->reason().c_str());
  return kExitOk;
}

int RunCordonList() {
  auto cordons = ConnectToServer()->ListCordons();
  if (!cordons.ok()) return ReportError("devices cordons", cordons.status());
  v1::ListCordonsResponse all;
  Listing listing;
  listing.columns = {{"DEVICE"}, {"NODE"}, {"DRAIN"}, {"BY"}, {"REASON"}};
  for (const v1::DeviceCordon& c : *cordons) {
    *all.add_cordons() = c;
    listing.rows.push_back(
        {c.device().empty() ? "*" : c.device(),
         c.node().empty() ? "-" : c.node(), c.drain() ? "yes" : "no",
         c.cordoned_by().empty() ? "-" : c.cordoned_by(), c.reason()});
    listing.names.push_back(c.device().empty() ? c.node() : c.device());
  }
  PrintListing(all, listing);
  return kExitOk;
}

int RunDevices(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "cordon" || args[0] == "uncordon")) {
    return RunCordon(args);
  }
  if (args.size() == 1 && args[0] == "cordons") return RunCordonList();
  if (args.size() != 1 || args[0] != "ls") return UsageError(kDevicesCommand);
  auto devices = ConnectToServer()->ListDevices(
      absl::GetFlag(FLAGS_device_filter), absl::GetFlag(FLAGS_node));
  if (!devices.ok()) return ReportError("devices ls", devices.status());
  v1::ListDevicesResponse all;
  Listing listing;
  // The trait lists and the full class run to hundreds of characters: the
  // table shows the short class name, -o wide the rest.
  listing.columns = {{"DEVICE"},     {"NODE"},
                     {"INDEX"},      {"CLASS"},
                     {"MEMORY"},     {"UTIL"},
                     {"STATE"},      {"KIND", true},
                     {"ARCH", true}, {"VENDOR", true},
                     {"SYCL", true}, {"UUID", true},
                     {"PCI", true},  {"CLASS TRAITS", true},
                     {"WHY", true}};
  for (const v1::Device& d : *devices) {
    *all.add_devices() = d;
    listing.rows.push_back(
        {d.id(), d.node(), std::to_string(d.index()),
         d.device_class_short_name().empty() ? "-"
                                             : d.device_class_short_name(),
         Memory(d.memory_bytes()), Percent(d.utilisation()), State(d),
         JoinList(d.traits().kind()), JoinList(d.traits().arch()),
         JoinList(d.traits().vendor()),
         d.sycl_architecture().empty() ? "-" : d.sycl_architecture(),
         d.uuid().empty() ? "-" : d.uuid(),
         d.pci_bus_id().empty() ? "-" : d.pci_bus_id(),
         d.device_class().empty() ? "-" : d.device_class(), Why(d)});
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
    "devices",
    "devices ls [--device_filter=SELECTOR] [--node=NODE] [--json]\n"
    "devices cordon DEVICE|--node=NODE --reason=WHY [--drain] [--json]\n"
    "devices uncordon DEVICE|--node=NODE\n"
    "devices cordons [--json]",
    "List live devices (optionally through a device filter); cordon one "
    "or a node so placement skips it (admin).",
    RunDevices};
const Command kWatchCommand = {"watch",
                               "watch [--initial] [--max_events=N] [--json]",
                               "Stream inventory changes.", RunWatch};

}  // namespace ctxsel::cli
