// placement_bench: the cost of Placer::Select as the fleet grows.
//
// The fleet has 4 device classes (two H100 classes that differ in memory)
// and 3 node layouts at every size, so a Select should cost the same with
// 1k, 10k and 100k devices: it works per
// class and candidate, never per device. Also: each policy, a job
// restricted to named nodes, and one heartbeat (UpdateUtilisations).
// Each Select benchmark also reports `instructions` per Select (user space,
// bench/process_counters.h): unlike time, load does not change it.
//
//   bazel run -c opt //bench:placement_bench
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "bench/bench_fleet.h"
#include "bench/process_counters.h"
#include "benchmark/benchmark.h"
#include "server/placement/placer.h"

namespace ctxsel::bench {
namespace {

using server::Job;
using server::Policy;
using server::placement::Placer;

constexpr int kKernels = 1000;
constexpr int kVariants = 16;

// One loaded Placer per fleet size, built once and shared by benchmarks;
// every kernel's resolution is warmed up so that runs measure steady state.
const Placer& PlacerFor(int devices) {
  static auto* placers = new std::map<int, std::unique_ptr<Placer>>;
  std::unique_ptr<Placer>& p = (*placers)[devices];
  if (p == nullptr) {
    // Debian's Abseil checks lock order on every Mutex acquisition (a debug
    // aid); a production server turns that off, and so does the bench.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    p = std::make_unique<Placer>();
    LoadFleet(*p, devices / kDevicesPerNode);
    LoadKernels(*p, kKernels, kVariants);
    for (int k = 0; k < kKernels; ++k) p->Select(BenchJob(k)).IgnoreError();
  }
  return *p;
}

std::vector<Job> Jobs(Policy policy) {
  std::vector<Job> jobs;
  for (int k = 0; k < kKernels; ++k) {
    jobs.push_back(BenchJob(k));
    jobs.back().policy = policy;
  }
  return jobs;
}

void RunSelects(benchmark::State& state, const Placer& placer,
                const std::vector<Job>& jobs) {
  size_t i = 0;
  ProcessCounters counters;
  const ProcessCounters::Values start = counters.Read();
  for (auto _ : state) {
    auto p = placer.Select(jobs[i]);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
    benchmark::DoNotOptimize(p);
    if (++i == jobs.size()) i = 0;
  }
  if (counters.user_ok()) {
    state.counters["instructions"] =
        benchmark::Counter((counters.Read() - start).user_instructions,
                           benchmark::Counter::kAvgIterations);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Select(benchmark::State& state) {
  const Placer& placer = PlacerFor(static_cast<int>(state.range(0)));
  RunSelects(state, placer, Jobs(static_cast<Policy>(state.range(1))));
  state.SetLabel(absl::StrCat(state.range(0), " devices"));
}
BENCHMARK(BM_Select)
    ->ArgNames({"devices", "policy"})
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->Args({100000, 0})
    ->Args({100000, 1})
    ->Args({100000, 2});

// As a launcher's `select --format=env` asks: no explanation text.
void BM_SelectWithoutExplanation(benchmark::State& state) {
  const Placer& placer = PlacerFor(static_cast<int>(state.range(0)));
  std::vector<Job> jobs = Jobs(Policy::kLeastLoaded);
  for (Job& job : jobs) job.explanation = false;
  RunSelects(state, placer, jobs);
}
BENCHMARK(BM_SelectWithoutExplanation)->Arg(1000)->Arg(100000);

void BM_SelectOnNamedNodes(benchmark::State& state) {
  const Placer& placer = PlacerFor(100000);
  std::vector<Job> jobs = Jobs(Policy::kLeastLoaded);
  for (Job& job : jobs) job.nodes = {"node17", "node4242"};
  RunSelects(state, placer, jobs);
}
BENCHMARK(BM_SelectOnNamedNodes);

void BM_SelectWithFilter(benchmark::State& state) {
  const Placer& placer = PlacerFor(100000);
  std::vector<Job> jobs = Jobs(Policy::kLeastLoaded);
  for (Job& job : jobs) job.device_filter = "device={kind(gpu)}";
  RunSelects(state, placer, jobs);
}
BENCHMARK(BM_SelectWithFilter);

// One heartbeat: every device of one node, as the inventory hands it over.
void BM_Heartbeat(benchmark::State& state) {
  Placer& placer =
      const_cast<Placer&>(PlacerFor(static_cast<int>(state.range(0))));
  const int nodes = static_cast<int>(state.range(0)) / kDevicesPerNode;
  struct Beat {
    std::string node;
    std::vector<std::pair<std::string, double>> updates;
  };
  std::vector<Beat> beats;
  for (int n = 0; n < nodes; n += 13) {
    Beat beat{absl::StrCat("node", n), {}};
    for (int d = 0; d < kDevicesPerNode; ++d) {
      beat.updates.emplace_back(absl::StrCat(beat.node, "/", d),
                                (n + d) % 100 / 100.0);
    }
    beats.push_back(std::move(beat));
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        placer.UpdateUtilisations(beats[i].node, beats[i].updates));
    if (++i == beats.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Heartbeat)->Arg(1000)->Arg(100000);

}  // namespace
}  // namespace ctxsel::bench
