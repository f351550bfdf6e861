#include "bench/process_counters.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace ctxsel::bench {
namespace {

int Open(uint32_t type, uint64_t config, bool user_only = false) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = type;
  attr.config = config;
  attr.exclude_kernel = user_only;
  attr.exclude_hv = user_only;
  // Threads started later count into this fd: read() sums them.
  attr.inherit = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, /*pid=*/0,
                                  /*cpu=*/-1, /*group_fd=*/-1, 0));
}

double ReadFd(int fd) {
  uint64_t value = 0;
  if (fd < 0 || read(fd, &value, sizeof(value)) != sizeof(value)) return 0;
  return static_cast<double>(value);
}

}  // namespace

ProcessCounters::ProcessCounters()
    : instructions_fd_(Open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS)),
      user_fd_(Open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
                    /*user_only=*/true)),
      switches_fd_(Open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES)) {}

ProcessCounters::~ProcessCounters() {
  if (instructions_fd_ >= 0) close(instructions_fd_);
  if (user_fd_ >= 0) close(user_fd_);
  if (switches_fd_ >= 0) close(switches_fd_);
}

ProcessCounters::Values ProcessCounters::Read() const {
  // ReadFd gives 0 for a counter the kernel refused.
  return {ReadFd(instructions_fd_), ReadFd(user_fd_), ReadFd(switches_fd_)};
}

}  // namespace ctxsel::bench
