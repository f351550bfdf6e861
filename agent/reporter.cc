#include "agent/reporter.h"

#include <algorithm>
#include <utility>

#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace ctxsel::agent {
namespace {

Backoff::Options BackoffFor(const Reporter::Options& options) {
  Backoff::Options b = options.backoff;
  if (b.max <= absl::ZeroDuration()) b.max = options.heartbeat;
  if (b.initial <= absl::ZeroDuration()) b.initial = b.max / 8;
  return b;
}

}  // namespace

Reporter::Reporter(Options options, DiscoverFn discover,
                   InventoryTransport& transport, Clock& clock,
                   std::function<double()> uniform01)
    : options_(std::move(options)),
      discover_(std::move(discover)),
      transport_(transport),
      clock_(clock),
      backoff_(BackoffFor(options_), std::move(uniform01)),
      interval_(options_.heartbeat) {}

absl::Status Reporter::Run() {
  while (!clock_.stopped()) {
    absl::Status s = Report(discover_());
    if (s.ok()) {
      std::shared_ptr<HeartbeatStream> stream = OpenStream();
      s = BeatLoop(*stream);
      CloseStream();
      if (clock_.stopped()) break;
    }
    ++stats_.failures;
    if (options_.metrics != nullptr) options_.metrics->RecordReconnect();
    absl::Duration wait = backoff_.Next();
    // The first failure of a streak is news; the retries that follow are not.
    spdlog::log(
        s.code() == last_failure_ ? spdlog::level::debug : spdlog::level::warn,
        "node {}: {}; retrying in {}", options_.node, s.ToString(),
        absl::FormatDuration(wait));
    last_failure_ = s.code();
    if (!clock_.SleepFor(wait)) break;
  }
  if (!ever_reported_) return absl::OkStatus();
  absl::Status s = transport_.Deregister(options_.node);
  stats_.deregistered = s.ok();
  if (s.ok()) spdlog::info("node {}: deregistered", options_.node);
  return s;
}

void Reporter::Stop() {
  clock_.Stop();
  absl::MutexLock lock(&mu_);
  if (stream_) stream_->Cancel();
}

absl::Status Reporter::Report(const std::vector<DeviceInfo>& devices) {
  CTXSEL_ASSIGN_OR_RETURN(ReportAnswer answer,
                          transport_.ReportNode(options_.node, devices));
  ++stats_.reports;
  if (options_.metrics != nullptr) options_.metrics->RecordReport();
  ever_reported_ = true;
  reported_ = devices;
  UseServerInterval(answer.heartbeat_interval);
  spdlog::info("node {}: reported {} devices to server {}", options_.node,
               devices.size(), answer.server_instance);
  return absl::OkStatus();
}

absl::Status Reporter::BeatLoop(HeartbeatStream& stream) {
  absl::Time next = clock_.Now() + interval_;
  while (clock_.SleepUntil(next)) {
    // Fixed rate, but never a burst of beats to catch up after a stall.
    next = std::max(next + interval_, clock_.Now());
    CTXSEL_RETURN_IF_ERROR(BeatOnce(stream));
  }
  return absl::CancelledError("stopped");
}

absl::Status Reporter::BeatOnce(HeartbeatStream& stream) {
  std::vector<DeviceInfo> devices = discover_();
  if (!SameDeviceSet(devices, reported_)) {
    spdlog::info("node {}: device set changed ({} -> {} devices)",
                 options_.node, reported_.size(), devices.size());
    CTXSEL_RETURN_IF_ERROR(Report(devices));
    ++stats_.changes;
  }
  CTXSEL_ASSIGN_OR_RETURN(BeatAnswer answer,
                          stream.Beat(options_.node, devices));
  ++stats_.beats;
  if (options_.metrics != nullptr) options_.metrics->RecordBeat();
  backoff_.Reset();
  last_failure_ = absl::StatusCode::kOk;
  UseServerInterval(answer.heartbeat_interval);
  if (answer.rereport) {
    spdlog::info("node {}: server asks for a report: {}", options_.node,
                 answer.message);
    CTXSEL_RETURN_IF_ERROR(Report(devices));
    ++stats_.rereports;
  }
  return absl::OkStatus();
}

void Reporter::UseServerInterval(absl::Duration server_interval) {
  if (server_interval <= absl::ZeroDuration()) return;  // 0: unchanged
  const absl::Duration interval = std::min(options_.heartbeat, server_interval);
  // Logged first and when it changes, so the log says the interval
  // followed, not the flag's (the server's is usually shorter).
  if (interval != interval_ || !interval_logged_) {
    spdlog::info("node {}: heartbeat every {} (server asks {}, --heartbeat={})",
                 options_.node, absl::FormatDuration(interval),
                 absl::FormatDuration(server_interval),
                 absl::FormatDuration(options_.heartbeat));
  }
  interval_ = interval;
  interval_logged_ = true;
}

std::shared_ptr<HeartbeatStream> Reporter::OpenStream() {
  std::shared_ptr<HeartbeatStream> stream = transport_.OpenHeartbeat();
  absl::MutexLock lock(&mu_);
  stream_ = stream;
  if (clock_.stopped()) stream_->Cancel();  // Stop() came in between
  return stream;
}

void Reporter::CloseStream() {
  absl::MutexLock lock(&mu_);
  stream_.reset();
}

}  // namespace ctxsel::agent
