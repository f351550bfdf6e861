// Replays the images fuzz target's regression corpus
// (selector/fuzz/corpus/images/) without libFuzzer: any crash, sanitizer
// report or id that does not read back fails it.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

TEST(ImagesFuzzerTest, ReplaysTheRegressionCorpus) {
  int replayed = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("selector/fuzz/corpus/images")) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string input = bytes.str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()),
                           input.size());
    ++replayed;
  }
  EXPECT_GE(replayed, 4);
}

}  // namespace
