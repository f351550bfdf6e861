// bench_fleet.h: a synthetic fleet and variant registry for the placement
// benchmarks.
//
// Nodes of 8 devices: the host CPU (-1) and 7 GPUs, H100 on even nodes and
// MI250X on odd ones; the H100s have 80 GiB on every fourth node and 40 GiB
// on the other even ones (capacity makes classes: device_class.h) — 4 device
// classes and 3 node layouts whatever the fleet size. Kernels "k0".."kN" with
// 16 variants each covering the three classes, four in six of them dynamic
// (`condition(N …)`), some needing the target/teams/parallel/for construct
// (bench/synthetic_variants.h).
//
//   placement::Placer placer;
//   LoadFleet(placer, /*nodes=*/1250);
//   LoadKernels(placer, /*kernels=*/1000, /*variants=*/16);
//   Job job = BenchJob(7);
#ifndef CTXSEL_BENCH_BENCH_FLEET_H_
#define CTXSEL_BENCH_BENCH_FLEET_H_

#include "server/model/model.h"
#include "server/placement/placer.h"

namespace ctxsel::bench {

inline constexpr int kDevicesPerNode = 8;

// Reports `nodes` nodes ("node0"…) with utilisations spread over 0..1.
void LoadFleet(server::placement::Placer& placer, int nodes);

// Registers `kernels` kernels of `variants` variants each.
void LoadKernels(server::placement::Placer& placer, int kernels, int variants);

// A job for kernel `k<kernel>`: construct target,teams,parallel,for and
// N=4096.
server::Job BenchJob(int kernel);

}  // namespace ctxsel::bench

#endif  // CTXSEL_BENCH_BENCH_FLEET_H_
