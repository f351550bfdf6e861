#include "selector/fuzz_driver.h"

namespace ctxsel::fuzzing {

std::string Mutate(std::string s, const Mutations& mutations,
                   std::mt19937& rng) {
  int edits = 1 + rng() % 4;
  for (int i = 0; i < edits; ++i) {
    size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 4) {
      case 0:
        s.insert(at, mutations.tokens[rng() % mutations.tokens.size()]);
        break;
      case 1:
        if (at < s.size()) s.erase(at, 1 + rng() % mutations.max_erase);
        break;
      case 2:
        if (at < s.size()) s[at] = static_cast<char>(rng() % 256);
        break;
      default:
        s = s.substr(0, at);
    }
  }
  return s;
}

void Feed(FuzzEntry entry, const std::string& input) {
  entry(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

void FeedSeedsAndMutations(FuzzEntry entry,
                           const std::vector<std::string>& seeds,
                           const Mutations& mutations, int count,
                           uint32_t rng_seed) {
  std::mt19937 rng(rng_seed);
  for (const std::string& seed : seeds) Feed(entry, seed);
  for (int i = 0; i < count; ++i) {
    Feed(entry, Mutate(seeds[rng() % seeds.size()], mutations, rng));
  }
}

}  // namespace ctxsel::fuzzing
