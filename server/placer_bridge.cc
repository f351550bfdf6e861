#include "server/placer_bridge.h"

#include "server/log_text.h"
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

absl::Status PlacerBridge::NodeDevicesChanged(
    const std::string& node, const std::vector<Device>& devices) {
  return placer_->SetNodeDevices(node, devices);
}

void PlacerBridge::NodeRemoved(const std::string& node) {
  placer_->RemoveNode(node);
}

void PlacerBridge::UtilisationsChanged(
    const std::string& node,
    absl::Span<const std::pair<std::string, double>> utilisation) {
  absl::Status s = placer_->UpdateUtilisations(node, utilisation);
  if (!s.ok()) {
    spdlog::warn("placement: heartbeat of {}: {}", LogSafe(node),
                 LogSafe(s.ToString()));
  }
}

void PlacerBridge::NodeSuspectChanged(const std::string& node, bool suspect) {
  placer_->SetNodeSuspect(node, suspect);
}

}  // namespace ctxsel::server
