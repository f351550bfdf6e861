// placer_bridge.h: hands registry and inventory changes to the Placer.
//
// The registry and the inventory know only their observer interfaces; this
// adapter is the one place that connects them to placement.
//
//   placement::Placer placer;
//   PlacerBridge bridge(&placer);
//   auto registry = VariantRegistry::Open(store, &bridge);
//   Inventory inventory(options, &bridge);
#ifndef CTXSEL_SERVER_PLACER_BRIDGE_H_
#define CTXSEL_SERVER_PLACER_BRIDGE_H_

#include "server/inventory.h"
#include "server/placement/placer.h"
#include "server/variant_registry.h"

namespace ctxsel::server {

class PlacerBridge final : public VariantObserver, public InventoryObserver {
 public:
  explicit PlacerBridge(placement::Placer* placer) : placer_(placer) {}

  void KernelChanged(const std::string& kernel,
                     const std::vector<Variant>& variants) override;
  absl::Status NodeDevicesChanged(const std::string& node,
                                  const std::vector<Device>& devices) override;
  void NodeRemoved(const std::string& node) override;
  void UtilisationsChanged(
      const std::string& node,
      absl::Span<const std::pair<std::string, double>> utilisation) override;
  void NodeSuspectChanged(const std::string& node, bool suspect) override;

 private:
  placement::Placer* const placer_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_PLACER_BRIDGE_H_
