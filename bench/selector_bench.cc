// Benchmarks of the selector engine: parse, match+score one selector,
// Resolve (static work) and Select (per request) for 16 and 256 variants.
//
//   bazel run -c opt //bench:selector_bench
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "selector/selector.h"

namespace {

namespace sel = ctxsel::selector;

constexpr const char* kSelector =
    "construct={teams, parallel, for}, device={kind(gpu), arch(nvptx), "
    "isa(sm_70)}, implementation={vendor(score(4): llvm)}, "
    "user={condition(N > 32 && N % 4 == 0)}";

sel::Context MakeContext() {
  sel::Context ctx;
  for (const char* c : {"target", "teams", "distribute", "parallel", "for"}) {
    sel::AddConstruct(ctx, c);
  }
  ctx.device.kind = {"gpu", "nohost"};
  ctx.device.arch = {"nvptx", "nvidia_gpu_sm_70"};
  ctx.device.isa = {"sm_70"};
  ctx.implementation.vendor = {"llvm"};
  ctx.variables = {{"N", 64}, {"dev", 0}};
  ctx.target_devices.devices[0].kind = {"gpu"};
  ctx.target_devices.devices[0].arch = {"nvptx"};
  return ctx;
}

// A realistic mix: static variants for several arches, dynamic ones with
// conditions and target_device sets. Higher i: higher explicit score.
std::vector<sel::Candidate> MakeCandidates(int n) {
  const char* arches[] = {"nvptx", "amdgcn", "x86_64", "spirv"};
  std::vector<sel::Candidate> out;
  for (int i = 0; i < n; ++i) {
    std::string text;
    switch (i % 4) {
      case 0:
        text = absl::StrCat("device={arch(", arches[i / 4 % 4], ")}");
        break;
      case 1:
        text =
            absl::StrCat("user={condition(score(", i, "): N > ", i * 8, ")}");
        break;
      case 2:
        text = absl::StrCat(
            "construct={parallel}, target_device={device_num(dev), arch(",
            arches[i / 4 % 4], ")}");
        break;
      default:
        text = absl::StrCat("implementation={vendor(score(", i,
                            "): llvm)}, construct={teams}");
    }
    out.push_back({absl::StrCat("v", i), *sel::Selector::Parse(text)});
  }
  return out;
}

void BM_Parse(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(sel::Selector::Parse(kSelector));
  }
}
BENCHMARK(BM_Parse);

void BM_MatchAndScore(benchmark::State& state) {
  sel::Selector s = *sel::Selector::Parse(kSelector);
  sel::Context ctx = MakeContext();
  for (auto _ : state) {
    benchmark::DoNotOptimize(sel::MatchSelector(s, ctx));
  }
}
BENCHMARK(BM_MatchAndScore);

void BM_Resolve(benchmark::State& state) {
  std::vector<sel::Candidate> candidates =
      MakeCandidates(static_cast<int>(state.range(0)));
  sel::Context ctx = MakeContext();
  for (auto _ : state) {
    benchmark::DoNotOptimize(sel::Resolve(candidates, ctx));
  }
}
BENCHMARK(BM_Resolve)->Arg(16)->Arg(256);

// The static work for a kernel of n conditional variants, each with a
// condition of its own on one GPU arch: the shape that made the pairwise
// strict-subset pass quadratic (1.5 s at 4,000; over 220 s at 13,000).
void BM_ResolveConditional(benchmark::State& state) {
  std::vector<sel::Candidate> candidates;
  for (int i = 0; i < state.range(0); ++i) {
    candidates.push_back(
        {absl::StrCat("v", i),
         *sel::Selector::Parse(absl::StrCat(
             "device={arch(nvptx)}, user={condition(N > ", i, ")}"))});
  }
  sel::Context ctx = MakeContext();
  for (auto _ : state) {
    benchmark::DoNotOptimize(sel::Resolve(candidates, ctx));
  }
}
BENCHMARK(BM_ResolveConditional)
    ->Arg(4000)
    ->Arg(40000)
    ->Unit(benchmark::kMillisecond);

void BM_Select(benchmark::State& state) {
  sel::Context ctx = MakeContext();
  sel::Resolution r =
      *sel::Resolve(MakeCandidates(static_cast<int>(state.range(0))), ctx);
  state.counters["prefix"] = static_cast<double>(r.dynamic_prefix_size());
  for (auto _ : state) {
    benchmark::DoNotOptimize(sel::Select(r, ctx.variables, ctx.target_devices));
  }
}
BENCHMARK(BM_Select)->Arg(16)->Arg(256);

// Worst case for Select: every candidate is dynamic and none holds, so the
// whole list is the dynamic prefix and every condition is evaluated.
void BM_SelectAllDynamicMiss(benchmark::State& state) {
  std::vector<sel::Candidate> candidates;
  for (int i = 0; i < state.range(0); ++i) {
    candidates.push_back(
        {absl::StrCat("v", i), *sel::Selector::Parse(absl::StrCat(
                                   "user={condition(N > ", 1000 + i, ")}"))});
  }
  sel::Context ctx = MakeContext();
  sel::Resolution r = *sel::Resolve(candidates, ctx);
  for (auto _ : state) {
    benchmark::DoNotOptimize(sel::Select(r, ctx.variables, ctx.target_devices));
  }
}
BENCHMARK(BM_SelectAllDynamicMiss)->Arg(16)->Arg(256);

void BM_Explain(benchmark::State& state) {
  sel::Context ctx = MakeContext();
  sel::Resolution r =
      *sel::Resolve(MakeCandidates(static_cast<int>(state.range(0))), ctx);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        sel::Explain(r, ctx.variables, ctx.target_devices));
  }
}
BENCHMARK(BM_Explain)->Arg(16);

}  // namespace
