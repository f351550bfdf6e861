#include "server/placement/placer_bridge.h"

#include "server/model/log_text.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {

void PlacerBridge::KernelChanged(const std::string& kernel,
                                 const std::vector<Variant>& variants) {
  // The registry has validated and stored these; the Placer's own checks
  // (one kernel, unique names) cannot fail here, so a failure is a bug.
  absl::Status s = placer_->SetVariants(kernel, variants);
  if (!s.ok()) {
    spdlog::error("placement rejected the variants of kernel {}: {}",
                  LogSafe(kernel), LogSafe(s.ToString()));
  }
}

absl::Status PlacerBridge::ReplaceNodeDevices(
    const std::string& node, const std::vector<Device>& devices) {
  return placer_->SetNodeDevices(node, devices);
}

void PlacerBridge::RemoveNodeDevices(const std::string& node) {
  placer_->RemoveNode(node);
}

bool PlacerBridge::RecordBeat(const std::string& node,
                              absl::Span<const DeviceBeat> beat) {
  // NotFound (a device not of `node`) is the only error.
  return placer_->UpdateUtilisations(node, beat).ok();
}

void PlacerBridge::SetNodeSuspect(const std::string& node, bool suspect) {
  placer_->SetNodeSuspect(node, suspect);
}

std::vector<Device> PlacerBridge::NodeDevices(const std::string& node) const {
  return placer_->NodeDevices(node);
}

void PlacerBridge::ScanDevices(absl::Span<const std::string> nodes,
                               DeviceScan* scan) const {
  placer_->ScanDevices(nodes, scan);
}

}  // namespace ctxsel::server
