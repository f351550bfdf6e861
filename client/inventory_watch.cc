#include "client/inventory_watch.h"

#include <google/protobuf/util/message_differencer.h>

#include <utility>

namespace ctxsel::client {
namespace {

// What a KIND_CHANGED means: the devices or their traits differ. Utilisation
// moves with every heartbeat and is no change of the node.
bool SameDevices(const v1::Node& a, const v1::Node& b) {
  if (a.devices_size() != b.devices_size()) return false;
  for (int i = 0; i < a.devices_size(); ++i) {
    v1::Device x = a.devices(i);
    v1::Device y = b.devices(i);
    x.clear_utilisation();
    y.clear_utilisation();
    if (!google::protobuf::util::MessageDifferencer::Equals(x, y)) {
      return false;
    }
  }
  return true;
}

}  // namespace

v1::WatchInventoryRequest WatchedInventory::NextRequest() {
  v1::WatchInventoryRequest request;
  resyncing_.reset();
  if (position_.has_value()) {
    request.set_resume_after(position_->sequence);
    request.set_resume_epoch(position_->epoch);
  } else if (started_ || initial_) {
    request.set_resync(true);
  }
  started_ = true;
  return request;
}

v1::InventoryEvent WatchedInventory::Made(const v1::InventoryEvent& event,
                                          v1::InventoryEvent::Kind kind,
                                          const v1::Node& node,
                                          const char* reason) {
  v1::InventoryEvent made = event;
  made.set_kind(kind);
  *made.mutable_node() = node;
  made.set_reason(reason);
  return made;
}

std::vector<v1::InventoryEvent> WatchedInventory::Take(
    const v1::InventoryEvent& event) {
  std::vector<v1::InventoryEvent> out;
  const char* snapshot_reason =
      initial_ && !position_.has_value() ? "initial" : "resync";
  const std::string& id = event.node().id();
  switch (event.kind()) {
    case v1::InventoryEvent::KIND_RESYNC: {
      if (!resyncing_.has_value()) resyncing_.emplace();
      resyncing_->insert(id);
      auto known = delivered_.find(id);
      if (known == delivered_.end()) {
        out.push_back(Made(event, v1::InventoryEvent::KIND_ADDED, event.node(),
                           snapshot_reason));
      } else if (!SameDevices(known->second, event.node())) {
        out.push_back(Made(event, v1::InventoryEvent::KIND_CHANGED,
                           event.node(), snapshot_reason));
      }
      break;
    }
    case v1::InventoryEvent::KIND_RESYNC_END:
      for (auto it = delivered_.begin(); it != delivered_.end();) {
        if (resyncing_.has_value() && resyncing_->count(it->first) > 0) {
          ++it;
          continue;
        }
        // The snapshot did not name it: gone while the caller was away.
        out.push_back(Made(event, v1::InventoryEvent::KIND_REMOVED, it->second,
                           snapshot_reason));
        it = delivered_.erase(it);
      }
      resyncing_.reset();
      break;
    case v1::InventoryEvent::KIND_REMOVED:
      delivered_.erase(id);
      out.push_back(event);
      break;
    default: {  // KIND_ADDED, KIND_CHANGED
      auto known = delivered_.find(id);
      if (known == delivered_.end() ||
          !SameDevices(known->second, event.node())) {
        out.push_back(event);
      }
      break;
    }
  }
  // A live event, or the end of a snapshot: complete up to here.
  if (event.kind() != v1::InventoryEvent::KIND_RESYNC) {
    position_ = Position{event.stream_epoch(), event.sequence()};
  }
  for (const v1::InventoryEvent& e : out) {
    if (e.kind() != v1::InventoryEvent::KIND_REMOVED) {
      delivered_[e.node().id()] = e.node();
    }
  }
  return out;
}

}  // namespace ctxsel::client
