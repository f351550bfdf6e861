// node_report.h: checks and completes a node agent's report before the
// inventory takes it.
//
//   NodeState node = ...;  // from ReportNodeRequest
//   absl::Status s = NormalizeReport(node);
//   // device ids and node fields filled in, traits completed from the SYCL
//   // catalog, or InvalidArgumentError "node.devices[1].index: 0 is used
//   // twice".
#ifndef CTXSEL_SERVER_FLEET_NODE_REPORT_H_
#define CTXSEL_SERVER_FLEET_NODE_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/model/model.h"

namespace ctxsel::server {

// A node as the inventory keeps it.
struct NodeState {
  std::string id;
  std::string agent_version;
  std::vector<Device> devices;  // by index, the host CPU (-1) first
  absl::Time reported = absl::InfinitePast();
  absl::Time last_heartbeat = absl::InfinitePast();
  // Its heartbeat is overdue (InventoryOptions::suspect_after): placement
  // avoids its devices while healthy ones can serve.
  bool suspect = false;
};

// Bounds on one report, so that no node can make the server's work or
// memory per report (and every listing and Explain that shows the node)
// unbounded.
struct ReportLimits {
  int max_devices_per_node = 1024;
  // Names in all five trait sets of one device together; each name is also
  // held to the rule for names (server/model/names.h: at most 256 bytes).
  int max_traits_per_device = 256;
};

// The one check of a report (ids, indices, utilisation in [0, 1], device
// traits, trait names, `limits`), which also completes it: traits and
// vendor indices as NormalizeDevices (device_normalize.h) makes them, empty
// device ids become "<node>/<kind><n>" as the agent names them
// (sycl::DeviceIds: "n1/cpu0", "n1/gpu0"), empty device nodes the node id,
// devices are sorted by index. Errors name the field: InvalidArgumentError
// (a device id or index used twice in the report included), or
// ResourceExhaustedError naming the limit and its flag. Whoever takes a
// report it accepted (the inventory, placement) checks nothing again but
// what needs the fleet: a device id another node holds is
// AlreadyExistsError (placement::Placer::SetNodeDevices).
absl::Status NormalizeReport(NodeState& node, const ReportLimits& limits = {});

// One device's utilisation in a heartbeat.
using DeviceBeat = std::pair<std::string, double>;

// The one check of a heartbeat's values: each utilisation finite and in
// [0, 1], as in a report (never clamped). InvalidArgumentError
// "utilisation[1] (n1/gpu0): 1.5 is not in [0, 1]".
absl::Status CheckBeat(absl::Span<const DeviceBeat> beat);

// True when two reports describe the same devices (utilisation, times and
// the server's cordons aside; health and parents included): a re-report
// that changes nothing.
bool SameDevices(const std::vector<Device>& a, const std::vector<Device>& b);

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_FLEET_NODE_REPORT_H_
