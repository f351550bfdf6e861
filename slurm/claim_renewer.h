// claim_renewer.h: keeps a step's claims alive while its tasks run.
//
// The plugin claims each device for plugstack.conf's claim= (10 minutes by
// default) rather than for the longest job, so that the claims of a
// slurmstepd that dies without releasing end soon; this renews them at half
// that period until they are released.
//
//   ClaimRenewer renewer(client, absl::Minutes(10), log_error);
//   renewer.Add("c-5f1e...");      // renewed every 5 minutes from now on
//   renewer.Remove("c-5f1e...");   // released by the caller
//   // ~ClaimRenewer stops the thread and waits for it.
#ifndef CTXSEL_SLURM_CLAIM_RENEWER_H_
#define CTXSEL_SLURM_CLAIM_RENEWER_H_

#include <functional>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/ctxsel_client.h"

namespace ctxsel::slurm {

class ClaimRenewer {
 public:
  // Called from the renewing thread for each renewal that fails.
  using OnError =
      std::function<void(const std::string& claim_id, const absl::Status&)>;

  // Renews every `claim / 2` through `client`, which must outlive this.
  ClaimRenewer(client::CtxselClient& client, absl::Duration claim,
               OnError on_error);
  ~ClaimRenewer();
  ClaimRenewer(const ClaimRenewer&) = delete;
  ClaimRenewer& operator=(const ClaimRenewer&) = delete;

  void Add(const std::string& claim_id);
  void Remove(const std::string& claim_id);

 private:
  void Run();

  client::CtxselClient& client_;
  const absl::Duration claim_;
  const OnError on_error_;
  absl::Mutex mu_;
  std::set<std::string> claims_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ctxsel::slurm

#endif  // CTXSEL_SLURM_CLAIM_RENEWER_H_
