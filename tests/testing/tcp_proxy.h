// A TCP proxy on loopback that a test can switch to black-hole, to cut a
// process off the network while it keeps running: a partition. Give the
// process the proxy's address instead of the target's; Partition() then
// stops every byte in both directions on the open connections and on new
// ones (accepted, but nothing forwarded), so to both sides packets seem
// dropped, not refused: calls wait for their deadlines and keepalive pings
// go unanswered. Heal() forwards again, what was held included.
//
//   auto proxy = TcpProxy::Start(etcd->endpoint(0));
//   ServerProcess::Start({"--store=etcd://" + (*proxy)->address()});
//   (*proxy)->Partition();
//   ...
//   (*proxy)->Heal();
//
// Thread safety: every method may be called from any thread.
#ifndef CTXSEL_TESTS_TESTING_TCP_PROXY_H_
#define CTXSEL_TESTS_TESTING_TCP_PROXY_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ctxsel::testing {

class TcpProxy {
 public:
  // Listens on 127.0.0.1:0 and forwards each connection to `target`
  // ("127.0.0.1:PORT").
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(
      const std::string& target);
  ~TcpProxy();

  // "127.0.0.1:PORT" of the proxy.
  std::string address() const;
  void Partition() { partitioned_.store(true); }
  void Heal() { partitioned_.store(false); }

 private:
  TcpProxy(int listen_fd, int port, int target_port)
      : listen_fd_(listen_fd), port_(port), target_port_(target_port) {}
  void Accept();
  // Copies `from` to `to` until either closes; holds the bytes (reads
  // nothing) while partitioned.
  void Pump(int from, int to);

  const int listen_fd_;
  const int port_;
  const int target_port_;
  std::atomic<bool> partitioned_{false};
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> pumps_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_TCP_PROXY_H_
