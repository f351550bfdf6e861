// proto_time.h: absl::Duration and absl::Time <-> google.protobuf.Duration
// and Timestamp, the wire form of every duration and time in ctxsel.v1
// (docs/api.md, "API conventions"). Server, agent and CLI convert here.
//
//   *response.mutable_heartbeat_interval() = ToProtoDuration(interval);
//   absl::StatusOr<absl::Duration> d =
//       DurationFromProto(request.claim().duration(), "claim.duration");
#ifndef CTXSEL_BASE_PROTO_TIME_H_
#define CTXSEL_BASE_PROTO_TIME_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace ctxsel {

// Exact to the nanosecond; infinite durations saturate to the largest
// Duration the type allows.
google::protobuf::Duration ToProtoDuration(absl::Duration duration);
// Whatever `duration` holds, even out of the type's range.
absl::Duration FromProtoDuration(const google::protobuf::Duration& duration);
// A request's Duration, checked: INVALID_ARGUMENT "<field>: ..." (with a
// BadRequest) when its seconds or nanos are out of range or their signs
// differ, as google/protobuf/duration.proto defines it.
absl::StatusOr<absl::Duration> DurationFromProto(
    const google::protobuf::Duration& duration, absl::string_view field);

// absl::InfinitePast() (a time never set) is the empty Timestamp.
google::protobuf::Timestamp ToProtoTimestamp(absl::Time time);
absl::Time FromProtoTimestamp(const google::protobuf::Timestamp& timestamp);

}  // namespace ctxsel

#endif  // CTXSEL_BASE_PROTO_TIME_H_
