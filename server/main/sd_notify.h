// sd_notify.h: tells the service manager (systemd, Type=notify) that the
// server is ready and alive, by the notify protocol: one datagram of
// "VAR=value" lines to the unix socket named by $NOTIFY_SOCKET. No
// libsystemd: the protocol is one sendto().
//
//   SdNotify("READY=1");               // once serving
//   if (SdWatchdogInterval()) ... SdNotify("WATCHDOG=1");  // while healthy
#ifndef CTXSEL_SERVER_MAIN_SD_NOTIFY_H_
#define CTXSEL_SERVER_MAIN_SD_NOTIFY_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ctxsel::server {

// Sends `state` (e.g. "READY=1", "WATCHDOG=1", "STOPPING=1") to
// $NOTIFY_SOCKET (a path, or "@name" for an abstract socket). OK, and
// nothing sent, when $NOTIFY_SOCKET is unset; UnavailableError when the
// datagram cannot be sent.
absl::Status SdNotify(absl::string_view state);

// How often the service manager wants "WATCHDOG=1" at the latest
// ($WATCHDOG_USEC, when $WATCHDOG_PID is unset or names this process);
// nullopt without a watchdog.
std::optional<absl::Duration> SdWatchdogInterval();

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MAIN_SD_NOTIFY_H_
