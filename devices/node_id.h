// node_id.h: the id a node goes by in the fleet — what ctxsel-agent reports
// as and what `ctxsel-cli run --here` asks for, so both agree.
//
//   std::string node = NodeId(absl::GetFlag(FLAGS_node_id));  // or hostname
#ifndef CTXSEL_DEVICES_NODE_ID_H_
#define CTXSEL_DEVICES_NODE_ID_H_

#include <string>

namespace ctxsel {

// `configured` when it is not empty (the agent's --node_id), else this
// machine's host name.
std::string NodeId(const std::string& configured = "");

}  // namespace ctxsel

#endif  // CTXSEL_DEVICES_NODE_ID_H_
