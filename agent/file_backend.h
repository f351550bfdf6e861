// Devices declared in a JSON file (`--devices_file`), in the schema of the
// API's device message (see device_json.h).
//
// The file is read again on every Discover(), so editing it while the agent
// runs simulates hot-plug: the changed device set is reported as a change.
//
//   auto file = MakeFileBackend("fleet/node7.json");
//   absl::StatusOr<std::vector<DeviceInfo>> devices = file->Discover();
#ifndef CTXSEL_AGENT_FILE_BACKEND_H_
#define CTXSEL_AGENT_FILE_BACKEND_H_

#include <memory>
#include <string>

#include "agent/backend.h"

namespace ctxsel::agent {

// Discover() fails with NotFoundError if `path` cannot be read and
// InvalidArgumentError (naming the file and the field) if it is malformed.
std::unique_ptr<DiscoveryBackend> MakeFileBackend(std::string path);

}  // namespace ctxsel::agent

#endif  // CTXSEL_AGENT_FILE_BACKEND_H_
