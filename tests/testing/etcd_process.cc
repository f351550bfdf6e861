#include "tests/testing/etcd_process.h"

#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace ctxsel::testing {
namespace {

// A port that was free on 127.0.0.1 a moment ago.
absl::StatusOr<int> FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    absl::Status error = absl::ErrnoToStatus(errno, "bind 127.0.0.1:0");
    close(fd);
    return error;
  }
  close(fd);
  return ntohs(address.sin_port);
}

// Polls etcd's Maintenance.Status until it answers, then checks that the
// etcd answering is the one started, whose peer URL is `peer_url`: when
// another process (another test's etcd) took the client port first, ours
// exits, but until it does the other one would answer here.
absl::Status WaitForEtcd(const std::string& endpoint,
                         const std::string& peer_url, Subprocess& process,
                         std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process.Running()) return absl::UnavailableError("etcd exited");
    // A fresh channel each time, with subchannels of its own: a channel
    // that failed to connect waits out a growing backoff before trying
    // again, and would see etcd seconds late.
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel = grpc::CreateCustomChannel(
        endpoint, grpc::InsecureChannelCredentials(), arguments);
    auto stub = etcdserverpb::Maintenance::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(500));
    etcdserverpb::StatusResponse response;
    grpc::Status status =
        stub->Status(&context, etcdserverpb::StatusRequest(), &response);
    if (status.ok() && response.leader() != 0) {
      grpc::ClientContext members_context;
      members_context.set_deadline(std::chrono::system_clock::now() +
                                   std::chrono::milliseconds(500));
      etcdserverpb::MemberListResponse members;
      status = etcdserverpb::Cluster::NewStub(channel)->MemberList(
          &members_context, etcdserverpb::MemberListRequest(), &members);
      if (status.ok()) {
        for (const etcdserverpb::Member& member : members.members()) {
          for (const std::string& url : member.peerurls()) {
            if (url == peer_url) return absl::OkStatus();
          }
        }
        return absl::UnavailableError(absl::StrCat("another etcd answers at ",
                                                   endpoint, " (port taken)"));
      }
    }
    last_error = status.ok() ? "no leader yet" : status.error_message();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("etcd at ", endpoint, " not ready: ", last_error));
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdProcess>> EtcdProcess::Start() {
  std::unique_ptr<EtcdProcess> etcd(new EtcdProcess());
  const std::string base = MakeTempDir("etcd");
  if (base.empty()) return absl::InternalError("cannot make a temp dir");
  etcd->log_path_ = base + "/etcd.log";
  etcd->dir_ = base + "/data";
  if (mkdir(etcd->dir_.c_str(), 0700) != 0) {
    return absl::ErrnoToStatus(errno, "mkdir " + etcd->dir_);
  }
  absl::Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    absl::StatusOr<int> client = FreeLoopbackPort();
    absl::StatusOr<int> peer = FreeLoopbackPort();
    if (!client.ok()) return client.status();
    if (!peer.ok()) return peer.status();
    if (*client == *peer) continue;
    etcd->client_port_ = *client;
    etcd->peer_port_ = *peer;
    last = etcd->Launch();
    if (last.ok()) return etcd;
    etcd->Kill();  // lost a port to someone else: new ports, same dir
  }
  return absl::UnavailableError(absl::StrCat(
      "etcd did not start: ", last.ToString(), "; log:\n", etcd->Log()));
}

absl::Status EtcdProcess::Launch() {
  endpoint_ = absl::StrCat("127.0.0.1:", client_port_);
  const std::string client_url = "http://" + endpoint_;
  const std::string peer_url = absl::StrCat("http://127.0.0.1:", peer_port_);
  auto process =
      Subprocess::Start({"/usr/bin/etcd", "--name=test", "--data-dir=" + dir_,
                         "--listen-client-urls=" + client_url,
                         "--advertise-client-urls=" + client_url,
                         "--listen-peer-urls=" + peer_url,
                         "--initial-advertise-peer-urls=" + peer_url,
                         "--initial-cluster=test=" + peer_url, "--logger=zap",
                         "--log-outputs=stderr"},
                        log_path_, log_path_);
  if (!process.ok()) return process.status();
  process_ = *std::move(process);
  return WaitForEtcd(endpoint_, peer_url, *process_, std::chrono::seconds(20));
}

void EtcdProcess::Kill() {
  if (process_ == nullptr) return;
  process_->Signal(SIGKILL);
  process_->Wait(std::chrono::seconds(10));
  process_.reset();
}

absl::Status EtcdProcess::Restart() {
  Kill();
  return Launch();
}

}  // namespace ctxsel::testing
