// byte_size.h: sizes as people write them on a command line, "60GiB",
// "512MiB", "80GB", "1073741824" (bytes), for --min_memory and --memory.
//
//   absl::StatusOr<uint64_t> b = ParseByteSize("60GiB");  // 60 << 30
#ifndef CTXSEL_CLIENT_CLI_BYTE_SIZE_H_
#define CTXSEL_CLIENT_CLI_BYTE_SIZE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ctxsel::cli {

// A whole number with an optional unit: B, KiB, MiB, GiB, TiB (powers of
// 1024) or KB, MB, GB, TB (powers of 1000), case-insensitive; no unit is
// bytes. InvalidArgumentError "'60 GB': expected a size like 60GiB" for
// anything else, or a size that does not fit 64 bits.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

}  // namespace ctxsel::cli

#endif  // CTXSEL_CLIENT_CLI_BYTE_SIZE_H_
