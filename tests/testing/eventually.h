// Polls a condition until it holds or a timeout passes, for tests that
// wait on another thread or process.
//
//   ASSERT_TRUE(Eventually([&] { return (*claims)->Find("c-9").ok(); }));
#ifndef CTXSEL_TESTS_TESTING_EVENTUALLY_H_
#define CTXSEL_TESTS_TESTING_EVENTUALLY_H_

#include <chrono>
#include <thread>

namespace ctxsel::testing {

// True as soon as `done()` is; false if it is still false after `timeout`.
template <typename Done>
bool Eventually(Done done,
                std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace ctxsel::testing

#endif  // CTXSEL_TESTS_TESTING_EVENTUALLY_H_
