#include "selector/fuzz_driver.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ctxsel::fuzzing {
namespace {

const char* kTokens[] = {"<token>"};

TEST(FuzzDriverTest, MutationsAreDeterministicAndChangeTheInput) {
  std::mt19937 a(7), b(7);
  int changed = 0;
  for (int i = 0; i < 100; ++i) {
    std::string x = Mutate("construct={parallel}", {kTokens, 4}, a);
    EXPECT_EQ(x, Mutate("construct={parallel}", {kTokens, 4}, b));
    if (x != "construct={parallel}") ++changed;
  }
  EXPECT_GT(changed, 50);
}

std::vector<std::string>* fed = nullptr;

int Record(const uint8_t* data, size_t size) {
  fed->emplace_back(reinterpret_cast<const char*>(data), size);
  return 0;
}

TEST(FuzzDriverTest, FeedsSeedsFirstThenMutations) {
  std::vector<std::string> inputs;
  fed = &inputs;
  FeedSeedsAndMutations(Record, {"ab", std::string("c\0d", 3)}, {kTokens, 2},
                        /*count=*/5, /*rng_seed=*/1);
  fed = nullptr;
  ASSERT_EQ(inputs.size(), 7u);
  EXPECT_EQ(inputs[0], "ab");
  EXPECT_EQ(inputs[1], std::string("c\0d", 3));
}

}  // namespace
}  // namespace ctxsel::fuzzing
