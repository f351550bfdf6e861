#include "bench/load/proc_status.h"

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace ctxsel::load {
namespace {

// The number of "Name:   1234 kB" (or without a unit).
absl::StatusOr<int64_t> Field(const std::string& text, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, name) || !absl::ConsumePrefix(&rest, ":")) {
      continue;
    }
    rest = absl::StripAsciiWhitespace(rest);
    const bool kilobytes = absl::ConsumeSuffix(&rest, " kB");
    int64_t value = 0;
    if (!absl::SimpleAtoi(rest, &value)) break;
    return kilobytes ? value * 1024 : value;
  }
  return absl::DataLossError(
      absl::StrCat("/proc status: no readable field '", name, "'"));
}

}  // namespace

absl::StatusOr<ProcStatus> ParseProcStatus(const std::string& text) {
  ProcStatus status;
  CTXSEL_ASSIGN_OR_RETURN(int64_t rss, Field(text, "VmRSS"));
  CTXSEL_ASSIGN_OR_RETURN(int64_t peak, Field(text, "VmHWM"));
  CTXSEL_ASSIGN_OR_RETURN(int64_t threads, Field(text, "Threads"));
  status.rss_bytes = rss;
  absl::StatusOr<int64_t> anon = Field(text, "RssAnon");
  status.anon_rss_bytes = anon.ok() ? *anon : rss;
  status.peak_rss_bytes = peak;
  status.threads = static_cast<int>(threads);
  return status;
}

absl::StatusOr<ProcStatus> ReadProcStatus(pid_t pid) {
  const std::string path = absl::StrCat("/proc/", pid, "/status");
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("server_pid: cannot read ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseProcStatus(text.str());
}

}  // namespace ctxsel::load
