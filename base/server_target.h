// server_target.h: the one rule for turning --server (one address, a DNS
// name, or a list "a:7070,b:7070") into a gRPC channel target that fails
// over between the replicas (docs/deployment.md, "Clients"):
//   * one host:port is used as it is: gRPC's resolver gives every address
//     of a DNS name, and its pick_first policy connects to the first that
//     answers and moves to the next when that connection breaks;
//   * a list is resolved here into one static target with the same
//     failover: "ipv4:a:p,b:p" with every host's IPv4 addresses, or, when
//     no host has one, "ipv6:[a]:p,..." (a target has one scheme, so a
//     host with only IPv6 addresses beside IPv4 ones is left out). A host
//     that does not resolve is left out (all fail: the first entry as it
//     is, so the error names it).
//
//   grpc::CreateChannel(ServerTarget("10.0.0.1:7070,10.0.0.2:7070"), creds);
#ifndef CTXSEL_BASE_SERVER_TARGET_H_
#define CTXSEL_BASE_SERVER_TARGET_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

namespace ctxsel {

// The server a client or agent talks to when told none (no --server, no
// $CTXSEL_SERVER where the binary reads it): the one default of ctxsel-cli,
// ctxsel-agent, ctxsel-load and the docs, the server's own --listen
// default.
inline constexpr char kDefaultServer[] = "127.0.0.1:7070";

std::string ServerTarget(const std::string& servers);

// The entries of a --server list ("a:7070, b:7070" -> {"a:7070", "b:7070"}),
// as written.
std::vector<std::string> ServerList(const std::string& servers);

// One channel per entry of a --server list, for a client that fails over
// per call (client/ctxsel_client.h): each replica has a channel of its own,
// so that a replica that is paused or cut off can be passed over for the
// next call instead of holding a failing-over channel that still counts it
// connected (a paused process's kernel accepts connections). With TLS each
// channel is verified against its own entry's host name (one channel over
// the list would check every replica against "a:7070,b:7070" and fail).
// One address (or a DNS name) gives one channel to ServerTarget(servers).
//
//   auto replicas = ServerChannels("a:7070,b:7070", credentials);
//   CtxselClient client(replicas, std::chrono::seconds(5));
std::vector<std::shared_ptr<grpc::Channel>> ServerChannels(
    const std::string& servers,
    const std::shared_ptr<grpc::ChannelCredentials>& credentials);

// The target of each new channel a long-lived client (the agent) makes to
// `servers`: a list's entries in turn, one per channel (one address, or a
// DNS name, as it is). A replica the agent must leave while it still
// accepts connections (paused, or cut off from etcd and refusing beats)
// is passed over for the next entry; one failing-over channel over the
// whole list would connect to the same replica again. With TLS each entry
// is also verified against its own name. Not thread-safe: the caller
// serialises Next() (the agent's transport calls it under its own lock).
class ServerRotation {
 public:
  explicit ServerRotation(const std::string& servers);
  const std::string& Next();

 private:
  std::vector<std::string> targets_;
  size_t next_ = 0;
};

}  // namespace ctxsel

#endif  // CTXSEL_BASE_SERVER_TARGET_H_
