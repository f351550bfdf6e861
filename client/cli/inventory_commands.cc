// ctxsel-cli nodes ls, devices ls, watch: the fleet inventory.
//
//   ctxsel-cli nodes ls
//   ctxsel-cli devices ls [--match='device={arch(nvptx)}'] [--node=N]
//   ctxsel-cli watch [--initial] [--max_events=N]
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/cli/command.h"
#include "client/cli/common_flags.h"
#include "client/cli/service_output.h"

ABSL_FLAG(std::string, match, "",
          "devices ls: only devices matching this context selector.");
ABSL_FLAG(std::string, node, "", "devices ls: only this node's devices.");
ABSL_FLAG(bool, initial, false,
          "watch: print the current nodes first, as ADDED events.");
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
  if (absl::GetFlag(FLAGS_json)) {
    v1::ListNodesResponse all;
    for (const v1::NodeSummary& n : *nodes) *all.add_nodes() = n;
    std::printf("%s", ToJson(all).c_str());
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {{"NODE", "DEVICES", "AGENT"}};
  for (const v1::NodeSummary& n : *nodes) {
    rows.push_back(
        {n.node().id(), std::to_string(n.device_count()),
         n.node().agent_version().empty() ? "-" : n.node().agent_version()});
  }
  PrintTable(rows);
  return kExitOk;
}

int RunDevices(const std::vector<std::string>& args) {
  if (args.size() != 1 || args[0] != "ls") return UsageError(kDevicesCommand);
  auto devices = ConnectToServer()->ListDevices(absl::GetFlag(FLAGS_match),
                                                absl::GetFlag(FLAGS_node));
  if (!devices.ok()) return ReportError("devices ls", devices.status());
  if (absl::GetFlag(FLAGS_json)) {
    v1::ListDevicesResponse all;
    for (const v1::Device& d : *devices) *all.add_devices() = d;
    std::printf("%s", ToJson(all).c_str());
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {
      {"DEVICE", "NODE", "INDEX", "KIND", "ARCH", "VENDOR", "SYCL", "MEMORY",
       "UTIL", "CLASS"}};
  for (const v1::Device& d : *devices) {
    rows.push_back({d.id(), d.node(), std::to_string(d.index()),
                    JoinList(d.traits().kind()), JoinList(d.traits().arch()),
                    JoinList(d.traits().vendor()),
                    d.sycl_architecture().empty() ? "-" : d.sycl_architecture(),
                    Memory(d.memory_bytes()), Percent(d.utilisation()),
                    d.device_class().empty() ? "-" : d.device_class()});
  }
  PrintTable(rows);
  return kExitOk;
}

int RunWatch(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kWatchCommand);
  const int max_events = absl::GetFlag(FLAGS_max_events);
  int seen = 0;
  const bool json = absl::GetFlag(FLAGS_json);
  auto client = ConnectToServer();
  // The stream has no deadline (it runs until --max_events or ^C); a Ping
  // first makes an unresponsive server exit 3 within --timeout.
  if (absl::StatusOr<std::string> pong = client->Ping(); !pong.ok()) {
    return ReportError("watch", pong.status());
  }
  absl::Status status = client->WatchInventory(
      absl::GetFlag(FLAGS_initial), [&](const v1::InventoryEvent& event) {
        if (json) {
          std::printf("%s", ToJson(event).c_str());
        } else {
          std::printf("%lld %s %s: %d device(s) (%s)\n",
                      static_cast<long long>(event.sequence()),
                      v1::InventoryEvent::Kind_Name(event.kind()).c_str(),
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
    "devices", "devices ls [--match=SELECTOR] [--node=NODE] [--json]",
    "List live devices, optionally matching a selector.", RunDevices};
const Command kWatchCommand = {"watch",
                               "watch [--initial] [--max_events=N] [--json]",
                               "Stream inventory changes.", RunWatch};

}  // namespace ctxsel::cli
