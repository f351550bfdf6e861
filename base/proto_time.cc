#include "base/proto_time.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_details.h"

namespace ctxsel {
namespace {

// google/protobuf/duration.proto: +-10,000 years.
constexpr int64_t kMaxDurationSeconds = 315'576'000'000;
constexpr int32_t kMaxNanos = 999'999'999;

}  // namespace

google::protobuf::Duration ToProtoDuration(absl::Duration duration) {
  google::protobuf::Duration out;
  if (duration == absl::InfiniteDuration() ||
      duration > absl::Seconds(kMaxDurationSeconds)) {
    out.set_seconds(kMaxDurationSeconds);
    return out;
  }
  if (duration == -absl::InfiniteDuration() ||
      duration < -absl::Seconds(kMaxDurationSeconds)) {
    out.set_seconds(-kMaxDurationSeconds);
    return out;
  }
  // Truncation toward zero keeps the seconds' and nanos' signs equal.
  const int64_t seconds =
      absl::IDivDuration(duration, absl::Seconds(1), &duration);
  out.set_seconds(seconds);
  out.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(duration)));
  return out;
}

absl::Duration FromProtoDuration(const google::protobuf::Duration& duration) {
  return absl::Seconds(duration.seconds()) +
         absl::Nanoseconds(duration.nanos());
}

absl::StatusOr<absl::Duration> DurationFromProto(
    const google::protobuf::Duration& duration, absl::string_view field) {
  const int64_t seconds = duration.seconds();
  const int32_t nanos = duration.nanos();
  if (seconds > kMaxDurationSeconds || seconds < -kMaxDurationSeconds) {
    return FieldViolation(
        field, absl::StrCat("seconds ", seconds, " out of range (at most ",
                            kMaxDurationSeconds, " either way)"));
  }
  if (nanos > kMaxNanos || nanos < -kMaxNanos) {
    return FieldViolation(field,
                          absl::StrCat("nanos ", nanos, " out of range"));
  }
  if ((seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0)) {
    return FieldViolation(
        field, absl::StrCat("seconds ", seconds, " and nanos ", nanos,
                            " have different signs"));
  }
  return FromProtoDuration(duration);
}

google::protobuf::Timestamp ToProtoTimestamp(absl::Time time) {
  google::protobuf::Timestamp out;
  if (time == absl::InfinitePast()) return out;
  const int64_t seconds = absl::ToUnixSeconds(time);
  out.set_seconds(seconds);
  out.set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(time - absl::FromUnixSeconds(seconds))));
  return out;
}

absl::Time FromProtoTimestamp(const google::protobuf::Timestamp& timestamp) {
  return absl::FromUnixSeconds(timestamp.seconds()) +
         absl::Nanoseconds(timestamp.nanos());
}

}  // namespace ctxsel
