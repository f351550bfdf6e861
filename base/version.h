// version.h: the one version of ctxsel's programs (server, agent, CLI), so
// that `ctxsel-cli --version`, Ping and agent reports agree.
#ifndef CTXSEL_BASE_VERSION_H_
#define CTXSEL_BASE_VERSION_H_

namespace ctxsel {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace ctxsel

#endif  // CTXSEL_BASE_VERSION_H_
