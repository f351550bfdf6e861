// report_bench: what one node costs the server when it reports and beats —
// the hardening figures of docs/operations.md.
//
//   BM_ReportDistinctDevices/n  a node of n devices whose traits all differ
//                               (n device classes), reported through the
//                               inventory into placement; rss_mib is the
//                               memory the report left behind.
//   BM_BeatOfBigNode/n          one heartbeat naming every device of an
//                               n-device node: the time placement's fleet
//                               lock is held, which a Select waits for.
//
//   bazel run -c opt //bench:report_bench
#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"
#include "server/fleet/inventory.h"
#include "server/placement/placer.h"
#include "server/placement/placer_bridge.h"

namespace ctxsel::bench {
namespace {

using server::Device;
using server::Inventory;
using server::NodeState;

double RssMib() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<double>(resident) * sysconf(_SC_PAGESIZE) / (1 << 20);
}

NodeState DistinctNode(int devices) {
  NodeState node;
  node.id = "big";
  for (int i = 0; i < devices; ++i) {
    Device d;
    d.index = i;
    d.traits.kind = {"gpu", "nohost"};
    d.traits.arch = {"arch" + std::to_string(i)};
    d.traits.isa = {"isa" + std::to_string(i)};
    d.traits.vendor = {"vendor"};
    node.devices.push_back(std::move(d));
  }
  return node;
}

server::InventoryOptions Options(int devices) {
  server::InventoryOptions options;
  options.ttl = absl::Hours(1);
  options.report_limits.max_devices_per_node = devices;
  return options;
}

void BM_ReportDistinctDevices(benchmark::State& state) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const int n = static_cast<int>(state.range(0));
  double grown = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto placer = std::make_unique<server::placement::Placer>();
    auto bridge = std::make_unique<server::PlacerBridge>(placer.get());
    auto inventory = std::make_unique<Inventory>(Options(n), bridge.get());
    NodeState node = DistinctNode(n);
    const double before = RssMib();
    state.ResumeTiming();
    absl::Status s = inventory->Report(std::move(node));
    state.PauseTiming();
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    grown = RssMib() - before;
    inventory.reset();
    bridge.reset();
    placer.reset();
    state.ResumeTiming();
  }
  state.counters["rss_mib"] = grown;
}
BENCHMARK(BM_ReportDistinctDevices)
    ->Arg(500)
    ->Arg(1000)
    ->Arg(2000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_BeatOfBigNode(benchmark::State& state) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const int n = static_cast<int>(state.range(0));
  server::placement::Placer placer;
  server::PlacerBridge bridge(&placer);
  Inventory inventory(Options(n), &bridge);
  NodeState node;
  node.id = "big";
  for (int i = 0; i < n; ++i) {
    Device d;
    d.index = i;
    d.traits.kind = {"gpu", "nohost"};
    d.traits.arch = {"nvptx"};
    node.devices.push_back(std::move(d));
  }
  if (absl::Status s = inventory.Report(node); !s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return;
  }
  std::vector<std::pair<std::string, double>> beat;
  for (int i = 0; i < n; ++i)
    beat.emplace_back("big/" + std::to_string(i), 0.5);
  for (auto _ : state) {
    benchmark::DoNotOptimize(inventory.Heartbeat("big", beat));
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_BeatOfBigNode)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ctxsel::bench
