#include "selector/fuzz_driver.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

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

std::vector<std::string> ReadCorpus(const std::string& dir) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::filesystem::path root =
      srcdir != nullptr ? std::filesystem::path(srcdir) / "ctxsel" : ".";
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(root / dir, error)) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> inputs;
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    inputs.push_back(bytes.str());
  }
  return inputs;
}

}  // namespace ctxsel::fuzzing
