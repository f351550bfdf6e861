// select_rpc_bench: Select RPC throughput against Ping RPC throughput on
// the same gRPC server (loopback, one process), with 10,000 nodes x 8
// devices and 1,000 kernels x 16 variants loaded — the yardstick.
// Ping is the floor a unary RPC costs here; the ratio says what placement
// adds on top.
//
//   bazel run -c opt //bench:select_rpc_bench
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "bench/bench_fleet.h"
#include "benchmark/benchmark.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/ctxsel_service.h"
#include "server/placement/placer.h"
#include "server/placement_service.h"

namespace ctxsel::bench {
namespace {

constexpr int kNodes = 10000;
constexpr int kKernels = 1000;
constexpr int kVariants = 16;

// The server and a channel to it, started once for every benchmark.
// Authentication off, as with --insecure and no --tokens_file: the bench
// measures selection, not token lookups.
server::AuthOptions NoAuth() {
  server::AuthOptions options;
  options.required = false;
  return options;
}

struct Rig {
  server::Authorizer authorizer{NoAuth()};
  server::placement::Placer placer;
  server::CtxselService ping{&authorizer};
  std::unique_ptr<server::PlacementService> placement;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::Ctxsel::Stub> ping_stub;
  std::unique_ptr<v1::Placement::Stub> placement_stub;

  Rig() {
    // Debian's Abseil checks lock order on every Mutex acquisition (a debug
    // aid); a production server turns that off, and so does the bench.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    LoadFleet(placer, kNodes);
    LoadKernels(placer, kKernels, kVariants);
    // The bench sends no claiming Selects, so it needs no ClaimBook.
    placement = std::make_unique<server::PlacementService>(&authorizer, &placer,
                                                           nullptr);
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&ping);
    builder.RegisterService(placement.get());
    server = builder.BuildAndStart();
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                       grpc::InsecureChannelCredentials());
    ping_stub = v1::Ctxsel::NewStub(channel);
    placement_stub = v1::Placement::NewStub(channel);
  }
};

Rig& GetRig() {
  static Rig* rig = new Rig;
  return *rig;
}

v1::SelectRequest Request(int kernel) {
  v1::SelectRequest r;
  v1::Job* job = r.mutable_job();
  job->set_kernel(absl::StrCat("k", kernel));
  for (const char* c : {"target", "teams", "parallel", "for"}) {
    job->add_construct()->set_name(c);
  }
  (*job->mutable_variables())["N"] = 4096;
  return r;
}

void BM_PingRpc(benchmark::State& state) {
  Rig& rig = GetRig();
  v1::PingRequest request;
  request.set_payload(std::string(state.range(0), 'x'));
  for (auto _ : state) {
    grpc::ClientContext ctx;
    v1::PingResponse response;
    grpc::Status s = rig.ping_stub->Ping(&ctx, request, &response);
    if (!s.ok()) state.SkipWithError(s.error_message().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
// Arg: payload bytes (echoed back); 1200 matches a SelectResponse.
BENCHMARK(BM_PingRpc)->Arg(5)->Arg(1200)->UseRealTime();

void BM_SelectRpc(benchmark::State& state) {
  Rig& rig = GetRig();
  std::vector<v1::SelectRequest> requests;
  for (int k = 0; k < kKernels; ++k) requests.push_back(Request(k));
  for (const v1::SelectRequest& r : requests) {  // warm the caches
    grpc::ClientContext ctx;
    v1::SelectResponse response;
    rig.placement_stub->Select(&ctx, r, &response);
  }
  size_t i = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    grpc::ClientContext ctx;
    v1::SelectResponse response;
    grpc::Status s = rig.placement_stub->Select(&ctx, requests[i], &response);
    if (!s.ok()) state.SkipWithError(s.error_message().c_str());
    bytes += response.ByteSizeLong();
    if (++i == requests.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["response_bytes"] =
      static_cast<double>(bytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SelectRpc)->UseRealTime();

// The same Selects without gRPC: what placement itself costs.
void BM_SelectInProcess(benchmark::State& state) {
  Rig& rig = GetRig();
  std::vector<server::Job> jobs;
  for (int k = 0; k < kKernels; ++k) jobs.push_back(BenchJob(k));
  size_t i = 0;
  for (auto _ : state) {
    auto p = rig.placer.Select(jobs[i]);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
    benchmark::DoNotOptimize(p);
    if (++i == jobs.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SelectInProcess)->UseRealTime();

}  // namespace
}  // namespace ctxsel::bench
