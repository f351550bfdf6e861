// process_counters.h: instructions and context switches of this process,
// every thread started after the counters were opened included (Linux
// perf_event_open with inherit). An RPC bench that runs client and server
// in one process reads them around its loop: per call they do not change
// with the machine's load, as wall time does.
//
//   ProcessCounters counters;  // before the server starts its threads
//   ProcessCounters::Values start = counters.Read();
//   ... n calls ...
//   ProcessCounters::Values per_call = (counters.Read() - start) / n;
#ifndef CTXSEL_BENCH_PROCESS_COUNTERS_H_
#define CTXSEL_BENCH_PROCESS_COUNTERS_H_

#include <cstdint>

namespace ctxsel::bench {

class ProcessCounters {
 public:
  struct Values {
    double instructions = 0;  // user and kernel
    // User space only: what the kernel adds per context switch for the
    // counters themselves is not in it.
    double user_instructions = 0;
    double context_switches = 0;
    Values operator-(const Values& o) const {
      return {instructions - o.instructions,
              user_instructions - o.user_instructions,
              context_switches - o.context_switches};
    }
    Values operator/(double n) const {
      return {instructions / n, user_instructions / n, context_switches / n};
    }
  };

  // Opens the counters for this thread and the threads it starts from now
  // on; ok() is false where the kernel refuses (perf_event_paranoid, no
  // PMU in the VM).
  ProcessCounters();
  ~ProcessCounters();
  ProcessCounters(const ProcessCounters&) = delete;
  ProcessCounters& operator=(const ProcessCounters&) = delete;

  bool ok() const {
    return instructions_fd_ >= 0 && user_fd_ >= 0 && switches_fd_ >= 0;
  }
  // Whether user-space instructions are counted: the kernel allows that at
  // perf_event_paranoid 2, where it refuses the other two.
  bool user_ok() const { return user_fd_ >= 0; }
  // The counts so far (zero for each counter the kernel refused).
  Values Read() const;

 private:
  int instructions_fd_ = -1;
  int user_fd_ = -1;
  int switches_fd_ = -1;
};

}  // namespace ctxsel::bench

#endif  // CTXSEL_BENCH_PROCESS_COUNTERS_H_
