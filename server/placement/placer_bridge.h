// placer_bridge.h: connects the registry and the inventory to the Placer.
//
// The registry and the inventory know only their interfaces; this adapter
// is the one place that connects them to placement. For the inventory it is
// the DeviceStore: device state, utilisation included, lives in the
// Placer's Fleet and nowhere else.
//
//   placement::Placer placer;
//   PlacerBridge bridge(&placer);
//   auto registry = VariantRegistry::Open(store, &bridge);
//   Inventory inventory(options, &bridge);
#ifndef CTXSEL_SERVER_PLACEMENT_PLACER_BRIDGE_H_
#define CTXSEL_SERVER_PLACEMENT_PLACER_BRIDGE_H_

#include "server/fleet/inventory.h"
#include "server/placement/placer.h"
#include "server/registry/variant_registry.h"

namespace ctxsel::server {

class PlacerBridge final : public VariantObserver, public DeviceStore {
 public:
  explicit PlacerBridge(placement::Placer* placer) : placer_(placer) {}

  void KernelChanged(const std::string& kernel,
                     const std::vector<Variant>& variants) override;

  absl::Status ReplaceNodeDevices(const std::string& node,
                                  const std::vector<Device>& devices) override;
  void RemoveNodeDevices(const std::string& node) override;
  bool RecordBeat(const std::string& node,
                  absl::Span<const DeviceBeat> beat) override;
  void SetNodeSuspect(const std::string& node, bool suspect) override;
  std::vector<Device> NodeDevices(const std::string& node) const override;
  void ScanDevices(absl::Span<const std::string> nodes,
                   DeviceScan* scan) const override;

 private:
  placement::Placer* const placer_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_PLACEMENT_PLACER_BRIDGE_H_
