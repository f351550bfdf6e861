// proc_status.h: reads a process's memory and thread count from
// /proc/<pid>/status (Linux), for ctxsel-load's --server_pid report.
//
//   absl::StatusOr<ProcStatus> s = ReadProcStatus(server_pid);
//   // s->rss_bytes, s->anon_rss_bytes, s->peak_rss_bytes, s->threads
#ifndef CTXSEL_BENCH_LOAD_PROC_STATUS_H_
#define CTXSEL_BENCH_LOAD_PROC_STATUS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ctxsel::load {

struct ProcStatus {
  int64_t rss_bytes = 0;  // VmRSS
  // RssAnon (VmRSS where the kernel has no RssAnon): the heap, without the
  // program's code pages, which come and go with the paths that run.
  int64_t anon_rss_bytes = 0;
  int64_t peak_rss_bytes = 0;  // VmHWM
  int threads = 0;             // Threads
};

// NotFoundError when the process does not exist; DataLossError when a
// field is missing or malformed.
absl::StatusOr<ProcStatus> ReadProcStatus(pid_t pid);

// Parses the text of a /proc/<pid>/status file.
absl::StatusOr<ProcStatus> ParseProcStatus(const std::string& text);

}  // namespace ctxsel::load

#endif  // CTXSEL_BENCH_LOAD_PROC_STATUS_H_
