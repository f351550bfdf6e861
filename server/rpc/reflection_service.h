// reflection_service.h: gRPC server reflection (grpc.reflection.v1alpha,
// the version gRPC 1.51's own plugin serves and grpcurl and Python's
// reflection clients speak), on gRPC's callback API and behind the
// Authorizer like any other read. gRPC's plugin is a synchronous service
// that anyone may call: each open stream held a server thread, and 64 of
// them, without credentials, stopped every Select (issue 23). ctxsel-server
// serves this one only with --reflection.
//
//   ReflectionService reflection(&authorizer, {"ctxsel.v1.Placement", ...});
//   builder.RegisterService(&reflection);
#ifndef CTXSEL_SERVER_RPC_REFLECTION_SERVICE_H_
#define CTXSEL_SERVER_RPC_REFLECTION_SERVICE_H_

#include <string>
#include <vector>

#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "server/access/auth.h"

namespace ctxsel::server {

namespace reflection = ::grpc::reflection::v1alpha;

// The answer to one reflection request, from the descriptors compiled into
// this binary: `services` for list_services; a file with every file it
// imports (transitively) for file_by_filename, file_containing_symbol and
// file_containing_extension; the extension numbers of a message type. An
// error_response NOT_FOUND names what is not known, UNIMPLEMENTED a request
// of no known kind.
reflection::ServerReflectionResponse ReflectionAnswer(
    const reflection::ServerReflectionRequest& request,
    const std::vector<std::string>& services);

class ReflectionService final
    : public reflection::ServerReflection::CallbackService {
 public:
  // Lists `services` (full names). Every stream is checked by `authorizer`,
  // which must outlive the service, counts against its principal's stream
  // limit, and ends (UNAUTHENTICATED) when a reload revokes its credential.
  ReflectionService(const Authorizer* authorizer,
                    std::vector<std::string> services)
      : authorizer_(authorizer), services_(std::move(services)) {}

  grpc::ServerBidiReactor<reflection::ServerReflectionRequest,
                          reflection::ServerReflectionResponse>*
  ServerReflectionInfo(grpc::CallbackServerContext* context) override;

 private:
  const Authorizer* const authorizer_;
  const std::vector<std::string> services_;
};

}  // namespace ctxsel::server

#endif  // CTXSEL_SERVER_RPC_REFLECTION_SERVICE_H_
