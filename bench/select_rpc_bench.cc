// select_rpc_bench: Select RPC throughput against Ping RPC throughput on
// the same gRPC server (loopback, one process), with 10,000 nodes x 8
// devices and 1,000 kernels x 16 variants loaded — the yardstick.
// Ping is the floor a unary RPC costs here; the ratio says what placement
// adds on top. BM_PingRpcLikeSelect echoes a payload sized so that its
// response is as large as the mean SelectResponse of the bench's jobs (the
// Rig measures it), so both sides move the same bytes; tools/perf.sh takes
// the median of repetitions of each. But the client decodes a
// SelectResponse's ~150 nested messages and strings where a Ping's is one
// string: BM_PingRpcThenDecodeSelect adds that decoding to the Ping, so
// Select against it says what the server adds. Each RPC benchmark also
// reports the process's instructions (all, and user space only) and
// context switches per call (client, server and gRPC's threads together;
// process_counters.h), which load does not change.
//
// BM_SelectWhileCoverage: the same Select RPCs without (arg 0) and with
// another client issuing Placement.Coverage queries (a 2 x 4 job-point
// matrix each), 100 per second or back to back (arg -1) (docs/coverage.md);
// the ratios say what coverage costs Select.
//
//   bazel run -c opt //bench:select_rpc_bench
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_fleet.h"
#include "bench/process_counters.h"
#include "benchmark/benchmark.h"
#include "ctxsel/v1/ctxsel.grpc.pb.h"
#include "server/placement/placer.h"
#include "server/rpc/ctxsel_service.h"
#include "server/rpc/placement_service.h"
#include "server/rpc/worker_pool.h"

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

struct Rig {
  // First, so that it counts the threads the server and channel start.
  ProcessCounters counters;
  server::Authorizer authorizer{NoAuth()};
  server::placement::Placer placer;
  server::CtxselService ping{&authorizer};
  // Claims only use it; the bench sends none.
  server::WorkerPool workers{server::WorkerPoolOptions{}};
  std::unique_ptr<server::PlacementService> placement;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<v1::Ctxsel::Stub> ping_stub;
  std::unique_ptr<v1::Placement::Stub> placement_stub;
  // Mean serialized size of the SelectResponses to the bench's jobs.
  size_t select_response_bytes = 0;
  // Those responses, serialized: what BM_PingRpcThenDecodeSelect decodes.
  std::vector<std::string> select_responses;

  Rig() {
    // Debian's Abseil checks lock order on every Mutex acquisition (a debug
    // aid); a production server turns that off, and so does the bench.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    LoadFleet(placer, kNodes);
    LoadKernels(placer, kKernels, kVariants);
    // The bench sends no claiming Selects, so it needs no ClaimBook.
    placement = std::make_unique<server::PlacementService>(&authorizer, &placer,
                                                           nullptr, &workers);
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
    size_t answered = 0;
    for (int k = 0; k < kKernels; ++k) {
      grpc::ClientContext ctx;
      v1::SelectResponse response;
      if (placement_stub->Select(&ctx, Request(k), &response).ok()) {
        select_response_bytes += response.ByteSizeLong();
        select_responses.push_back(response.SerializeAsString());
        ++answered;
      }
    }
    // The mean over the answered jobs (0 when none was).
    if (answered > 0) select_response_bytes /= answered;
  }
};

Rig& GetRig() {
  static Rig* rig = new Rig;
  return *rig;
}

// Sets the per-call counters of `state` from the counts since `start`.
void CountPerCall(benchmark::State& state, const Rig& rig,
                  const ProcessCounters::Values& start) {
  if (!rig.counters.ok() || state.iterations() == 0) return;
  ProcessCounters::Values per_call =
      (rig.counters.Read() - start) / static_cast<double>(state.iterations());
  state.counters["instructions"] = per_call.instructions;
  state.counters["user_instructions"] = per_call.user_instructions;
  state.counters["context_switches"] = per_call.context_switches;
}

void BM_PingRpc(benchmark::State& state) {
  Rig& rig = GetRig();
  v1::PingRequest request;
  request.set_payload(std::string(state.range(0), 'x'));
  const ProcessCounters::Values start = rig.counters.Read();
  for (auto _ : state) {
    grpc::ClientContext ctx;
    v1::PingResponse response;
    grpc::Status s = rig.ping_stub->Ping(&ctx, request, &response);
    if (!s.ok()) state.SkipWithError(s.error_message().c_str());
  }
  CountPerCall(state, rig, start);
  state.SetItemsProcessed(state.iterations());
}
// Arg: payload bytes (echoed back); 1200 is near a SelectResponse's size
// (BM_PingRpcLikeSelect measures it and uses the measured size).
BENCHMARK(BM_PingRpc)->Arg(5)->Arg(1200)->UseRealTime();

// A Ping payload whose response is exactly as large as the mean
// SelectResponse.
std::string LikeSelectPayload(const Rig& rig) {
  v1::PingResponse sized;
  sized.set_server_version(server::kServerVersion);
  while (sized.ByteSizeLong() < rig.select_response_bytes) {
    sized.mutable_payload()->push_back('x');
  }
  return sized.payload();
}

// Pings with a response exactly as large as the mean SelectResponse; with
// `decode`, the client then also parses one of the Rig's SelectResponses.
void RunPings(benchmark::State& state, Rig& rig, bool decode) {
  if (rig.select_responses.empty() || rig.select_response_bytes == 0) {
    state.SkipWithError("no Select was answered: nothing to size the ping by");
    return;
  }
  v1::PingRequest request;
  request.set_payload(LikeSelectPayload(rig));
  size_t bytes = 0;
  size_t i = 0;
  const ProcessCounters::Values start = rig.counters.Read();
  for (auto _ : state) {
    grpc::ClientContext ctx;
    v1::PingResponse response;
    grpc::Status s = rig.ping_stub->Ping(&ctx, request, &response);
    if (!s.ok()) state.SkipWithError(s.error_message().c_str());
    bytes += response.ByteSizeLong();
    if (!decode) continue;
    v1::SelectResponse answer;
    if (!answer.ParseFromString(rig.select_responses[i])) {
      state.SkipWithError("a SelectResponse of the Rig does not parse");
    }
    if (++i == rig.select_responses.size()) i = 0;
  }
  CountPerCall(state, rig, start);
  state.SetItemsProcessed(state.iterations());
  state.counters["response_bytes"] =
      static_cast<double>(bytes) / static_cast<double>(state.iterations());
}

void BM_PingRpcLikeSelect(benchmark::State& state) {
  RunPings(state, GetRig(), /*decode=*/false);
}
BENCHMARK(BM_PingRpcLikeSelect)->UseRealTime();

// BM_PingRpcLikeSelect, and then the client parses one of the bench's
// SelectResponses (serialized by the Rig) as BM_SelectRpc's client parses
// its answer: the same bytes on the wire and the same decoding on the
// client, nothing on the server but the echo. Ping's payload is a string
// (UTF-8), so it cannot carry the serialized answer itself. Matching only
// the size counts the client's decoding of a SelectResponse (about 150
// nested messages and strings, a malloc and a free each) as if it were the
// server's work; this floor leaves it out of the difference.
void BM_PingRpcThenDecodeSelect(benchmark::State& state) {
  RunPings(state, GetRig(), /*decode=*/true);
}
BENCHMARK(BM_PingRpcThenDecodeSelect)->UseRealTime();

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
  const ProcessCounters::Values start = rig.counters.Read();
  for (auto _ : state) {
    grpc::ClientContext ctx;
    v1::SelectResponse response;
    grpc::Status s = rig.placement_stub->Select(&ctx, requests[i], &response);
    if (!s.ok()) state.SkipWithError(s.error_message().c_str());
    if (++i == requests.size()) i = 0;
  }
  CountPerCall(state, rig, start);
  state.SetItemsProcessed(state.iterations());
  // The Rig's mean over the jobs this loop cycles through: sizing a nested
  // answer in the loop (a walk of all its fields) would time the bench's
  // own work as Select's, where a Ping's flat answer costs nothing to size.
  state.counters["response_bytes"] =
      static_cast<double>(rig.select_response_bytes);
}
BENCHMARK(BM_SelectRpc)->UseRealTime();

// A coverage matrix: 2 construct sets x 4 values of N, for one kernel.
v1::CoverageRequest CoverageRequest(int kernel) {
  v1::CoverageRequest r;
  r.mutable_job()->set_kernel(absl::StrCat("k", kernel));
  v1::ConstructList* offload = r.add_construct_lists();
  for (const char* c : {"target", "teams", "parallel", "for"}) {
    offload->add_construct()->set_name(c);
  }
  r.add_construct_lists()->add_construct()->set_name("parallel");
  v1::VariableRange* n = r.add_variable_ranges();
  n->set_name("N");
  for (int64_t v : {1, 64, 4096, 1000000}) n->add_values(v);
  return r;
}

// Arg: coverage queries per second from a concurrent client: 0 none, -1
// back to back (on a machine with few cores this mostly measures the two
// clients sharing the CPU, not coverage holding Select up).
void BM_SelectWhileCoverage(benchmark::State& state) {
  Rig& rig = GetRig();
  std::vector<v1::SelectRequest> requests;
  for (int k = 0; k < kKernels; ++k) requests.push_back(Request(k));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> coverage_queries{0};
  std::thread coverage;
  const int64_t rate = state.range(0);
  if (rate != 0) {
    coverage = std::thread([&] {
      absl::Time next = absl::Now();
      for (int k = 0; !stop.load(); k = (k + 1) % kKernels) {
        if (rate > 0) {
          next += absl::Seconds(1) / rate;
          absl::SleepFor(next - absl::Now());
        }
        grpc::ClientContext ctx;
        v1::CoverageResponse response;
        if (rig.placement_stub->Coverage(&ctx, CoverageRequest(k), &response)
                .ok()) {
          coverage_queries.fetch_add(1);
        }
      }
    });
  }
  size_t i = 0;
  for (auto _ : state) {
    grpc::ClientContext ctx;
    v1::SelectResponse response;
    grpc::Status s = rig.placement_stub->Select(&ctx, requests[i], &response);
    if (!s.ok()) state.SkipWithError(s.error_message().c_str());
    if (++i == requests.size()) i = 0;
  }
  stop.store(true);
  if (coverage.joinable()) coverage.join();
  state.SetItemsProcessed(state.iterations());
  state.counters["coverage_queries"] =
      static_cast<double>(coverage_queries.load());
}
BENCHMARK(BM_SelectWhileCoverage)->Arg(0)->Arg(100)->Arg(-1)->UseRealTime();

// The same Selects without gRPC: what placement itself costs.
void BM_SelectInProcess(benchmark::State& state) {
  Rig& rig = GetRig();
  std::vector<server::Job> jobs;
  for (int k = 0; k < kKernels; ++k) jobs.push_back(BenchJob(k));
  size_t i = 0;
  const ProcessCounters::Values start = rig.counters.Read();
  for (auto _ : state) {
    auto p = rig.placer.Select(jobs[i]);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
    benchmark::DoNotOptimize(p);
    if (++i == jobs.size()) i = 0;
  }
  CountPerCall(state, rig, start);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SelectInProcess)->UseRealTime();

}  // namespace
}  // namespace ctxsel::bench
