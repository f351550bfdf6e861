// Binary-aware placement (issue 26, item 1), end to end: a real
// ctxsel-server, a real ctxsel-agent reporting a devices file (an x86_64
// CPU, an sm_80 and an sm_90 NVIDIA GPU, a gfx90a AMD GPU) and the real CLI,
// with binaries made by clang 14 (host offload) and by the fixture tool
// (CUDA and HIP fatbins in their documented formats). A kernel registered
// --from_binary is placed only where the binary has an image, the exact
// image before PTX; a job's --binary does the same for a kernel without
// images; `run --binary` never starts its command where the binary cannot
// run.
#include <signal.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/server_process.h"
#include "tests/testing/subprocess.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

// The CLI fits messages to the terminal: one line, single spaces.
std::string Flat(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out;
}

class BinaryImagesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("binaries");
    const std::string devices = dir_ + "/node.json";
    std::ofstream(devices) << R"({"devices": [)"
                           << R"({"sycl_architecture": "nvidia_gpu_sm_80"},)"
                           << R"({"sycl_architecture": "nvidia_gpu_sm_90"},)"
                           << R"({"sycl_architecture": "amd_gpu_gfx90a"},)"
                           << R"({"sycl_architecture": "x86_64"}]})";
    auto server = ServerProcess::Start({"--data_dir=" + MakeTempDir("data")});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto agent =
        StartDevicesFileAgent(server_->address(), "node", devices, "node/gpu2");
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
  }
  void TearDown() override {
    if (agent_ != nullptr && agent_->Running()) agent_->Signal(SIGTERM);
    if (agent_ != nullptr) agent_->Wait(std::chrono::seconds(5));
  }

  CommandResult Cli(std::vector<std::string> args) {
    return RunCli(server_->address(), std::move(args));
  }

  // A fixture binary: `kind` cuda or hip, then its images.
  std::string Fixture(const std::string& name, std::vector<std::string> args) {
    const std::string path = dir_ + "/" + name;
    std::vector<std::string> argv = {RunfilePath("images/image_fixtures_tool"),
                                     args[0], path};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    CommandResult made = RunCommand(argv);
    EXPECT_EQ(made.exit_code, 0) << made.stderr_text;
    return path;
  }

  // The device and image of a Select's answer.
  std::pair<std::string, std::string> Placed(std::vector<std::string> args) {
    args.insert(args.begin(), "select");
    args.push_back("--json");
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    nlohmann::json j = nlohmann::json::parse(r.stdout_text, nullptr, false);
    if (j.is_discarded()) return {};
    return {j["placement"]["device"].value("id", ""),
            j["placement"].value("image", "")};
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<Subprocess> agent_;
};

TEST_F(BinaryImagesE2E, RegisteredImagesRefuseDevicesWithoutOne) {
  const std::string app = Fixture("app", {"cuda", "cubin:sm_90"});
  CommandResult reg =
      Cli({"variants", "register", "saxpy", "saxpy_gpu=device={kind(gpu)}",
           "--from_binary=" + app});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  EXPECT_THAT(Cli({"variants", "get", "saxpy", "saxpy_gpu"}).stdout_text,
              HasSubstr("images:      cubin:sm_90"));
  // Without the images the AMD GPU, the sm_80 GPU and the CPU would serve.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(
        Placed({"--kernel=saxpy"}),
        std::make_pair(std::string("node/gpu1"), std::string("cubin:sm_90")));
  }
  for (const char* other : {"node/gpu0", "node/gpu2", "node/cpu0"}) {
    CommandResult refused =
        Cli({"select", "--kernel=saxpy", absl::StrCat("--devices=", other)});
    EXPECT_NE(refused.exit_code, 0) << other;
    EXPECT_THAT(Flat(refused.stderr_text),
                HasSubstr("images: the binary has no image this class runs "
                          "(cubin:sm_90)"));
  }
  // Stored: a new registration of another binary replaces them.
  const std::string hip = Fixture("hip", {"hip", "gfx90a:xnack-"});
  reg = Cli({"variants", "register", "saxpy", "saxpy_gpu=device={kind(gpu)}",
             "--replace", "--from_binary=" + hip});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  EXPECT_EQ(Placed({"--kernel=saxpy"}),
            std::make_pair(std::string("node/gpu2"),
                           std::string("amdgcn:gfx90a:xnack-")));
}

TEST_F(BinaryImagesE2E, ExactImageBeforePtxAndExplainSaysJit) {
  const std::string app = Fixture("app", {"cuda", "ptx:sm_80", "cubin:sm_90"});
  ASSERT_EQ(Cli({"variants", "register", "saxpy",
                 "saxpy_gpu=device={kind(gpu)}", "--from_binary=" + app})
                .exit_code,
            0);
  // sm_80 runs the PTX (JIT), sm_90 its own cubin: the exact one wins.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(
        Placed({"--kernel=saxpy"}),
        std::make_pair(std::string("node/gpu1"), std::string("cubin:sm_90")));
  }
  EXPECT_EQ(Placed({"--kernel=saxpy", "--devices=node/gpu0"}),
            std::make_pair(std::string("node/gpu0"), std::string("ptx:sm_80")));
  CommandResult explain = Cli({"explain", "--kernel=saxpy"});
  EXPECT_THAT(Flat(explain.stdout_text),
              HasSubstr("runs image ptx:sm_80 (PTX sm_80, JIT-compiled by the "
                        "CUDA driver for sm_80)"));
  EXPECT_THAT(explain.stdout_text, HasSubstr("runs image cubin:sm_90\n"));
  // Coverage names the image each class would run, from the registered
  // images or a job's --binary.
  CommandResult coverage = Cli({"coverage", "--kernel=saxpy", "--json"});
  ASSERT_EQ(coverage.exit_code, 0) << coverage.stderr_text;
  nlohmann::json report =
      nlohmann::json::parse(coverage.stdout_text, nullptr, false);
  std::map<std::string, std::string> images;
  for (const auto& c : report["points"][0]["classes"]) {
    images[c.value("device_class_short_name", "")] =
        c.value("no_image", false) ? "none" : c.value("image", "");
  }
  EXPECT_EQ(images, (std::map<std::string, std::string>{
                        {"nvidia_gpu_sm_80", "ptx:sm_80"},
                        {"nvidia_gpu_sm_90", "cubin:sm_90"},
                        {"amd_gpu_gfx90a", "none"},
                        {"x86_64", "none"}}));
  const std::string hip = Fixture("hip", {"hip", "gfx90a:xnack-"});
  coverage = Cli({"coverage", "--kernel=saxpy", "--binary=" + hip});
  ASSERT_EQ(coverage.exit_code, 0) << coverage.stderr_text;
  EXPECT_THAT(coverage.stdout_text, HasSubstr("amdgcn:gfx90a:xnack-"));
  EXPECT_THAT(coverage.stdout_text, HasSubstr("none: cannot run"));
}

// import --from_binary lists the images with the sources' variants; a
// variants file carries them at the top for register --variants_file.
TEST_F(BinaryImagesE2E, ImportFromBinaryFeedsAVariantsFile) {
  const std::string app = Fixture("app", {"cuda", "cubin:sm_90"});
  const std::string source = dir_ + "/saxpy.c";
  std::ofstream(source) << "void saxpy_gpu(int n);\n"
                           "#pragma omp declare variant(saxpy_gpu) "
                           "match(device={kind(gpu)})\n"
                           "void saxpy(int n);\n";
  CommandResult imported = Cli({"import", "--from_binary=" + app, source});
  ASSERT_EQ(imported.exit_code, 0) << imported.stderr_text;
  nlohmann::json doc =
      nlohmann::json::parse(imported.stdout_text, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["images"], nlohmann::json::array({"cubin:sm_90"}));
  ASSERT_EQ(doc["variants"].size(), 1u);
  // A variants file with the images at the top.
  const std::string file = dir_ + "/variants.json";
  std::ofstream(file) << nlohmann::json{
      {"images", doc["images"]},
      {"variants",
       {{{"name", "saxpy_gpu"}, {"selector", "device={kind(gpu)}"}}}}};
  CommandResult reg =
      Cli({"variants", "register", "saxpy", "--variants_file=" + file});
  ASSERT_EQ(reg.exit_code, 0) << reg.stderr_text;
  EXPECT_EQ(
      Placed({"--kernel=saxpy"}),
      std::make_pair(std::string("node/gpu1"), std::string("cubin:sm_90")));
}

TEST_F(BinaryImagesE2E, RealClangHostOffloadBinaryRunsOnTheCpuOnly) {
  const std::string source = dir_ + "/offload.c";
  std::ofstream(source) << "int main(void) { int x = 0;\n"
                           "#pragma omp target map(tofrom: x)\n"
                           "  x = 1;\n  return x == 1 ? 0 : 1; }\n";
  const std::string app = dir_ + "/offload";
  CommandResult cc =
      RunCommand({"/usr/bin/clang-14", "-fopenmp",
                  "-fopenmp-targets=x86_64-pc-linux-gnu", source, "-o", app});
  ASSERT_EQ(cc.exit_code, 0) << cc.stderr_text;
  ASSERT_EQ(Cli({"variants", "register", "saxpy",
                 "saxpy_any=device={kind(any)}", "--from_binary=" + app})
                .exit_code,
            0);
  EXPECT_EQ(
      Placed({"--kernel=saxpy"}),
      std::make_pair(std::string("node/cpu0"), std::string("host:x86_64")));
}

TEST_F(BinaryImagesE2E, RunBinaryNeverStartsWhereTheBinaryCannotRun) {
  ASSERT_EQ(
      Cli({"variants", "register", "saxpy", "saxpy_gpu=device={kind(gpu)}"})
          .exit_code,
      0);
  const std::string hip = Fixture("hip", {"hip", "gfx90a:xnack-"});
  const std::string marker = dir_ + "/started";
  // The job's allocation holds only NVIDIA GPUs: nothing starts.
  CommandResult refused = Cli({"run", "--kernel=saxpy", "--binary=" + hip,
                               "--devices=node/gpu0,node/gpu1", "--", "/bin/sh",
                               "-c", "touch " + marker});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(Flat(refused.stderr_text), HasSubstr("amdgcn:gfx90a:xnack-"));
  EXPECT_EQ(ReadFileOrEmpty(marker), "");
  EXPECT_FALSE(std::ifstream(marker).good());
  // Without the binary the kernel runs anywhere; with it, on the AMD GPU.
  CommandResult ran = Cli({"run", "--kernel=saxpy", "--binary=" + hip, "--",
                           "/bin/sh", "-c", "echo $CTXSEL_DEVICE"});
  ASSERT_EQ(ran.exit_code, 0) << ran.stderr_text;
  EXPECT_THAT(ran.stdout_text, HasSubstr("node/gpu2"));
  // A binary with no device image is refused before anything is asked.
  CommandResult none =
      Cli({"run", "--kernel=saxpy", "--binary=/bin/true", "--", "/bin/true"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(Flat(none.stderr_text), HasSubstr("carries no device image"));
}

}  // namespace
}  // namespace ctxsel::testing
