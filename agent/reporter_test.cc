#include "agent/reporter.h"

#include <atomic>
#include <deque>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "base/fake_clock.h"
#include "gtest/gtest.h"

namespace ctxsel::agent {
namespace {

// Records every call with the fake time (ms since start), answers from
// scripts, and stops the clock after `stop_after` events.
class FakeTransport : public InventoryTransport {
 public:
  explicit FakeTransport(FakeClock& clock) : clock_(clock) {}

  std::deque<absl::Status> report_results;  // OK when empty
  std::deque<absl::StatusOr<BeatAnswer>> beat_results;
  ReportAnswer report_answer;
  std::vector<std::string> events;
  std::vector<std::vector<DeviceInfo>> reported;
  size_t stop_after = 1000;

  absl::StatusOr<ReportAnswer> ReportNode(
      const std::string& node,
      const std::vector<DeviceInfo>& devices) override {
    absl::Status s = Pop(report_results, absl::OkStatus());
    Record(absl::StrCat("report ", devices.size(), s.ok() ? "" : " failed"));
    if (!s.ok()) return s;
    reported.push_back(devices);
    return report_answer;
  }

  std::unique_ptr<HeartbeatStream> OpenHeartbeat() override {
    return std::make_unique<Stream>(*this);
  }

  absl::Status Deregister(const std::string& node) override {
    events.push_back(absl::StrCat(Millis(), " deregister ", node));
    return absl::OkStatus();
  }

 private:
  struct Stream : HeartbeatStream {
    explicit Stream(FakeTransport& t) : t(t) {}
    absl::StatusOr<BeatAnswer> Beat(const std::string&,
                                    const std::vector<DeviceInfo>&) override {
      absl::StatusOr<BeatAnswer> a =
          t.Pop(t.beat_results, absl::StatusOr<BeatAnswer>(BeatAnswer()));
      t.Record(!a.ok()       ? "beat broken"
               : a->rereport ? "beat rereport"
                             : "beat");
      return a;
    }
    void Cancel() override {}
    FakeTransport& t;
  };

  template <typename T>
  static T Pop(std::deque<T>& queue, T fallback) {
    if (queue.empty()) return fallback;
    T front = queue.front();
    queue.pop_front();
    return front;
  }

  int64_t Millis() {
    return absl::ToInt64Milliseconds(clock_.Now() - absl::UnixEpoch());
  }

  void Record(const std::string& what) {
    events.push_back(absl::StrCat(Millis(), " ", what));
    if (events.size() >= stop_after) clock_.Stop();
  }

  FakeClock& clock_;
};

std::vector<DeviceInfo> Devices(int gpus) {
  std::vector<DeviceInfo> devices(gpus);
  for (DeviceInfo& d : devices) d.kind = {"gpu"};
  AssignIds("n7", devices);
  return devices;
}

struct Harness {
  FakeClock clock;
  FakeTransport transport{clock};
  std::function<int()> gpus_now = [] { return 2; };
  double jitter = 1.0;  // uniform01(): 1 waits the full ceiling

  Reporter Make(absl::Duration heartbeat = absl::Seconds(1)) {
    Reporter::Options options;
    options.node = "n7";
    options.heartbeat = heartbeat;
    return Reporter(
        options, [this] { return Devices(gpus_now()); }, transport, clock,
        [this] { return jitter; });
  }
};

using Events = std::vector<std::string>;

TEST(ReporterTest, ReportsAtConnectThenBeatsEachInterval) {
  Harness h;
  h.transport.stop_after = 4;
  Reporter reporter = h.Make(absl::Seconds(1));
  EXPECT_TRUE(reporter.Run().ok());
  EXPECT_EQ(h.transport.events, (Events{"0 report 2", "1000 beat", "2000 beat",
                                        "3000 beat", "3000 deregister n7"}));
  EXPECT_EQ(reporter.stats().beats, 3);
  EXPECT_TRUE(reporter.stats().deregistered);
}

TEST(ReporterTest, ReReportsAtOnceWhenTheServerDoesNotKnowTheNode) {
  Harness h;
  BeatAnswer unknown;
  unknown.rereport = true;
  unknown.message = "unknown node 'n7': re-report";
  h.transport.beat_results = {BeatAnswer(), unknown};
  h.transport.stop_after = 5;
  Reporter reporter = h.Make();
  EXPECT_TRUE(reporter.Run().ok());
  EXPECT_EQ(h.transport.events,
            (Events{"0 report 2", "1000 beat", "2000 beat rereport",
                    "2000 report 2", "3000 beat", "3000 deregister n7"}));
  EXPECT_EQ(reporter.stats().rereports, 1);
}

TEST(ReporterTest, ReconnectsWithExponentialBackoffCappedAtTheInterval) {
  Harness h;
  for (int i = 0; i < 6; ++i) {
    h.transport.report_results.push_back(absl::UnavailableError("down"));
  }
  h.transport.stop_after = 8;
  Reporter reporter = h.Make(absl::Milliseconds(800));  // backoff 100..800 ms
  EXPECT_TRUE(reporter.Run().ok());
  EXPECT_EQ(h.transport.events,
            (Events{"0 report 2 failed", "100 report 2 failed",
                    "300 report 2 failed", "700 report 2 failed",
                    "1500 report 2 failed", "2300 report 2 failed",
                    "3100 report 2", "3900 beat", "3900 deregister n7"}));
  EXPECT_EQ(reporter.stats().failures, 6);
}

TEST(ReporterTest, JitterDrawsBetweenHalfAndAllOfTheDelay) {
  Harness h;
  h.jitter = 0.0;
  h.transport.report_results = {absl::UnavailableError("down"),
                                absl::UnavailableError("down")};
  h.transport.stop_after = 3;
  Reporter reporter = h.Make(absl::Milliseconds(800));
  reporter.Run().IgnoreError();
  EXPECT_EQ(h.transport.events,
            (Events{"0 report 2 failed", "50 report 2 failed", "150 report 2",
                    "150 deregister n7"}));
}

TEST(ReporterTest, BrokenStreamReconnectsWithAFullReport) {
  Harness h;
  h.transport.beat_results = {BeatAnswer(), absl::UnavailableError("reset")};
  h.transport.stop_after = 5;
  Reporter reporter = h.Make();
  reporter.Run().IgnoreError();
  // Backoff starts at interval / 8 = 125 ms.
  EXPECT_EQ(h.transport.events,
            (Events{"0 report 2", "1000 beat", "2000 beat broken",
                    "2125 report 2", "3125 beat", "3125 deregister n7"}));
}

TEST(ReporterTest, ChangedDeviceSetIsReportedBeforeTheBeat) {
  Harness h;
  h.transport.stop_after = 4;
  int discoveries = 0;
  // The third discovery (second beat) sees a GPU gone.
  h.gpus_now = [&] { return ++discoveries < 3 ? 2 : 1; };
  Reporter reporter = h.Make();
  reporter.Run().IgnoreError();
  EXPECT_EQ(h.transport.events,
            (Events{"0 report 2", "1000 beat", "2000 report 1", "2000 beat",
                    "2000 deregister n7"}));
  EXPECT_EQ(reporter.stats().changes, 1);
  EXPECT_EQ(h.transport.reported.back().size(), 1u);
}

TEST(ReporterTest, UsesTheServersIntervalWhenItIsShorter) {
  Harness h;
  h.transport.report_answer.heartbeat_interval = absl::Milliseconds(250);
  h.transport.stop_after = 3;
  Reporter reporter = h.Make(absl::Seconds(5));
  reporter.Run().IgnoreError();
  EXPECT_EQ(h.transport.events, (Events{"0 report 2", "250 beat", "500 beat",
                                        "500 deregister n7"}));
  EXPECT_EQ(reporter.interval(), absl::Milliseconds(250));
}

TEST(ReporterTest, NothingToDeregisterIfNeverReported) {
  Harness h;
  h.transport.report_results = {absl::UnavailableError("down")};
  h.transport.stop_after = 1;
  Reporter reporter = h.Make();
  EXPECT_TRUE(reporter.Run().ok());
  EXPECT_EQ(h.transport.events, (Events{"0 report 2 failed"}));
  EXPECT_FALSE(reporter.stats().deregistered);
}

// A transport whose beat blocks until cancelled, like a gRPC read on a
// server that does not answer.
class BlockingTransport : public InventoryTransport {
 public:
  absl::Notification beating;
  std::atomic<bool> deregistered{false};

  absl::StatusOr<ReportAnswer> ReportNode(
      const std::string&, const std::vector<DeviceInfo>&) override {
    return ReportAnswer();
  }
  std::unique_ptr<HeartbeatStream> OpenHeartbeat() override {
    return std::make_unique<Stream>(*this);
  }
  absl::Status Deregister(const std::string&) override {
    deregistered = true;
    return absl::OkStatus();
  }

 private:
  struct Stream : HeartbeatStream {
    explicit Stream(BlockingTransport& t) : t(t) {}
    absl::StatusOr<BeatAnswer> Beat(const std::string&,
                                    const std::vector<DeviceInfo>&) override {
      if (!t.beating.HasBeenNotified()) t.beating.Notify();
      cancelled.WaitForNotification();
      return absl::CancelledError("cancelled");
    }
    void Cancel() override {
      if (!cancelled.HasBeenNotified()) cancelled.Notify();
    }
    BlockingTransport& t;
    absl::Notification cancelled;
  };
};

TEST(ReporterTest, StopCancelsABlockedBeatAndDeregisters) {
  RealClock clock;
  BlockingTransport transport;
  Reporter::Options options;
  options.node = "n7";
  options.heartbeat = absl::Milliseconds(1);
  Reporter reporter(
      options, [] { return Devices(1); }, transport, clock);
  std::thread run([&] { EXPECT_TRUE(reporter.Run().ok()); });
  transport.beating.WaitForNotification();
  reporter.Stop();
  run.join();
  EXPECT_TRUE(transport.deregistered);
}

}  // namespace
}  // namespace ctxsel::agent
