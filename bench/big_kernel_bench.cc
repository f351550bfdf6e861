// big_kernel_bench: a kernel with tens of thousands of conditional
// variants, the shape anyone allowed to register variants can send.
//
// BM_FirstSelectBigKernel: the first Select of a job on such a kernel, which
// resolves it for each device class (later Selects hit the cache).
// BM_HeartbeatDuringFirstSelect: the slowest heartbeat (UpdateUtilisations)
// of a node while another thread makes that first Select; "beat_max_ms"
// stays far below "select_ms" only when resolution runs off the fleet lock.
//
//   bazel run -c opt //bench:big_kernel_bench
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_fleet.h"
#include "benchmark/benchmark.h"
#include "selector/selector.h"
#include "server/placement/placer.h"

namespace ctxsel::bench {
namespace {

using server::placement::Placer;

// n variants, each with its own condition on one GPU arch: the strict-subset
// pass's worst shape, and every one of them in the dynamic prefix.
const std::vector<server::Variant>& BigKernel(int n) {
  static auto* kernels = new std::map<int, std::vector<server::Variant>>;
  std::vector<server::Variant>& list = (*kernels)[n];
  if (list.empty()) {
    for (int v = 0; v < n; ++v) {
      std::string text =
          absl::StrCat("device={arch(nvptx)}, user={condition(N > ", v, ")}");
      list.push_back(server::Variant{"big",
                                     absl::StrCat("big_v", v),
                                     text,
                                     *selector::Selector::Parse(text),
                                     v,
                                     1,
                                     {}});
    }
  }
  return list;
}

// A fleet of 4 device classes (bench_fleet.h) and the big kernel, nothing
// resolved yet.
std::unique_ptr<Placer> FreshPlacer(int variants) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto placer = std::make_unique<Placer>();
  LoadFleet(*placer, /*nodes=*/4);
  if (!placer->SetVariants("big", BigKernel(variants)).ok()) std::abort();
  return placer;
}

server::Job BigJob() {
  server::Job job;
  job.kernel = "big";
  job.variables["N"] = 4096;
  return job;
}

void BM_FirstSelectBigKernel(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Placer> placer =
        FreshPlacer(static_cast<int>(state.range(0)));
    state.ResumeTiming();
    if (!placer->Select(BigJob()).ok()) state.SkipWithError("select failed");
    state.PauseTiming();
    placer.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_FirstSelectBigKernel)
    ->Arg(4000)
    ->Arg(40000)
    ->Unit(benchmark::kMillisecond);

void BM_HeartbeatDuringFirstSelect(benchmark::State& state) {
  const std::vector<std::pair<std::string, double>> beat = {{"node0/0", 0.5}};
  double beat_max = 0, select_total = 0;
  for (auto _ : state) {
    std::unique_ptr<Placer> placer =
        FreshPlacer(static_cast<int>(state.range(0)));
    std::atomic<bool> done{false};
    absl::Duration took;
    std::thread select([&] {
      const absl::Time start = absl::Now();
      placer->Select(BigJob()).IgnoreError();
      took = absl::Now() - start;
      done = true;
    });
    absl::Duration slowest;
    while (!done) {
      const absl::Time start = absl::Now();
      placer->UpdateUtilisations("node0", beat).IgnoreError();
      slowest = std::max(slowest, absl::Now() - start);
      absl::SleepFor(absl::Microseconds(200));
    }
    select.join();
    beat_max = std::max(beat_max, absl::ToDoubleMilliseconds(slowest));
    select_total += absl::ToDoubleMilliseconds(took);
  }
  state.counters["beat_max_ms"] = beat_max;
  state.counters["select_ms"] =
      select_total / static_cast<double>(state.iterations());
}
BENCHMARK(BM_HeartbeatDuringFirstSelect)
    ->Arg(40000)
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ctxsel::bench
