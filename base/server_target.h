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

#include <string>

namespace ctxsel {

std::string ServerTarget(const std::string& servers);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_SERVER_TARGET_H_
