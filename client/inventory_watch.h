// inventory_watch.h: what CtxselClient::WatchInventory keeps across
// reconnects so that its caller sees one stream: where to resume, and the
// nodes it has delivered, against which a resync snapshot is compared. The
// one place in the client that turns server events into caller events.
//
//   WatchedInventory watched(/*initial=*/true);
//   stream = stub->WatchInventory(&context, watched.NextRequest());
//   while (stream->Read(&event)) {
//     for (const v1::InventoryEvent& e : watched.Take(event)) deliver(e);
//   }
//   // stream broke: open another with watched.NextRequest()
//
// Not thread-safe: one watch uses it.
#ifndef CTXSEL_CLIENT_INVENTORY_WATCH_H_
#define CTXSEL_CLIENT_INVENTORY_WATCH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::client {

class WatchedInventory {
 public:
  // `initial`: the caller wants the live nodes first (as KIND_ADDED,
  // reason "initial").
  explicit WatchedInventory(bool initial) : initial_(initial) {}

  // The request for the next stream: resume after the last position known
  // complete (the latest live event, or the end of a resync snapshot);
  // without one, a resync snapshot (`initial`, or a stream that broke
  // before its first event or inside a snapshot); a watch without
  // `initial` starts plain.
  // Abandons a snapshot the previous stream cut short.
  v1::WatchInventoryRequest NextRequest();

  // Takes one event from the server; returns what the caller sees for it,
  // in order:
  //   * KIND_RESYNC: KIND_ADDED for a node not delivered, KIND_CHANGED for
  //     one whose devices differ from those delivered (utilisation aside),
  //     nothing otherwise;
  //   * KIND_RESYNC_END: KIND_REMOVED for each delivered node that the
  //     snapshot did not name (its node as last delivered);
  //   * a live KIND_ADDED or KIND_CHANGED: itself, unless the caller has
  //     that node with those devices already (a replay after a snapshot
  //     cut short); KIND_REMOVED: itself.
  // Events made from a snapshot carry its sequence, epoch and time.
  std::vector<v1::InventoryEvent> Take(const v1::InventoryEvent& event);

 private:
  struct Position {
    std::string epoch;
    int64_t sequence = 0;
  };
  // `event` (a live one or a snapshot's) with `kind` and `node`.
  static v1::InventoryEvent Made(const v1::InventoryEvent& event,
                                 v1::InventoryEvent::Kind kind,
                                 const v1::Node& node, const char* reason);

  const bool initial_;
  // Set once a stream has started: later ones resume or resync.
  bool started_ = false;
  // Set by the first complete snapshot or live event; until then a
  // snapshot answers `initial` (its events say "initial").
  std::optional<Position> position_;
  // A resync snapshot is being read: the nodes it named so far.
  std::optional<std::set<std::string>> resyncing_;
  // The nodes the caller has, by id, as last delivered.
  std::map<std::string, v1::Node> delivered_;
};

}  // namespace ctxsel::client

#endif  // CTXSEL_CLIENT_INVENTORY_WATCH_H_
