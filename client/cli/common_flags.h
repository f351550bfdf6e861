// Flags that every ctxsel-cli command shares.
#ifndef CTXSEL_CLIENT_CLI_COMMON_FLAGS_H_
#define CTXSEL_CLIENT_CLI_COMMON_FLAGS_H_

#include <string>

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(std::string, server);
ABSL_DECLARE_FLAG(bool, json);

#endif  // CTXSEL_CLIENT_CLI_COMMON_FLAGS_H_
