#include "bench/load/proc_status.h"

#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::load {
namespace {

TEST(ProcStatusTest, ParsesKilobytesAndCounts) {
  auto s = ParseProcStatus(
      "Name:\tctxsel-server\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n"
      "Threads:\t17\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rss_bytes, 1024 * 1024);
  EXPECT_EQ(s->peak_rss_bytes, 2048 * 1024);
  EXPECT_EQ(s->threads, 17);
  EXPECT_EQ(s->anon_rss_bytes, s->rss_bytes);  // no RssAnon: VmRSS
}

TEST(ProcStatusTest, ReadsAnonymousRss) {
  auto s = ParseProcStatus(
      "VmHWM:\t 4096 kB\nVmRSS:\t 3072 kB\nRssAnon:\t 1024 kB\nThreads:\t2\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->anon_rss_bytes, 1024 * 1024);
  EXPECT_EQ(s->rss_bytes, 3072 * 1024);
}

TEST(ProcStatusTest, MissingFieldIsNamed) {
  auto s = ParseProcStatus("VmRSS:\t1 kB\nThreads:\t1\n");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.status().message(), ::testing::HasSubstr("VmHWM"));
}

TEST(ProcStatusTest, ReadsThisProcess) {
  auto s = ReadProcStatus(getpid());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT(s->rss_bytes, 0);
  EXPECT_GE(s->threads, 1);
  EXPECT_EQ(ReadProcStatus(-1).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ctxsel::load
