#include "server/main/grpc_log.h"

#include <grpc/support/log.h>

#include "server/model/log_text.h"
#include "spdlog/spdlog.h"

namespace ctxsel::server {
namespace {

spdlog::level::level_enum Level(gpr_log_severity severity) {
  switch (severity) {
    case GPR_LOG_SEVERITY_DEBUG:
      return spdlog::level::debug;
    case GPR_LOG_SEVERITY_INFO:
      return spdlog::level::info;
    case GPR_LOG_SEVERITY_ERROR:
      break;
  }
  return spdlog::level::err;
}

void Log(gpr_log_func_args* args) {
  // The file name is gRPC's own; the message may quote a client's header.
  spdlog::log(Level(args->severity), "grpc: {}:{} {}",
              LogSafe(args->file != nullptr ? args->file : "?"), args->line,
              LogSafe(args->message != nullptr ? args->message : ""));
}

}  // namespace

void RouteGrpcLogToSpdlog() { gpr_set_log_function(Log); }

}  // namespace ctxsel::server
