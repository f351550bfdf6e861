#include "server/claims/wait_queue.h"

#include "base/status_details.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1000);

uint64_t Push(WaitQueue& queue, int priority = 0,
              absl::Duration wait = absl::Minutes(1)) {
  Waiter w;
  w.priority = priority;
  w.since = kT0;
  w.deadline = kT0 + wait;
  absl::StatusOr<uint64_t> id = queue.Push(w);
  EXPECT_TRUE(id.ok()) << id.status();
  return id.value_or(0);
}

TEST(WaitQueueTest, FifoWithinAPriority) {
  WaitQueue queue;
  const uint64_t a = Push(queue), b = Push(queue), c = Push(queue);
  EXPECT_THAT(queue.Order(), ElementsAre(a, b, c));
  EXPECT_TRUE(queue.Served(a));
  EXPECT_THAT(queue.Order(), ElementsAre(b, c));
  EXPECT_FALSE(queue.Served(a));  // not waiting any more
}

TEST(WaitQueueTest, HigherPriorityFirstThenArrival) {
  WaitQueue queue;
  const uint64_t low1 = Push(queue, 0), high1 = Push(queue, 5),
                 low2 = Push(queue, 0), high2 = Push(queue, 5),
                 mid = Push(queue, 2);
  EXPECT_THAT(queue.Order(), ElementsAre(high1, high2, mid, low1, low2));
  std::vector<Waiter> listed = queue.List();
  ASSERT_EQ(listed.size(), 5u);
  EXPECT_EQ(listed[0].id, high1);
  EXPECT_EQ(listed[0].priority, 5);
}

TEST(WaitQueueTest, StarvationBoundPromotesAfterMaxOvertakes) {
  WaitQueue queue({.max_waiters = 100, .max_overtakes = 3});
  const uint64_t old = Push(queue, 0);
  std::vector<uint64_t> high;
  for (int i = 0; i < 5; ++i) high.push_back(Push(queue, 9));
  EXPECT_EQ(queue.Order().front(), high[0]);
  // Two later arrivals served: still behind the higher priority.
  queue.Served(high[0]);
  queue.Served(high[1]);
  EXPECT_EQ(queue.Order().front(), high[2]);
  EXPECT_EQ(queue.Find(old)->overtaken, 2);
  // The third overtake promotes it ahead of every priority.
  queue.Served(high[2]);
  EXPECT_THAT(queue.Order(), ElementsAre(old, high[3], high[4]));
  EXPECT_TRUE(queue.Find(old)->promoted);
  // Serving an earlier waiter does not count as an overtake.
  EXPECT_EQ(queue.Find(high[4])->overtaken, 0);
}

TEST(WaitQueueTest, PromotedAmongThemselvesByArrival) {
  WaitQueue queue({.max_waiters = 100, .max_overtakes = 1});
  const uint64_t a = Push(queue, 0), b = Push(queue, 1), c = Push(queue, 9);
  queue.Served(c);  // overtakes a and b: both promoted
  EXPECT_THAT(queue.Order(), ElementsAre(a, b));
}

TEST(WaitQueueTest, RemoveAndDeadlines) {
  WaitQueue queue;
  const uint64_t a = Push(queue, 0, absl::Seconds(10));
  const uint64_t b = Push(queue, 0, absl::Seconds(30));
  const uint64_t c = Push(queue, 0, absl::Seconds(20));
  EXPECT_THAT(queue.ExpiredAt(kT0 + absl::Seconds(5)), IsEmpty());
  EXPECT_THAT(queue.ExpiredAt(kT0 + absl::Seconds(20)), ElementsAre(a, c));
  EXPECT_TRUE(queue.Remove(c));  // cancelled
  EXPECT_FALSE(queue.Remove(c));
  EXPECT_THAT(queue.Order(), ElementsAre(a, b));
  // A removed waiter is no overtake of anyone.
  EXPECT_EQ(queue.Find(a)->overtaken, 0);
}

TEST(WaitQueueTest, FullQueueIsRefusedWithAReason) {
  WaitQueue queue({.max_waiters = 2, .max_overtakes = 16});
  const uint64_t a = Push(queue);
  Push(queue);
  Waiter w;
  absl::StatusOr<uint64_t> third = queue.Push(w);
  ASSERT_TRUE(absl::IsResourceExhausted(third.status())) << third.status();
  auto info = GetDetail<google::rpc::ErrorInfo>(third.status());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "CLAIM_QUEUE_FULL");
  queue.Remove(a);
  EXPECT_TRUE(queue.Push(w).ok());  // room again
  EXPECT_EQ(queue.size(), 2);
}

}  // namespace
}  // namespace ctxsel::server
