#include "tests/testing/etcd_cluster.h"

#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "server/store/etcd/etcd_client.h"

namespace ctxsel::testing {
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(30);
// The replicas' client certificate (its CN is no etcd user: alone it grants
// nothing once authentication is on).
constexpr char kReplicaCert[] = "ctxsel-replica";

std::string PeerUrl(int port) {
  return absl::StrCat("http://127.0.0.1:", port);
}

// A fresh channel to `endpoint` with subchannels of its own: a channel
// that failed to connect waits out a growing backoff before trying again,
// and would see a member seconds late.
std::shared_ptr<grpc::Channel> FreshChannel(
    const std::string& endpoint,
    const std::shared_ptr<grpc::ChannelCredentials>& credentials) {
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(endpoint, credentials, arguments);
}

// Maintenance.Status of the member at `endpoint` (answered by the member
// itself, with or without a leader), within 500 ms.
grpc::Status MemberStatus(const std::shared_ptr<grpc::Channel>& channel,
                          etcdserverpb::StatusResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(500));
  return etcdserverpb::Maintenance::NewStub(channel)->Status(
      &context, etcdserverpb::StatusRequest(), response);
}

// Polls the member at `endpoint` until it answers (with a leader, if
// `need_leader`), then checks that the etcd answering is the one started,
// whose peer URL is `peer_url`: when another process (another test's etcd)
// took the client port first, ours exits, but until it does the other one
// would answer here. The member's id on success.
absl::StatusOr<uint64_t> WaitForMember(
    const std::string& endpoint,
    const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const std::string& peer_url, bool need_leader, Subprocess& process,
    std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!process.Running()) return absl::UnavailableError("etcd exited");
    auto channel = FreshChannel(endpoint, credentials);
    etcdserverpb::StatusResponse response;
    grpc::Status status = MemberStatus(channel, &response);
    if (status.ok() && (!need_leader || response.leader() != 0)) {
      grpc::ClientContext members_context;
      members_context.set_deadline(std::chrono::system_clock::now() +
                                   std::chrono::milliseconds(500));
      etcdserverpb::MemberListResponse members;
      status = etcdserverpb::Cluster::NewStub(channel)->MemberList(
          &members_context, etcdserverpb::MemberListRequest(), &members);
      if (status.ok()) {
        for (const etcdserverpb::Member& member : members.members()) {
          for (const std::string& url : member.peerurls()) {
            if (url == peer_url) return response.header().member_id();
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

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(
    int members, EtcdOptions options) {
  if (members < 1) return absl::InvalidArgumentError("no etcd member");
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster());
  cluster->members_.resize(members);
  cluster->options_ = options;
  if (options.tls) {
    cluster->pki_ = MakeTempDir("etcd-pki");
    CommandResult made =
        RunCommand({"/bin/bash", RunfilePath("tools/make_certs.sh"),
                    cluster->pki_, kReplicaCert});
    if (made.exit_code != 0) {
      return absl::InternalError("make_certs.sh: " + made.stderr_text);
    }
  }
  static std::atomic<int> clusters{0};
  absl::Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    // A token of its own per attempt: members of a failed attempt that
    // linger never join this one.
    last = cluster->LaunchAll(
        absl::StrCat("ctxsel-test-", getpid(), "-", clusters++));
    if (last.ok()) return cluster;
    cluster->KillAll();  // lost a port to someone else: all anew
  }
  std::string logs;
  for (int i = 0; i < members; ++i) {
    absl::StrAppend(&logs, "\n--- ", cluster->members_[i].name, " log:\n",
                    cluster->Log(i));
  }
  return absl::UnavailableError(
      absl::StrCat("etcd cluster did not start: ", last.ToString(), logs));
}

absl::Status EtcdCluster::LaunchAll(const std::string& token) {
  token_ = token;
  base_ = MakeTempDir("etcd");
  if (base_.empty()) return absl::InternalError("cannot make a temp dir");
  std::set<int> ports;
  while (ports.size() < 2 * members_.size()) {
    absl::StatusOr<int> port = FreeLoopbackPort();
    if (!port.ok()) return port.status();
    ports.insert(*port);
  }
  auto next_port = ports.begin();
  for (size_t i = 0; i < members_.size(); ++i) {
    Member& m = members_[i];
    m.name = absl::StrCat("m", i);
    m.dir = absl::StrCat(base_, "/", m.name);
    m.log_path = m.dir + ".log";
    m.client_port = *next_port++;
    m.peer_port = *next_port++;
    m.endpoint = absl::StrCat("127.0.0.1:", m.client_port);
    if (mkdir(m.dir.c_str(), 0700) != 0) {
      return absl::ErrnoToStatus(errno, "mkdir " + m.dir);
    }
  }
  for (size_t i = 0; i < members_.size(); ++i) {
    if (absl::Status s = Spawn(i, "new"); !s.ok()) return s;
  }
  for (Member& m : members_) {
    absl::StatusOr<uint64_t> id =
        WaitForMember(m.endpoint, ClientCredentials(), PeerUrl(m.peer_port),
                      /*need_leader=*/true, *m.process, kStartTimeout);
    if (!id.ok()) return id.status();
    m.id = *id;
  }
  return absl::OkStatus();
}

std::string EtcdCluster::InitialCluster() const {
  std::vector<std::string> peers;
  for (const Member& m : members_) {
    peers.push_back(absl::StrCat(m.name, "=", PeerUrl(m.peer_port)));
  }
  return absl::StrJoin(peers, ",");
}

absl::Status EtcdCluster::Spawn(int i, const std::string& state) {
  Member& m = members_[i];
  const std::string client_url =
      (options_.tls ? "https://" : "http://") + m.endpoint;
  const std::string peer_url = PeerUrl(m.peer_port);
  // A restarted member finds the cluster in its data directory; the
  // --initial-* flags only matter the first time.
  std::vector<std::string> argv = {"/usr/bin/etcd",
                                   "--name=" + m.name,
                                   "--data-dir=" + m.dir,
                                   "--listen-client-urls=" + client_url,
                                   "--advertise-client-urls=" + client_url,
                                   "--listen-peer-urls=" + peer_url,
                                   "--initial-advertise-peer-urls=" + peer_url,
                                   "--initial-cluster=" + InitialCluster(),
                                   "--initial-cluster-state=" + state,
                                   "--initial-cluster-token=" + token_,
                                   "--logger=zap",
                                   "--log-outputs=stderr"};
  if (options_.tls) {
    // Peers stay plaintext on loopback: the client port is what a
    // replica, or an attacker, reaches.
    argv.insert(argv.end(),
                {"--cert-file=" + pki_ + "/server.pem",
                 "--key-file=" + pki_ + "/server.key", "--client-cert-auth",
                 "--trusted-ca-file=" + pki_ + "/ca.pem"});
  }
  auto process = Subprocess::Start(argv, m.log_path, m.log_path);
  if (!process.ok()) return process.status();
  m.process = *std::move(process);
  m.paused = false;
  return absl::OkStatus();
}

server::etcd::EtcdClientOptions EtcdCluster::ClientOptions() const {
  server::etcd::EtcdClientOptions client;
  if (!options_.tls) return client;
  client.security.ca_pem = ReadFileOrEmpty(pki_ + "/ca.pem");
  client.security.cert_pem =
      ReadFileOrEmpty(absl::StrCat(pki_, "/", kReplicaCert, ".pem"));
  client.security.key_pem =
      ReadFileOrEmpty(absl::StrCat(pki_, "/", kReplicaCert, ".key"));
  return client;
}

std::shared_ptr<grpc::ChannelCredentials> EtcdCluster::ClientCredentials()
    const {
  if (!options_.tls) return grpc::InsecureChannelCredentials();
  const server::etcd::EtcdSecurity security = ClientOptions().security;
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = security.ca_pem;
  ssl.pem_cert_chain = security.cert_pem;
  ssl.pem_private_key = security.key_pem;
  return grpc::SslCredentials(ssl);
}

std::vector<std::string> EtcdCluster::ServerFlags() const {
  std::vector<std::string> flags = {"--store=" + StoreUrl()};
  if (options_.tls) {
    flags.insert(
        flags.end(),
        {"--etcd_ca=" + pki_ + "/ca.pem",
         absl::StrCat("--etcd_cert=", pki_, "/", kReplicaCert, ".pem"),
         absl::StrCat("--etcd_key=", pki_, "/", kReplicaCert, ".key")});
  }
  return flags;
}

absl::Status EtcdCluster::EnableAuth(const std::string& root_password,
                                     const std::string& user,
                                     const std::string& password,
                                     const std::string& prefix) {
  if (!options_.tls) {
    return absl::FailedPreconditionError("etcd auth here needs TLS");
  }
  auto auth = etcdserverpb::Auth::NewStub(
      FreshChannel(members_[0].endpoint, ClientCredentials()));
  etcdserverpb::AuthUserAddRequest root;
  root.set_name("root");
  root.set_password(root_password);
  etcdserverpb::AuthUserAddResponse root_added;
  etcdserverpb::AuthUserGrantRoleRequest root_role;
  root_role.set_user("root");
  root_role.set_role("root");
  etcdserverpb::AuthUserGrantRoleResponse root_granted;
  etcdserverpb::AuthRoleAddRequest role;
  role.set_name(user);
  etcdserverpb::AuthRoleAddResponse role_added;
  etcdserverpb::AuthRoleGrantPermissionRequest permission;
  permission.set_name(user);
  permission.mutable_perm()->set_permtype(authpb::Permission::READWRITE);
  permission.mutable_perm()->set_key(prefix);
  permission.mutable_perm()->set_range_end(server::etcd::PrefixEnd(prefix));
  etcdserverpb::AuthRoleGrantPermissionResponse permitted;
  etcdserverpb::AuthUserAddRequest added;
  added.set_name(user);
  added.set_password(password);
  etcdserverpb::AuthUserAddResponse user_added;
  etcdserverpb::AuthUserGrantRoleRequest user_role;
  user_role.set_user(user);
  user_role.set_role(user);
  etcdserverpb::AuthUserGrantRoleResponse user_granted;
  etcdserverpb::AuthEnableResponse enabled;
  using Call = std::function<grpc::Status(grpc::ClientContext*)>;
  // In the order docs/deployment.md gives etcdctl's commands.
  const std::pair<const char*, Call> steps[] = {
      {"user add root",
       [&](auto* c) { return auth->UserAdd(c, root, &root_added); }},
      {"user grant-role root root",
       [&](auto* c) {
         return auth->UserGrantRole(c, root_role, &root_granted);
       }},
      {"role add",
       [&](auto* c) { return auth->RoleAdd(c, role, &role_added); }},
      {"role grant-permission",
       [&](auto* c) {
         return auth->RoleGrantPermission(c, permission, &permitted);
       }},
      {"user add",
       [&](auto* c) { return auth->UserAdd(c, added, &user_added); }},
      {"user grant-role",
       [&](auto* c) {
         return auth->UserGrantRole(c, user_role, &user_granted);
       }},
      {"auth enable",
       [&](auto* c) {
         return auth->AuthEnable(c, etcdserverpb::AuthEnableRequest(),
                                 &enabled);
       }},
  };
  for (const auto& [what, call] : steps) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    grpc::Status status = call(&context);
    if (!status.ok()) {
      return absl::UnknownError(
          absl::StrCat("etcd ", what, ": ", status.error_message()));
    }
  }
  return absl::OkStatus();
}

std::string EtcdCluster::StoreUrl() const {
  std::vector<std::string> endpoints;
  for (const Member& m : members_) endpoints.push_back(m.endpoint);
  return "etcd://" + absl::StrJoin(endpoints, ",");
}

void EtcdCluster::Kill(int i) {
  Member& m = members_[i];
  if (m.process == nullptr) return;
  m.process->Signal(SIGKILL);
  m.process->Wait(std::chrono::seconds(10));
  m.process.reset();
  m.paused = false;
}

void EtcdCluster::KillAll() {
  for (size_t i = 0; i < members_.size(); ++i) Kill(i);
}

absl::Status EtcdCluster::Restart(int i) {
  Kill(i);
  Member& m = members_[i];
  if (absl::Status s = Spawn(i, "existing"); !s.ok()) return s;
  absl::StatusOr<uint64_t> id =
      WaitForMember(m.endpoint, ClientCredentials(), PeerUrl(m.peer_port),
                    /*need_leader=*/false, *m.process, kStartTimeout);
  if (!id.ok()) {
    return absl::Status(
        id.status().code(),
        absl::StrCat(m.name, " did not restart: ", id.status().message(),
                     "; log:\n", Log(i)));
  }
  return absl::OkStatus();
}

void EtcdCluster::Pause(int i) {
  Member& m = members_[i];
  if (m.process == nullptr || m.paused) return;
  // Returns once the member has stopped (Subprocess::Stop), so the
  // caller's next call cannot still reach it.
  m.paused = true;
  m.process->Stop();
}

void EtcdCluster::Resume(int i) {
  Member& m = members_[i];
  if (m.process == nullptr || !m.paused) return;
  m.process->Signal(SIGCONT);
  m.paused = false;
}

absl::StatusOr<int> EtcdCluster::Leader() {
  std::set<uint64_t> named;
  for (const Member& m : members_) {
    if (m.process == nullptr || m.paused) continue;
    etcdserverpb::StatusResponse response;
    grpc::Status status =
        MemberStatus(FreshChannel(m.endpoint, ClientCredentials()), &response);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat(m.name, " does not answer: ", status.error_message()));
    }
    named.insert(response.leader());
  }
  if (named.size() != 1 || *named.begin() == 0) {
    return absl::UnavailableError("the members name no common leader");
  }
  // Members go on naming a leader that died or stopped until their
  // election timeout: only a running one counts.
  for (size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    if (m.id == *named.begin() && m.process != nullptr && !m.paused) {
      return static_cast<int>(i);
    }
  }
  return absl::UnavailableError("the members name a leader that is gone");
}

absl::Status EtcdCluster::WaitForLeader(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  absl::StatusOr<int> leader;
  while (!(leader = Leader()).ok()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("no etcd leader in time: ", leader.status().message()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::OkStatus();
}

}  // namespace ctxsel::testing
