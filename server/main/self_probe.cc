#include "server/main/self_probe.h"

#include <string>
#include <utility>

#include "spdlog/spdlog.h"

namespace ctxsel::server {

SelfProbe::SelfProbe(SelfProbeOptions options,
                     std::function<absl::Status()> probe,
                     std::function<void()> passed,
                     std::function<void(const absl::Status&)> give_up)
    : options_(options),
      probe_(std::move(probe)),
      passed_(std::move(passed)),
      give_up_(std::move(give_up)),
      thread_([this] { Run(); }) {}

SelfProbe::~SelfProbe() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void SelfProbe::Run() {
  int failed = 0;
  absl::Time next = absl::Now();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      const auto stopped = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stop_;
      };
      if (mu_.AwaitWithDeadline(absl::Condition(&stopped), next)) return;
    }
    next = absl::Now() + options_.interval;
    const absl::Status status = probe_();
    if (status.ok()) {
      if (failed > 0) {
        spdlog::info("self-probe: new connections accepted again");
      }
      failed = 0;
      passed_();
      continue;
    }
    ++failed;
    spdlog::error("self-probe: a new connection failed ({} of {}): {}", failed,
                  options_.failures, std::string(status.message()));
    if (failed >= options_.failures) {
      give_up_(status);
      return;
    }
  }
}

}  // namespace ctxsel::server
