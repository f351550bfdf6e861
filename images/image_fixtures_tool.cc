// Writes fixture binaries and lists a binary's images, for the shell and
// e2e tests:
//   image_fixtures_tool cuda OUT ptx:sm_80 cubin:sm_90 ...
//   image_fixtures_tool hip OUT gfx90a:xnack- gfx908 ...
//   image_fixtures_tool list FILE        (one image id a line)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "images/binary_file.h"
#include "images/image_fixtures.h"

namespace {

using ctxsel::images::testing::FatbinEntry;

int Usage() {
  std::cerr << "usage: image_fixtures_tool cuda|hip OUT IMAGE... | list FILE\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  const std::string mode = argv[1];
  if (mode == "list") {
    auto found = ctxsel::images::ReadBinaryFile(argv[2]);
    if (!found.ok()) {
      std::cerr << found.status().message() << "\n";
      return 1;
    }
    for (const auto& image : found->images) {
      std::cout << ctxsel::images::ImageId(image) << "\n";
    }
    return 0;
  }
  std::string bytes;
  if (mode == "cuda") {
    std::vector<FatbinEntry> entries;
    for (int i = 3; i < argc; ++i) {
      absl::string_view id = argv[i];
      FatbinEntry e;
      e.ptx = absl::ConsumePrefix(&id, "ptx:sm_");
      if (!e.ptx && !absl::ConsumePrefix(&id, "cubin:sm_")) {
        return Usage();
      }
      if (!absl::SimpleAtoi(id, &e.sm)) return Usage();
      entries.push_back(e);
    }
    bytes = ctxsel::images::testing::CudaHostBinary(entries);
  } else if (mode == "hip") {
    bytes = ctxsel::images::testing::HipHostBinary(
        std::vector<std::string>(argv + 3, argv + argc));
  } else {
    return Usage();
  }
  std::ofstream(argv[2], std::ios::binary) << bytes;
  return 0;
}
