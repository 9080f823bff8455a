#include "harness/prefill_sharing.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "models/decode_batch.hpp"
#include "models/job_clock.hpp"
#include "models/prefill_share.hpp"

namespace kvbench::harness {
namespace {

// What a ring's jobs must agree on: the spec without the fields that say how to compress.
nlohmann::json prompt_fields(const nlohmann::json& spec) {
  nlohmann::json key = spec;
  for (const char* field : {"policy", "policy_params", "budget", "protocol", "block", "seed"}) key.erase(field);
  return key;
}

// A baton passed round the threads in index order, skipping finished ones. Each thread waits on
// its own condition variable: a pass wakes only the next thread (a ring's decode passes it at
// every projection, and waking all of a ring's threads each time would cost more than the step).
class Turns {
 public:
  explicit Turns(size_t n) : finished_(n, false), wakes_(n) {}
  void wait(size_t me) {
    std::unique_lock<std::mutex> lock(mutex_);
    wakes_[me].wait(lock, [&] { return turn_ == me; });
  }
  void pass(size_t me, bool finished) {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_[me] = finished_[me] || finished;
    const size_t n = finished_.size();
    turn_ = n;  // nobody, once every thread has finished
    for (size_t k = 1; k <= n; ++k)
      if (!finished_[(me + k) % n]) {
        turn_ = (me + k) % n;
        break;
      }
    if (turn_ < n) wakes_[turn_].notify_one();
  }

 private:
  std::mutex mutex_;
  std::vector<bool> finished_;
  std::vector<std::condition_variable> wakes_;
  size_t turn_ = 0;
};

}  // namespace

std::vector<std::vector<const Job*>> prefill_rings(const std::vector<Job>& jobs, size_t max_jobs) {
  std::vector<std::vector<const Job*>> rings;
  std::vector<std::pair<nlohmann::json, size_t>> open;  // key -> its ring still taking members
  for (const Job& job : jobs) {
    if (job.spec.value("protocol", "") == "stream") {
      rings.push_back({&job});
      continue;
    }
    const nlohmann::json key = prompt_fields(job.spec);
    auto it = std::find_if(open.begin(), open.end(), [&](const auto& o) { return o.first == key; });
    if (it != open.end() && rings[it->second].size() < std::max<size_t>(1, max_jobs)) {
      rings[it->second].push_back(&job);
    } else {
      rings.push_back({&job});
      if (it != open.end()) it->second = rings.size() - 1;
      else open.emplace_back(key, rings.size() - 1);
    }
  }
  return rings;
}

void run_taking_turns(const std::vector<std::function<void()>>& bodies) {
  if (bodies.size() == 1) return bodies[0]();
  Turns turns(bodies.size());
  std::vector<std::exception_ptr> errors(bodies.size());
  std::vector<std::thread> threads;
  thread_local size_t my_index = 0;
  const auto yield = [&turns] {
    const auto start = std::chrono::steady_clock::now();
    turns.pass(my_index, false);
    turns.wait(my_index);
    models::JobClock::waited() += std::chrono::steady_clock::now() - start;  // not this job's time
  };
  models::DecodeBatch batch(yield);
  models::PrefillShare share(yield, [&batch] { return batch.sessions_mid_step(); });
  for (size_t i = 0; i < bodies.size(); ++i)
    threads.emplace_back([&, i] {
      my_index = i;
      turns.wait(i);
      try {
        models::PrefillShare::Scope sharing(&share);
        models::DecodeBatch::Scope batching(&batch);
        bodies[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
      turns.pass(i, true);
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace kvbench::harness
