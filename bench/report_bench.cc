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
//   BM_BeatUnderListing/listers:k
//                               heartbeats of 8-device nodes in a fleet of
//                               10,000 nodes (80,000 devices) while k
//                               threads page through a filtered ListDevices
//                               that matches nothing (so reads every
//                               device); beat_p99_us is the heartbeats' p99
//                               (tools/perf.sh:
//                               beat_p99_under_listing_vs_idle).
//
//   BM_FleetHeap/nodes:n        n nodes of ctxsel-load's shape (a host CPU
//                               and 7 GPUs, ids "<node>/host", "<node>/0")
//                               reported through the inventory into
//                               placement: heap_bytes_per_device is the
//                               malloc'd bytes they hold (the fleet, the
//                               listing records, the event history), the
//                               server's own share of its RSS at 80,000
//                               devices without gRPC's.
//
//   bazel run -c opt //bench:report_bench
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "server/fleet/device_filter.h"
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

// A node `id` of `devices` identical GPUs (one device class).
NodeState NvptxNode(const std::string& id, int devices) {
  NodeState node;
  node.id = id;
  for (int i = 0; i < devices; ++i) {
    Device d;
    d.index = i;
    d.traits.kind = {"gpu", "nohost"};
    d.traits.arch = {"nvptx"};
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
  if (absl::Status s = inventory.Report(NvptxNode("big", n)); !s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return;
  }
  std::vector<std::pair<std::string, double>> beat;
  for (int i = 0; i < n; ++i)
    beat.emplace_back("big/gpu" + std::to_string(i), 0.5);
  // The server names the devices "big/gpu<i>" (NormalizeReport); a beat of
  // other ids would be refused at once and time nothing.
  if (absl::StatusOr<Inventory::BeatAnswer> a =
          inventory.Heartbeat("big", beat);
      !a.ok() || *a != Inventory::BeatAnswer::kRecorded) {
    state.SkipWithError("the beat was not recorded");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(inventory.Heartbeat("big", beat));
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_BeatOfBigNode)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond);

void BM_BeatUnderListing(benchmark::State& state) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  constexpr int kNodes = 10000;
  constexpr int kDevices = 8;
  const int listers = static_cast<int>(state.range(0));
  server::placement::Placer placer;
  server::PlacerBridge bridge(&placer);
  Inventory inventory(Options(kDevices), &bridge);
  for (int n = 0; n < kNodes; ++n) {
    if (absl::Status s =
            inventory.Report(NvptxNode("n" + std::to_string(n), kDevices));
        !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  absl::StatusOr<server::DeviceFilter> filter =
      server::DeviceFilter::Parse("device={arch(amdgcn)}", "device_filter");
  if (!filter.ok()) {
    state.SkipWithError(std::string(filter.status().message()).c_str());
    return;
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> listed_pages{0};
  std::vector<std::thread> threads;
  for (int l = 0; l < listers; ++l) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        std::string token;
        do {
          auto page = inventory.ListDevices(*filter, "", 1000, token);
          if (!page.ok()) return;
          token = page->next_page_token;
          listed_pages.fetch_add(1);
        } while (!token.empty() && !stop.load());
      }
    });
  }
  std::vector<double> micros;
  int64_t beat = 0;
  for (auto _ : state) {
    const int n = static_cast<int>(beat++ % kNodes);
    const std::string node = "n" + std::to_string(n);
    std::vector<std::pair<std::string, double>> utilisation;
    for (int i = 0; i < kDevices; ++i) {
      utilisation.emplace_back(node + "/gpu" + std::to_string(i), 0.5);
    }
    const absl::Time start = absl::Now();
    benchmark::DoNotOptimize(inventory.Heartbeat(node, utilisation));
    micros.push_back(absl::ToDoubleMicroseconds(absl::Now() - start));
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  std::sort(micros.begin(), micros.end());
  if (!micros.empty()) {
    state.counters["beat_p50_us"] = micros[micros.size() / 2];
    state.counters["beat_p99_us"] = micros[micros.size() * 99 / 100];
  }
  state.counters["listing_pages"] = static_cast<double>(listed_pages.load());
}
BENCHMARK(BM_BeatUnderListing)
    ->ArgName("listers")
    ->Arg(0)
    ->Arg(10)
    ->Iterations(20000)
    ->UseRealTime();

// A node as ctxsel-load reports it (bench/load/load_fleet.cc).
NodeState LoadShapedNode(const std::string& id, int number) {
  NodeState node;
  node.id = id;
  node.agent_version = "ctxsel-load";
  Device cpu;
  cpu.id = id + "/host";
  cpu.index = -1;
  cpu.traits.kind = {"cpu", "host"};
  cpu.traits.arch = {"x86_64"};
  cpu.traits.isa = {"avx512f"};
  cpu.traits.vendor = {"intel"};
  cpu.properties.compute_units = 64;
  node.devices.push_back(std::move(cpu));
  for (int i = 0; i < 7; ++i) {
    Device gpu;
    gpu.id = id + "/" + std::to_string(i);
    gpu.index = i;
    gpu.traits.kind = {"gpu", "nohost"};
    if (number % 2 == 0) {
      gpu.traits.arch = {"nvptx", "sm_90"};
      gpu.traits.vendor = {"nvidia"};
    } else {
      gpu.traits.arch = {"amdgcn"};
      gpu.traits.isa = {"gfx90a"};
      gpu.traits.vendor = {"amd"};
    }
    gpu.properties.memory_bytes = 80ull << 30;
    gpu.properties.compute_units = 132;
    gpu.properties.utilisation = ((number * 7 + i) % 101) / 101.0;
    node.devices.push_back(std::move(gpu));
  }
  return node;
}

void BM_FleetHeap(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  double bytes = 0;
  for (auto _ : state) {
    // In use: small chunks plus mmapped ones (the fleet's large arrays).
    auto in_use = [] {
      const struct mallinfo2 m = mallinfo2();
      return m.uordblks + m.hblkhd;
    };
    const size_t before = in_use();
    {
      server::placement::Placer placer;
      server::PlacerBridge bridge(&placer);
      Inventory inventory(Options(8), &bridge);
      for (int n = 0; n < nodes; ++n) {
        if (absl::Status s = inventory.Report(
                LoadShapedNode("perf10000-n" + std::to_string(n), n));
            !s.ok()) {
          state.SkipWithError(std::string(s.message()).c_str());
          return;
        }
      }
      bytes = static_cast<double>(in_use() - before);
    }
  }
  state.counters["heap_mib"] = bytes / (1 << 20);
  state.counters["heap_bytes_per_device"] = bytes / (nodes * 8.0);
}
BENCHMARK(BM_FleetHeap)
    ->ArgName("nodes")
    ->Arg(10000)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ctxsel::bench
