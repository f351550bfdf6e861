#include "devices/node_id.h"

#include <unistd.h>

namespace ctxsel {

std::string NodeId(const std::string& configured) {
  if (!configured.empty()) return configured;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

}  // namespace ctxsel
