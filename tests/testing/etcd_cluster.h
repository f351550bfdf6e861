// Starts a real etcd cluster (Debian's etcd-server, tools/setup.sh) of one
// or more members on loopback for a test, each member in a fresh data
// directory (mode 0700) of its own, and waits until every member answers
// and the cluster has a leader. Fault-injection tests then kill, restart,
// pause and resume single members.
//
// etcd cannot listen on port 0, so free ports are found by binding
// 127.0.0.1:0 and closing; a start that loses a port to another process
// (seen by a member exiting, or by another etcd answering on a member's
// client port) is retried with new ports and new data directories.
// Restart() reuses the member's ports and data and fails if a port was
// taken meanwhile.
//
// The client port serves TLS and asks for client certificates
// (--client-cert-auth), as docs/deployment.md ("Securing etcd") runs it:
// tools/make_certs.sh makes, in a directory of the cluster's own, the CA
// (ca.pem), etcd's certificate (server.pem: localhost, 127.0.0.1) and the
// replicas' client certificate (ctxsel-replica.pem, CN ctxsel-replica).
// ServerFlags() passes them to ctxsel-server. EtcdOptions::tls = false
// serves plaintext instead. EnableAuth() turns etcd authentication on.
//
//   auto etcd = EtcdCluster::Start(3);
//   ASSERT_TRUE(etcd.ok()) << etcd.status();
//   ServerProcess::Start({"--store=" + (*etcd)->StoreUrl()});
//   (*etcd)->Kill(0);                        // a member is lost
//   (*etcd)->Kill(1);                        // ... and quorum with it
//   ASSERT_TRUE((*etcd)->Restart(0).ok());   // same ports, same data
//   ASSERT_TRUE((*etcd)->Restart(1).ok());
//   ASSERT_TRUE((*etcd)->WaitForLeader(std::chrono::seconds(20)).ok());
//   absl::StatusOr<int> leader = (*etcd)->Leader();
//   (*etcd)->Pause(*leader);                 // SIGSTOP; Resume: SIGCONT
//
// Thread safety: none; one thread drives the cluster.
#ifndef CTXSEL_TESTS_TESTING_ETCD_CLUSTER_H_
#define CTXSEL_TESTS_TESTING_ETCD_CLUSTER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/store/etcd/etcd_client.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {

struct EtcdOptions {
  // TLS with client certificates on the client port; false: plaintext.
  bool tls = true;
};

class EtcdCluster {
 public:
  static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(
      int members, EtcdOptions options = {});

  int size() const { return static_cast<int>(members_.size()); }
  // host:port of member `i`'s client API, e.g. "127.0.0.1:41234".
  const std::string& endpoint(int i) const { return members_[i].endpoint; }
  // "etcd://" and every member's endpoint, as --store takes it.
  std::string StoreUrl() const;
  // --store=StoreUrl() and, with TLS, --etcd_ca, --etcd_cert and --etcd_key
  // (the replicas' client certificate): the ctxsel-server flags that reach
  // this cluster.
  std::vector<std::string> ServerFlags() const;
  // The directory of make_certs.sh's files (empty without TLS): ca.pem,
  // server.pem/.key (etcd's), ctxsel-replica.pem/.key.
  const std::string& pki_dir() const { return pki_; }
  // Credentials for a test's own channel to a member: the CA and the
  // replicas' client certificate, or plaintext.
  std::shared_ptr<grpc::ChannelCredentials> ClientCredentials() const;
  // The same for an in-process EtcdClient or EtcdStore.
  server::etcd::EtcdClientOptions ClientOptions() const;

  // Turns etcd authentication on: a root user (password `root_password`),
  // and `user` (password `password`) with a role that may read and write
  // the keys under `prefix` and nothing else. Needs TLS.
  absl::Status EnableAuth(const std::string& root_password,
                          const std::string& user, const std::string& password,
                          const std::string& prefix);

  // SIGKILL member `i`, and wait for the process to be gone.
  void Kill(int i);
  // Starts member `i` again (after Kill) on the same ports and data, and
  // waits until it answers; it need not have a leader (its peers may be
  // down): WaitForLeader() waits for one.
  absl::Status Restart(int i);
  // SIGSTOP / SIGCONT member `i`: it keeps its sockets but answers nothing.
  // Pause returns once every thread of the member has stopped.
  void Pause(int i);
  void Resume(int i);
  // Whether member `i` runs (started and not killed; a paused one runs).
  bool Running(int i) const { return members_[i].process != nullptr; }

  // The index of the member every running, unpaused member names as leader
  // (itself running and unpaused); UnavailableError when they name none,
  // disagree, or name one killed or paused here.
  absl::StatusOr<int> Leader();
  // Polls Leader() until it answers or `timeout` passes.
  absl::Status WaitForLeader(std::chrono::milliseconds timeout);

  std::string Log(int i) const { return ReadFileOrEmpty(members_[i].log_path); }

 private:
  struct Member {
    std::string name;  // "m0", "m1", ...
    std::string dir;   // data directory
    std::string log_path;
    int client_port = 0;
    int peer_port = 0;
    std::string endpoint;
    uint64_t id = 0;  // etcd's member id, learned from its answers
    bool paused = false;
    std::unique_ptr<Subprocess> process;
  };

  EtcdCluster() = default;
  // Picks fresh ports and data directories, starts every member and waits
  // for each to answer with a leader.
  absl::Status LaunchAll(const std::string& token);
  // Starts member `i`'s process with the cluster's flags.
  absl::Status Spawn(int i, const std::string& state);
  std::string InitialCluster() const;
  void KillAll();

  EtcdOptions options_;
  std::string pki_;
  std::string base_;
  std::string token_;
  std::vector<Member> members_;
};

// A port that was free on 127.0.0.1 a moment ago.
absl::StatusOr<int> FreeLoopbackPort();

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_ETCD_CLUSTER_H_
