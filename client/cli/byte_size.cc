#include "client/cli/byte_size.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ctxsel::cli {

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  static constexpr std::pair<const char*, uint64_t> kUnits[] = {
      {"kib", uint64_t{1} << 10},
      {"mib", uint64_t{1} << 20},
      {"gib", uint64_t{1} << 30},
      {"tib", uint64_t{1} << 40},
      {"kb", 1000},
      {"mb", 1000 * 1000},
      {"gb", 1000 * 1000 * 1000},
      {"tb", uint64_t{1000} * 1000 * 1000 * 1000},
      {"b", 1}};
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "': expected a size like 60GiB"));
  };
  size_t digits = 0;
  while (digits < text.size() && absl::ascii_isdigit(text[digits])) ++digits;
  const std::string unit = absl::AsciiStrToLower(text.substr(digits));
  uint64_t number = 0;
  if (digits == 0 || !absl::SimpleAtoi(text.substr(0, digits), &number)) {
    return bad();
  }
  uint64_t scale = unit.empty() ? 1 : 0;
  for (const auto& [name, value] : kUnits) {
    if (unit == name) scale = value;
  }
  if (scale == 0 || number > std::numeric_limits<uint64_t>::max() / scale) {
    return bad();
  }
  return number * scale;
}

}  // namespace ctxsel::cli
