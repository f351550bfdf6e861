#include "server/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ctxsel::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Everything `metrics` serves, in the text format.
std::string Text(const Metrics& metrics) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& weak : metrics.collectables()) {
    auto collectable = weak.lock();
    if (collectable == nullptr) continue;
    for (auto& family : collectable->Collect()) {
      families.push_back(std::move(family));
    }
  }
  return prometheus::TextSerializer().Serialize(families);
}

TEST(MetricsTest, RpcsCountedByMethodAndCodeWithLatency) {
  Metrics metrics;
  metrics.RecordRpc("/ctxsel.v1.Placement/Select", grpc::StatusCode::OK,
                    absl::Milliseconds(2));
  metrics.RecordRpc("/ctxsel.v1.Placement/Select", grpc::StatusCode::OK,
                    absl::Milliseconds(3));
  metrics.RecordRpc("/ctxsel.v1.Placement/Select", grpc::StatusCode::NOT_FOUND,
                    absl::Milliseconds(1));
  const std::string text = Text(metrics);
  EXPECT_THAT(text, HasSubstr("ctxsel_rpc_requests_total{code=\"OK\",method="
                              "\"/ctxsel.v1.Placement/Select\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("ctxsel_rpc_requests_total{code=\"NOT_FOUND\",method="
                        "\"/ctxsel.v1.Placement/Select\"} 1"));
  EXPECT_THAT(text, HasSubstr("ctxsel_rpc_duration_seconds_count{method="
                              "\"/ctxsel.v1.Placement/Select\"} 3"));
  EXPECT_THAT(text, HasSubstr("ctxsel_rpc_duration_seconds_sum{method="
                              "\"/ctxsel.v1.Placement/Select\"} 0.006"));
}

TEST(MetricsTest, MethodsPastTheCapShareOther) {
  Metrics metrics;
  for (int i = 0; i < Metrics::kMaxMethods + 10; ++i) {
    metrics.RecordRpc(absl::StrCat("/x.Y/M", i),
                      grpc::StatusCode::UNIMPLEMENTED, absl::ZeroDuration());
  }
  const std::string text = Text(metrics);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("method=\"/x.Y/M",
                                           Metrics::kMaxMethods - 1, "\"")));
  EXPECT_THAT(text, Not(HasSubstr(absl::StrCat("method=\"/x.Y/M",
                                               Metrics::kMaxMethods, "\""))));
  EXPECT_THAT(text,
              HasSubstr("ctxsel_rpc_requests_total{code=\"UNIMPLEMENTED\","
                        "method=\"other\"} 10"));
}

TEST(MetricsTest, SelectionsByOutcomeAndPolicyStartAtZero) {
  Metrics metrics;
  metrics.RecordSelection(SelectionOutcome::kClaimedOut, Policy::kPack);
  const std::string text = Text(metrics);
  EXPECT_THAT(text, HasSubstr("ctxsel_selections_total{outcome=\"claimed_out\","
                              "policy=\"pack\"} 1"));
  EXPECT_THAT(text, HasSubstr("ctxsel_selections_total{outcome=\"variant\","
                              "policy=\"spread\"} 0"));
}

TEST(MetricsTest, FleetGaugesReadAtScrapeTime) {
  Metrics metrics;
  FleetCounts counts;
  metrics.SetFleetSource([&counts] { return counts; });
  counts.healthy_nodes = 2;
  counts.suspect_nodes = 1;
  counts.healthy_devices = 9;
  counts.active_claims = 4;
  counts.claim_waiters = 3;
  counts.resolution_hits = 7;
  counts.resolution_rebuild_seconds = 0.25;
  const std::string text = Text(metrics);
  EXPECT_THAT(
      text,
      HasSubstr("ctxsel_resolution_cache_lookups_total{result=\"hit\"} 7"));
  EXPECT_THAT(text, HasSubstr("ctxsel_resolution_rebuild_seconds_total 0.25"));
  EXPECT_THAT(text, HasSubstr("ctxsel_nodes{state=\"healthy\"} 2"));
  EXPECT_THAT(text, HasSubstr("ctxsel_nodes{state=\"suspect\"} 1"));
  EXPECT_THAT(text, HasSubstr("ctxsel_devices{state=\"healthy\"} 9"));
  EXPECT_THAT(text, HasSubstr("ctxsel_claims_active 4"));
  EXPECT_THAT(text, HasSubstr("ctxsel_claim_waiters 3"));
}

TEST(MetricsTest, ClaimWaitsByOutcome) {
  Metrics metrics;
  metrics.RecordClaimWait("granted", absl::Seconds(2));
  metrics.RecordClaimWait("granted", absl::Seconds(40));
  metrics.RecordClaimWait("expired", absl::Minutes(10));
  const std::string text = Text(metrics);
  EXPECT_THAT(text, HasSubstr("ctxsel_claim_wait_seconds_count{outcome="
                              "\"granted\"} 2"));
  EXPECT_THAT(text, HasSubstr("ctxsel_claim_wait_seconds_sum{outcome="
                              "\"granted\"} 42"));
  EXPECT_THAT(text, HasSubstr("ctxsel_claim_wait_seconds_bucket{outcome="
                              "\"expired\",le=\"900\"} 1"));
}

TEST(MetricsTest, StoreWritesTimedAndFailuresCounted) {
  Metrics metrics;
  metrics.RecordStoreWrite("variants", true, absl::Milliseconds(5));
  metrics.RecordStoreWrite("claims", false, absl::Milliseconds(1));
  metrics.RecordHeartbeat(true);
  metrics.RecordHeartbeat(false, /*late=*/true);
  metrics.RecordNodesExpired(2);
  metrics.RecordWatcher(+1);
  metrics.RecordWatcher(+1);
  metrics.RecordWatcher(-1);
  metrics.RecordWatchLag(absl::Milliseconds(3));
  const std::string text = Text(metrics);
  EXPECT_THAT(text, HasSubstr("ctxsel_watchers 1"));
  EXPECT_THAT(text, HasSubstr("ctxsel_watch_lag_seconds_count 1"));
  EXPECT_THAT(text, HasSubstr("ctxsel_store_write_duration_seconds_count{what="
                              "\"variants\"} 1"));
  EXPECT_THAT(
      text, HasSubstr("ctxsel_store_write_failures_total{what=\"claims\"} 1"));
  EXPECT_THAT(
      text,
      Not(HasSubstr("ctxsel_store_write_failures_total{what=\"variants\"}")));
  EXPECT_THAT(text,
              HasSubstr("ctxsel_heartbeats_total{answer=\"rereport\"} 1"));
  EXPECT_THAT(text, HasSubstr("ctxsel_heartbeats_late_total 1"));
  EXPECT_THAT(text, HasSubstr("ctxsel_nodes_expired_total 2"));
}

}  // namespace
}  // namespace ctxsel::server
