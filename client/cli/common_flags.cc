#include "client/cli/common_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7070",
          "Address of the ctxsel server, host:port.");
ABSL_FLAG(bool, json, false, "Print machine-readable JSON.");
