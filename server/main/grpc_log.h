// grpc_log.h: gRPC core's own log lines (gpr_log: HPACK and transport
// errors, which quote header names and values a client chose) go through
// the server's spdlog logger, escaped by the one rule for client-chosen
// text (server/model/log_text.h), so that a raw header cannot forge a line
// in the server's log.
//
//   spdlog::set_default_logger(...);
//   RouteGrpcLogToSpdlog();  // before the first gRPC call
#ifndef CTXSEL_SERVER_MAIN_GRPC_LOG_H_
#define CTXSEL_SERVER_MAIN_GRPC_LOG_H_

namespace ctxsel::server {

// From now on every line gRPC core logs goes to spdlog's default logger
// ("grpc: FILE:LINE MESSAGE", escaped with LogSafe) at the matching level
// (gRPC's DEBUG, INFO and ERROR as spdlog's debug, info and error). Which
// lines gRPC logs at all is still set by GRPC_VERBOSITY (ERROR by default).
void RouteGrpcLogToSpdlog();

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_MAIN_GRPC_LOG_H_
