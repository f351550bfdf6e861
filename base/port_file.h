// port_file.h: the --port_file and --metrics_port_file of ctxsel-server and
// ctxsel-agent, which tell a test or a wrapper which port port 0 picked.
//
//   absl::Status written = WritePortFile("/tmp/port", 40123);
#ifndef CTXSEL_BASE_PORT_FILE_H_
#define CTXSEL_BASE_PORT_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace ctxsel {

// Writes "<port>\n" to `path` through a temporary file and a rename, so a
// reader polling for it never sees a half-written file. InternalError
// naming the file otherwise.
absl::Status WritePortFile(const std::string& path, int port);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_PORT_FILE_H_
