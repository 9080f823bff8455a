#pragma once
// The clock of a job's timings: steady time less what this thread spent waiting for its turn in a
// ring of jobs that share prefills (harness/prefill_sharing.hpp), so that a job's prefill and
// decode seconds count its own work, as if it ran alone. Outside a ring it is the steady clock.
#include <chrono>

namespace kvbench::models {

struct JobClock {
  using duration = std::chrono::steady_clock::duration;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<JobClock>;
  static constexpr bool is_steady = true;
  static time_point now() { return time_point(std::chrono::steady_clock::now().time_since_epoch() - waited()); }
  // This thread's time spent waiting for a turn (the ring adds to it).
  static duration& waited() {
    thread_local duration total{0};
    return total;
  }
};

}  // namespace kvbench::models
