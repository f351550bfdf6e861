// The whole path with real processes: simulated nodes report through the
// client library, variants are registered and `ctxsel-cli select` answers;
// dynamic conditions, TTL expiry, re-report after restart, devices ls
// --device_filter and watch.
#include <signal.h>

#include <thread>

#include "client/ctxsel_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/fleet.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PlacementE2E : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    if (data_dir_.empty()) data_dir_ = MakeTempDir("data");
    flags.push_back("--data_dir=" + data_dir_);
    auto server = ServerProcess::Start(flags);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    client_ = client::CtxselClient::Connect(server_->address());
  }
  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }
  void ReportFleet() {
    for (const v1::Node& node :
         {GpuNode("gpu-nv", "nvidia", "nvptx", "nvidia_gpu_sm_90", 2),
          GpuNode("gpu-amd", "amd", "amdgcn", "amd_gpu_gfx90a", 1),
          CpuNode("cpu-1")}) {
      auto reported = client_->ReportNode(node);
      ASSERT_TRUE(reported.ok()) << reported.status();
    }
  }
  void RegisterSaxpy() {
    CommandResult reg =
        Cli({"variants", "register", "saxpy",
             "saxpy_nv=construct={target}, device={arch(nvptx)}",
             "saxpy_amd_big=construct={target}, device={arch(amdgcn)}, "
             "user={condition(N > 100000)}"});
    ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  }

  std::string data_dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<client::CtxselClient> client_;
};

TEST_F(PlacementE2E, SelectThroughCliFollowsVariables) {
  Start();
  ReportFleet();
  RegisterSaxpy();
  CommandResult small = Cli({"select", "--kernel=saxpy", "--construct=target",
                             "--var=N=4096", "--format=env"});
  ASSERT_EQ(small.exit_code, 0) << small.stderr_text;
  EXPECT_THAT(small.stdout_text, HasSubstr("CTXSEL_VARIANT='saxpy_nv'"));
  EXPECT_THAT(small.stdout_text, HasSubstr("CTXSEL_NODE='gpu-nv'"));
  EXPECT_THAT(small.stdout_text, HasSubstr("CUDA_VISIBLE_DEVICES="));

  // saxpy_amd_big is declared later, so equal scores go to saxpy_nv; a
  // device_filter shows the condition deciding on the AMD class.
  CommandResult amd_small =
      Cli({"select", "--kernel=saxpy", "--construct=target", "--var=N=4096",
           "--device_filter=device={arch(amdgcn)}", "--format=env"});
  ASSERT_EQ(amd_small.exit_code, 0) << amd_small.stderr_text;
  EXPECT_THAT(amd_small.stdout_text, HasSubstr("CTXSEL_VARIANT='saxpy'"));
  CommandResult amd_big =
      Cli({"select", "--kernel=saxpy", "--construct=target", "--var=N=1000000",
           "--device_filter=device={arch(amdgcn)}", "--format=env"});
  ASSERT_EQ(amd_big.exit_code, 0) << amd_big.stderr_text;
  EXPECT_THAT(amd_big.stdout_text, HasSubstr("CTXSEL_VARIANT='saxpy_amd_big'"));
  EXPECT_THAT(amd_big.stdout_text,
              HasSubstr("export ROCR_VISIBLE_DEVICES='0'"));

  CommandResult table =
      Cli({"select", "--kernel=saxpy", "--construct=target", "--var=N=1"});
  ASSERT_EQ(table.exit_code, 0) << table.stderr_text;
  EXPECT_THAT(table.stdout_text, HasSubstr("saxpy_nv on gpu-nv/"));
  CommandResult json = Cli({"--json", "select", "--kernel=saxpy", "--var=N=1"});
  ASSERT_EQ(json.exit_code, 0) << json.stderr_text;
  EXPECT_THAT(json.stdout_text, HasSubstr("\"placement\""));

  CommandResult explain =
      Cli({"explain", "--kernel=saxpy", "--construct=target", "--var=N=4096"});
  EXPECT_EQ(explain.exit_code, 0) << explain.stderr_text;
  EXPECT_THAT(explain.stdout_text, HasSubstr("saxpy_amd_big"));
}

// A launcher that reads only the placement asks for no explanation: the
// same answer, without the text (the server skips formatting it).
TEST_F(PlacementE2E, OmitExplanationKeepsTheAnswerWithoutItsText) {
  Start();
  ReportFleet();
  RegisterSaxpy();
  v1::SelectRequest request;
  request.mutable_job()->set_kernel("saxpy");
  request.mutable_job()->add_construct()->set_name("target");
  (*request.mutable_job()->mutable_variables())["N"] = 4096;
  absl::StatusOr<v1::SelectResponse> full = client_->Select(request);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_THAT(full->explanation(), HasSubstr("saxpy_nv"));
  request.set_omit_explanation(true);
  absl::StatusOr<v1::SelectResponse> lean = client_->Select(request);
  ASSERT_TRUE(lean.ok()) << lean.status();
  EXPECT_EQ(lean->explanation(), "");
  EXPECT_EQ(lean->placement().variant(), full->placement().variant());
  EXPECT_EQ(lean->placement().device_class(), full->placement().device_class());
  EXPECT_EQ(lean->placement().device().traits().arch_size(),
            full->placement().device().traits().arch_size());
  ASSERT_EQ(lean->ranks_size(), 1);
  EXPECT_EQ(lean->ranks(0).environment_size(),
            full->ranks(0).environment_size());
}

TEST_F(PlacementE2E, NoCompatibleDeviceIsExitOne) {
  Start();
  ReportFleet();
  RegisterSaxpy();
  CommandResult none = Cli({"select", "--kernel=saxpy", "--var=N=1",
                            "--device_filter=device={arch(spir64)}"});
  EXPECT_EQ(none.exit_code, 1) << none.stdout_text;
  EXPECT_THAT(none.stderr_text, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(none.stderr_text,
              HasSubstr("\n  reason NO_FITTING_DEVICE count=1 fitting=0 "
                        "kernel=saxpy\n"));
  // (With N given: without it the job fails on job.variables first, which
  // the exit code alone did not tell apart.)
  CommandResult bad_filter = Cli({"select", "--kernel=saxpy", "--var=N=1",
                                  "--device_filter=device={arch(}"});
  EXPECT_EQ(bad_filter.exit_code, 2);
  EXPECT_THAT(bad_filter.stderr_text,
              HasSubstr("\n  field job.device_filter: 1:"));
  EXPECT_THAT(bad_filter.stderr_text,
              HasSubstr("\n  reason SELECTOR_INVALID column="));
}

TEST_F(PlacementE2E, DevicesLsMatchesSelector) {
  Start();
  ReportFleet();
  CommandResult nv =
      Cli({"devices", "ls", "--device_filter=device={arch(nvptx)}"});
  ASSERT_EQ(nv.exit_code, 0) << nv.stderr_text;
  EXPECT_THAT(nv.stdout_text, HasSubstr("gpu-nv/gpu0"));
  EXPECT_THAT(nv.stdout_text, HasSubstr("gpu-nv/gpu1"));
  EXPECT_THAT(nv.stdout_text, Not(HasSubstr("gpu-amd/")));
  EXPECT_THAT(nv.stdout_text, Not(HasSubstr("gpu-nv/cpu0")));
  // The SYCL catalog's names are arch traits too.
  CommandResult sycl =
      Cli({"devices", "ls", "--device_filter=device={arch(amd_gpu_gfx90a)}"});
  ASSERT_EQ(sycl.exit_code, 0) << sycl.stderr_text;
  EXPECT_THAT(sycl.stdout_text, HasSubstr("gpu-amd/gpu0"));
  EXPECT_THAT(sycl.stdout_text, Not(HasSubstr("gpu-nv/")));
  CommandResult bad = Cli({"devices", "ls", "--device_filter=device={arch(}"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.stderr_text, HasSubstr("device_filter: 1:"));
  EXPECT_THAT(bad.stderr_text, HasSubstr("field device_filter: 1:"));
  EXPECT_THAT(bad.stderr_text, HasSubstr("reason SELECTOR_INVALID"));
}

// One device filter, one meaning: a filter the job would decide is refused
// alike by `devices ls` and by `select`, where it used to list nothing in
// one and filter by the job's variables in the other.
TEST_F(PlacementE2E, JobDependentDeviceFilterIsRefusedEverywhere) {
  Start();
  ReportFleet();
  RegisterSaxpy();
  const std::string filter = "--device_filter=user={condition(N > 4)}";
  CommandResult ls = Cli({"devices", "ls", filter});
  CommandResult select =
      Cli({"select", "--kernel=saxpy", "--var=N=4096", filter});
  for (const CommandResult* r : {&ls, &select}) {
    EXPECT_EQ(r->exit_code, 2) << r->stderr_text;
    EXPECT_THAT(r->stderr_text,
                HasSubstr("device_filter: 1:1: a device filter names only the "
                          "device and target_device trait sets, not 'user'"));
    EXPECT_THAT(r->stderr_text, HasSubstr("reason SELECTOR_INVALID"));
    EXPECT_THAT(r->stderr_text, HasSubstr("column=1"));
  }
  EXPECT_THAT(ls.stderr_text, HasSubstr("field device_filter: "));
  EXPECT_THAT(select.stderr_text, HasSubstr("field job.device_filter: "));
  CommandResult nodes = Cli({"nodes", "ls"});
  ASSERT_EQ(nodes.exit_code, 0);
  EXPECT_THAT(nodes.stdout_text, HasSubstr("cpu-1"));
}

TEST_F(PlacementE2E, SilentNodeExpiresAndIsNeverSelected) {
  // A TTL long enough that the first select still sees both nodes on a
  // loaded machine. Neither beats before it, so if they are suspect by then
  // they both are ("alive" reported first) and the NVIDIA node still wins.
  Start({"--heartbeat_interval=100ms", "--node_ttl=3s", "--suspect_after=2s"});
  ASSERT_TRUE(
      client_
          ->ReportNode(GpuNode("alive", "amd", "amdgcn", "amd_gpu_gfx90a", 1))
          .ok());
  ASSERT_TRUE(client_
                  ->ReportNode(GpuNode("silent", "nvidia", "nvptx",
                                       "nvidia_gpu_sm_90", 1))
                  .ok());
  RegisterSaxpy();
  // While both live, the NVIDIA node wins (saxpy_nv, earlier declared).
  CommandResult before = Cli({"select", "--kernel=saxpy", "--construct=target",
                              "--var=N=1", "--format=env"});
  EXPECT_THAT(before.stdout_text, HasSubstr("CTXSEL_NODE='silent'"));

  auto beats = client_->OpenHeartbeat();
  v1::HeartbeatRequest beat;
  beat.set_node("alive");
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool expired = false;
  while (!expired && std::chrono::steady_clock::now() < deadline) {
    auto answer = beats->Beat(beat);
    ASSERT_TRUE(answer.ok()) << answer.status();
    ASSERT_EQ(answer->action(), v1::HeartbeatResponse::ACTION_UNSPECIFIED);
    auto devices = client_->ListDevices("", "silent");
    ASSERT_TRUE(devices.ok());
    expired = devices->empty();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(expired) << server_->Log();
  for (int n : {1, 1000000}) {
    CommandResult after = Cli({"select", "--kernel=saxpy", "--construct=target",
                               "--var=N=" + std::to_string(n), "--format=env"});
    ASSERT_EQ(after.exit_code, 0) << after.stderr_text;
    EXPECT_THAT(after.stdout_text, HasSubstr("CTXSEL_NODE='alive'"));
  }
  EXPECT_THAT(server_->Log(), HasSubstr("node silent removed"));
}

TEST_F(PlacementE2E, UnknownNodeIsToldToReReportAfterRestart) {
  Start();
  ReportFleet();
  server_->process().Signal(SIGKILL);
  server_->process().Wait(std::chrono::seconds(10));
  Start();
  auto beats = client_->OpenHeartbeat();
  v1::HeartbeatRequest beat;
  beat.set_node("gpu-nv");
  auto answer = beats->Beat(beat);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->action(), v1::HeartbeatResponse::ACTION_REREPORT);
  EXPECT_THAT(answer->message(), HasSubstr("unknown node"));
  ASSERT_TRUE(client_
                  ->ReportNode(GpuNode("gpu-nv", "nvidia", "nvptx",
                                       "nvidia_gpu_sm_90", 2))
                  .ok());
  answer = beats->Beat(beat);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->action(), v1::HeartbeatResponse::ACTION_UNSPECIFIED);
  EXPECT_TRUE(beats->Close().ok());
}

TEST_F(PlacementE2E, WatchPrintsChanges) {
  Start();
  ASSERT_TRUE(client_->ReportNode(CpuNode("first")).ok());
  CommandResult watch = Cli({"watch", "--initial", "--max_events=1"});
  ASSERT_EQ(watch.exit_code, 0) << watch.stderr_text;
  EXPECT_THAT(watch.stdout_text, HasSubstr("ADDED first"));
  std::vector<std::string> seen;
  std::thread deregister([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(client_->Deregister("first").ok());
  });
  absl::Status watched = client_->WatchInventory(
      false,
      [&](const v1::InventoryEvent& event) {
        seen.push_back(v1::InventoryEvent::Kind_Name(event.kind()) + " " +
                       event.reason());
        return false;
      },
      std::chrono::seconds(10));
  deregister.join();
  EXPECT_TRUE(watched.ok()) << watched;
  EXPECT_THAT(seen, ::testing::ElementsAre("KIND_REMOVED deregistered"));
}

}  // namespace
}  // namespace ctxsel::testing
