// A restart on a full disk (issue 22, item 5): the real ctxsel-server on a
// data directory in a real, size-limited tmpfs, filled to the last block.
// A store that was closed cleanly and holds what its STATE file records
// opens read-only: reads are answered, writes are refused with the disk
// full error. The tmpfs is mounted in a mount namespace of the test's own,
// so nothing outside the test sees it.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

using ::testing::HasSubstr;

class FullDiskE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (unshare(CLONE_NEWNS) != 0 ||
        mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      GTEST_SKIP() << "no mount namespace here: " << std::strerror(errno);
    }
    mount_ = MakeTempDir("disk");
    if (mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=1m,mode=0700") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    }
    mounted_ = true;
    data_dir_ = mount_ + "/data";
  }

  void TearDown() override {
    if (mounted_) umount2(mount_.c_str(), MNT_DETACH);
  }

  // Writes a file until the filesystem has no block left.
  void FillDisk() {
    const std::string path = mount_ + "/filler";
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const std::string block(4096, 'x');
    while (write(fd, block.data(), block.size()) > 0) {
    }
    const int error = errno;
    close(fd);
    ASSERT_EQ(error, ENOSPC) << std::strerror(error);
  }

  std::unique_ptr<ServerProcess> Start() {
    auto server = ServerProcess::Start({"--data_dir=" + data_dir_});
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  static void Stop(ServerProcess& server) {
    server.process().Signal(SIGTERM);
    server.process().Wait(std::chrono::seconds(10));
  }

  static CommandResult Cli(const ServerProcess& server,
                           std::vector<std::string> args) {
    args.insert(args.begin(),
                {CliPath(), "--insecure", "--server=" + server.address()});
    return RunCommand(args);
  }

  std::string mount_;
  std::string data_dir_;
  bool mounted_ = false;
};

TEST_F(FullDiskE2E, ARestartOnAFullDiskServesReadsAndRefusesWrites) {
  {
    std::unique_ptr<ServerProcess> server = Start();
    ASSERT_NE(server, nullptr);
    CommandResult registered = Cli(*server, {"variants", "register", "saxpy",
                                             "saxpy_nv=device={arch(nvptx)}"});
    ASSERT_EQ(registered.exit_code, 0) << registered.stderr_text;
    Stop(*server);
  }
  FillDisk();
  std::unique_ptr<ServerProcess> server = Start();
  ASSERT_NE(server, nullptr) << "the server did not start on a full disk";
  EXPECT_THAT(server->Log(), HasSubstr("read-only"));

  CommandResult got = Cli(*server, {"variants", "get", "saxpy", "saxpy_nv"});
  EXPECT_EQ(got.exit_code, 0) << got.stderr_text;
  EXPECT_THAT(got.stdout_text, HasSubstr("arch(nvptx)"));

  CommandResult write = Cli(*server, {"variants", "register", "saxpy",
                                      "saxpy_amd=device={arch(amdgcn)}"});
  EXPECT_EQ(write.exit_code, 4) << write.stderr_text;
  EXPECT_THAT(write.stderr_text,
              HasSubstr("RESOURCE_EXHAUSTED: the server's disk is full; the "
                        "write was not applied"));
  Stop(*server);

  // With space again, a restart opens it for writing.
  std::filesystem::remove(mount_ + "/filler");
  server = Start();
  ASSERT_NE(server, nullptr);
  CommandResult written = Cli(*server, {"variants", "register", "saxpy",
                                        "saxpy_amd=device={arch(amdgcn)}"});
  EXPECT_EQ(written.exit_code, 0) << written.stderr_text;
  Stop(*server);
}

TEST_F(FullDiskE2E, AStoreThatDoesNotMatchItsStateIsNotOpenedReadOnly) {
  {
    std::unique_ptr<ServerProcess> server = Start();
    ASSERT_NE(server, nullptr);
    ASSERT_EQ(Cli(*server, {"variants", "register", "saxpy",
                            "saxpy_nv=device={arch(nvptx)}"})
                  .exit_code,
              0);
    Stop(*server);
  }
  // STATE records a later revision than ctxsel.db holds: data is missing.
  {
    const std::string state = data_dir_ + "/STATE";
    const int fd = open(state.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    const std::string text = "ctxsel store state 1\nrevision 9\nvariants 1\n";
    ASSERT_EQ(write(fd, text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
    close(fd);
  }
  FillDisk();
  CommandResult start =
      RunCommand({ServerPath(), "--insecure", "--listen=127.0.0.1:0",
                  "--data_dir=" + data_dir_});
  EXPECT_NE(start.exit_code, 0);
  EXPECT_THAT(start.stderr_text + start.stdout_text, HasSubstr("DATA_LOSS"));
}

}  // namespace
}  // namespace ctxsel::testing
