// Watchers' memory is bounded per watcher (issue 22, item 5): the real
// ctxsel-server under node churn (bench/load/churn_memory.cc, the real
// ctxsel-churn tool) with 200 WatchInventory streams that never read,
// against the same churn with none, each on a connection whose
// flow-control window stays small, so that the server really holds what
// they do not take (with gRPC's default, growing window the client
// transport takes everything: the server's peak then depended on load).
// Growth is the server's anonymous RSS from before the watchers open to
// the end, so it holds each watcher's whole footprint however late a loaded
// server starts the watches (it was measured from 2 s after they opened:
// +2 MiB idle, +120 MiB under load). Before shared snapshots each watch
// copied the whole fleet for its initial snapshot: +250 MiB.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/testing/server_process.h"

namespace ctxsel::testing {
namespace {

// What 200 never-read watchers may add to the server's growth over the
// churn: their connections, streams and pointers to shared snapshots
// (measured: about 14 MiB).
constexpr double kWatchersBoundMib = 20;

// The server's RSS growth (MiB) over 3,000 reports with `watchers`
// never-read watchers; negative when the run fails.
double Growth(int watchers) {
  auto server = ServerProcess::Start({"--node_ttl=1h"});
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return -1;
  CommandResult run =
      RunCommand({RunfilePath("bench/load/ctxsel-churn"),
                  "--server=" + (*server)->address(),
                  absl::StrCat("--server_pid=", (*server)->process().pid()),
                  absl::StrCat("--watchers=", watchers), "--nodes=200",
                  "--reports=3000", "--duration=240s", "--sample_every=60s"},
                 std::chrono::seconds(300));
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
  std::printf("%d watchers:\n%s", watchers, run.stdout_text.c_str());
  for (absl::string_view line : absl::StrSplit(run.stdout_text, '\n')) {
    const size_t at = line.find("growth_mib=");
    double growth = 0;
    if (at != absl::string_view::npos &&
        absl::SimpleAtod(line.substr(at + 11), &growth)) {
      return growth;
    }
  }
  ADD_FAILURE() << "no growth_mib in:\n" << run.stdout_text;
  return -1;
}

TEST(WatchMemoryE2E, NeverReadWatchersCostABoundedAmountUnderChurn) {
  const double without = Growth(0);
  const double with = Growth(200);
  ASSERT_GE(without, 0);
  ASSERT_GE(with, 0);
  std::printf(
      "MEASURE RSS growth over 3000 reports: %.1f MiB without "
      "watchers, %.1f MiB with 200 never-read watchers\n",
      without, with);
  EXPECT_LT(with - without, kWatchersBoundMib);
}

}  // namespace
}  // namespace ctxsel::testing
