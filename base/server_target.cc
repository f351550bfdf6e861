#include "base/server_target.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/host_port.h"

namespace ctxsel {
namespace {

// "addr:port" (IPv4) or "[addr]:port" (IPv6) for each address of `host`
// in `family`.
std::vector<std::string> Resolve(const HostPort& where, int family) {
  std::vector<std::string> out;
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(where.host.c_str(), where.port.c_str(), &hints, &found) !=
      0) {
    return out;
  }
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* address =
        family == AF_INET
            ? static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
            : static_cast<const void*>(
                  &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
    if (inet_ntop(family, address, text, sizeof(text)) == nullptr) continue;
    std::string entry = family == AF_INET
                            ? absl::StrCat(text, ":", where.port)
                            : absl::StrCat("[", text, "]:", where.port);
    if (std::find(out.begin(), out.end(), entry) == out.end()) {
      out.push_back(std::move(entry));
    }
  }
  freeaddrinfo(found);
  return out;
}

}  // namespace

std::string ServerTarget(const std::string& servers) {
  std::vector<std::string> entries =
      absl::StrSplit(servers, ',', absl::SkipWhitespace());
  if (entries.size() <= 1) return servers;
  for (const char* scheme : {"ipv4:", "ipv6:"}) {
    const int family = scheme[3] == '4' ? AF_INET : AF_INET6;
    std::vector<std::string> addresses;
    for (const std::string& entry : entries) {
      absl::StatusOr<HostPort> where =
          ParseHostPort(absl::StripAsciiWhitespace(entry));
      if (!where.ok() || where->host.empty()) continue;
      for (std::string& a : Resolve(*where, family)) {
        addresses.push_back(std::move(a));
      }
    }
    if (!addresses.empty()) {
      return absl::StrCat(scheme, absl::StrJoin(addresses, ","));
    }
  }
  return std::string(absl::StripAsciiWhitespace(entries[0]));
}

std::vector<std::string> ServerList(const std::string& servers) {
  std::vector<std::string> out;
  for (absl::string_view entry :
       absl::StrSplit(servers, ',', absl::SkipWhitespace())) {
    out.emplace_back(absl::StripAsciiWhitespace(entry));
  }
  return out;
}

std::vector<std::shared_ptr<grpc::Channel>> ServerChannels(
    const std::string& servers,
    const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  std::vector<std::string> entries = ServerList(servers);
  if (entries.size() <= 1) {
    return {grpc::CreateChannel(ServerTarget(servers), credentials)};
  }
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (const std::string& entry : entries) {
    channels.push_back(grpc::CreateChannel(entry, credentials));
  }
  return channels;
}

ServerRotation::ServerRotation(const std::string& servers)
    : targets_(ServerList(servers)) {
  if (targets_.size() <= 1) targets_ = {servers};
}

const std::string& ServerRotation::Next() {
  return targets_[next_++ % targets_.size()];
}

}  // namespace ctxsel
