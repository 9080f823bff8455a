#include "harness/grid_runner.hpp"

#include <iostream>

#include "harness/progress_bar.hpp"

namespace kvbench::harness {

GridRunSummary run_grid_jobs(const std::vector<Job>& jobs, ResultsStore& store, const PoolOptions& options,
                             bool quiet) {
  GridRunSummary summary;
  std::vector<Job> pending;
  std::map<std::string, const Job*> by_id;
  for (const Job& job : jobs) {
    by_id[job.id] = &job;
    if (store.has_result(job.id)) {
      ++summary.already_done;
      store.remove_stale_claim(job.id);  // a holder killed between writing the result and releasing
    } else
      pending.push_back(job);
  }
  ProgressBar bar(std::cerr, static_cast<int64_t>(pending.size()), !quiet && ProgressBar::stderr_is_terminal());
  std::map<std::string, double> running;  // id -> fraction of its examples done
  int64_t finished = 0;
  auto describe = [&](const std::string& id) {
    auto it = by_id.find(id);
    return id + "  " + (it == by_id.end() ? std::string("?") : short_description(it->second->spec));
  };
  auto redraw = [&] {
    double done = static_cast<double>(finished);
    for (const auto& [id, fraction] : running) done += fraction;
    bar.update(done, running.empty() ? "" : "running " + std::to_string(running.size()));
  };
  // Outcomes by id: with several workers one job can be reported twice (a worker that waited
  // for a sibling's job reports it "skipped" when the result appears, possibly before the
  // sibling's "finished" arrives); the sibling's own report wins.
  std::map<std::string, JobEvent::Kind> outcome;
  auto on_event = [&](const JobEvent& e) {
    using Kind = JobEvent::Kind;
    switch (e.kind) {
      case Kind::kStarted:
        running[e.id] = 0;
        break;
      case Kind::kProgress:
        if (e.total > 0) running[e.id] = static_cast<double>(e.done) / static_cast<double>(e.total);
        break;
      case Kind::kFinished:
        running.erase(e.id);
        if (outcome.count(e.id) && outcome[e.id] == Kind::kSkipped) --summary.by_others, --finished;
        outcome[e.id] = e.kind;
        ++finished, ++summary.ran;
        summary.prefill_computed += e.prefill_computed;
        summary.prefill_reused += e.prefill_reused;
        summary.rows_projected += e.rows_projected;
        summary.rows_batched += e.rows_batched;
        redraw();
        if (!quiet) bar.message("done    " + describe(e.id) + "  " + e.message + "  (" + format_duration(e.seconds) + ")");
        break;
      case Kind::kFailed:
        running.erase(e.id);
        outcome[e.id] = e.kind;
        ++finished;
        summary.failed[e.id] = e.message;
        redraw();
        if (!quiet) bar.message("FAILED  " + describe(e.id) + "  " + e.message);
        break;
      case Kind::kSkipped:
        if (outcome.count(e.id) || running.count(e.id)) break;  // one of our own workers ran it
        outcome[e.id] = e.kind;
        ++finished, ++summary.by_others;
        redraw();
        if (!quiet) bar.message("skipped " + describe(e.id) + "  (" + e.message + ")");
        break;
      case Kind::kWaiting:
        if (!quiet && !running.count(e.id)) bar.message("waiting " + describe(e.id) + "  (" + e.message + ")");
        break;
    }
    redraw();
  };
  if (!pending.empty()) {
    std::string pool_error;
    try {
      run_worker_pool(pending, store, options, on_event);
    } catch (const std::runtime_error& e) {
      pool_error = e.what();
    }
    if (!quiet) bar.finish();
    if (!pool_error.empty()) std::cerr << "kvbench: " << pool_error << "\n";
  }
  for (const Job& job : jobs)
    if (!store.has_result(job.id) && !summary.failed.count(job.id)) summary.missing.push_back(job.id);
  return summary;
}

}  // namespace kvbench::harness
