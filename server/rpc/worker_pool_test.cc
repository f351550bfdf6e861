#include "server/rpc/worker_pool.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;

TEST(WorkerPoolTest, RunsEverythingQueuedBeforeItIsDestroyed) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool({.threads = 2, .max_queued = 100});
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(pool.Submit([&ran] { ++ran; }).ok());
    }
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(WorkerPoolTest, RefusesWorkBeyondTheQueueWhileEveryThreadIsBusy) {
  WorkerPool pool({.threads = 1, .max_queued = 2});
  absl::Notification started, release;
  ASSERT_TRUE(pool.Submit([&] {
                    started.Notify();
                    release.WaitForNotification();
                  })
                  .ok());
  started.WaitForNotification();  // the one thread is busy
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.Submit([&ran] { ++ran; }).ok());
  EXPECT_TRUE(pool.Submit([&ran] { ++ran; }).ok());
  absl::Status refused = pool.Submit([&ran] { ++ran; });
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("2 calls already wait"));
  release.Notify();
  // Room again once the queue drains.
  absl::Notification drained;
  while (!pool.Submit([&drained] { drained.Notify(); }).ok()) {
  }
  drained.WaitForNotification();
  EXPECT_EQ(ran.load(), 2);
}

}  // namespace
}  // namespace ctxsel::server
