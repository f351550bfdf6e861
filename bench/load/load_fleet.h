// load_fleet.h: what ctxsel-load reports and registers — a synthetic fleet
// of simulated nodes and kernels with variants, as ctxsel.v1 messages.
//
// Node n has its host CPU (index -1) and `devices_per_node - 1` GPUs, H100s
// on even nodes and MI250Xs on odd ones: three device classes and two node
// layouts whatever the fleet size, so a Select's cost should not change with
// the number of nodes. Kernels "load_k0".. have variants for every class,
// four in six of them dynamic (condition(N ...); bench/synthetic_variants.h).
//
//   v1::Node node = LoadNode("load-n7", 7, /*devices_per_node=*/8);
//   v1::RegisterVariantsRequest r = LoadKernel(3, /*variants=*/16);
//   v1::SelectRequest s = LoadSelect(3, /*sequence=*/0);
#ifndef CTXSEL_BENCH_LOAD_LOAD_FLEET_H_
#define CTXSEL_BENCH_LOAD_LOAD_FLEET_H_

#include <string>

#include "ctxsel/v1/ctxsel.pb.h"

namespace ctxsel::load {

// Node `number` of the fleet, named `id`, with `devices_per_node` devices
// (at least 1: the host CPU), with ids "<id>/host", "<id>/0", ...
v1::Node LoadNode(const std::string& id, int number, int devices_per_node);

// The name of kernel `k`.
std::string LoadKernelName(int k);

// Registers (replacing) `variants` variants of kernel `k`.
v1::RegisterVariantsRequest LoadKernel(int k, int variants);

// A Select for kernel `k`: construct target,teams,parallel,for; N varies
// with `sequence` so dynamic conditions go both ways.
v1::SelectRequest LoadSelect(int k, int sequence);

}  // namespace ctxsel::load

#endif  // CTXSEL_BENCH_LOAD_LOAD_FLEET_H_
