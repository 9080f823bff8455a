#include "harness/worker_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "datasets/json_parse.hpp"
#include "harness/atomic_file.hpp"
#include "harness/error_message.hpp"
#include "harness/job_runner.hpp"
#include "harness/prefill_sharing.hpp"
#include "harness/process_temp.hpp"
#include "models/cpu_threads.hpp"
#include "models/decode_batch.hpp"
#include "models/prefill_share.hpp"

namespace kvbench::harness {
namespace {

const std::map<JobEvent::Kind, std::string>& kind_names() {
  static const std::map<JobEvent::Kind, std::string> names = {
      {JobEvent::Kind::kStarted, "started"}, {JobEvent::Kind::kProgress, "progress"},
      {JobEvent::Kind::kFinished, "finished"}, {JobEvent::Kind::kSkipped, "skipped"},
      {JobEvent::Kind::kFailed, "failed"}, {JobEvent::Kind::kWaiting, "waiting"}};
  return names;
}

std::string this_executable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find this executable (/proc/self/exe)");
  return path.string();
}

enum class Attempt { kDone, kClaimed, kClaimedElsewhere };

// The job's claim, unless it is finished or claimed by a live process (`attempt` says which).
std::optional<JobClaim> claim_job(const Job& job, ResultsStore& store, const JobEventFn& on_event, Attempt& attempt) {
  // Reported, so that a grid's summary accounts for every job (the runner drops the report when
  // one of its own workers ran the job).
  const JobEvent finished_elsewhere(JobEvent::Kind::kSkipped, job.id, "finished by another process");
  attempt = Attempt::kDone;
  if (store.has_result(job.id)) {
    store.remove_stale_claim(job.id);
    on_event(finished_elsewhere);
    return std::nullopt;
  }
  std::optional<JobClaim> claim = store.try_claim(job.id);
  if (!claim) {
    attempt = Attempt::kClaimedElsewhere;
    return std::nullopt;
  }
  if (store.has_result(job.id)) {  // finished between our check and our claim
    on_event(finished_elsewhere);
    return std::nullopt;
  }
  attempt = Attempt::kClaimed;
  return claim;
}

// Runs a claimed job: its events, its result (or its failure), then the claim's release.
void run_claimed_job(const Job& job, JobClaim& claim, ResultsStore& store, const JobEventFn& on_event) {
  on_event(JobEvent(JobEvent::Kind::kStarted, job.id));
  const auto start = std::chrono::steady_clock::now();
  models::PrefillTokens& prefill = models::prefill_tokens_of_this_thread();
  models::DecodeRows& decode_rows = models::decode_rows_of_this_thread();
  prefill = {};
  decode_rows = {};
  try {
    nlohmann::json result = execute_job(job, [&](int64_t done, int64_t total) {
      JobEvent e{JobEvent::Kind::kProgress, job.id};
      e.done = done;
      e.total = total;
      on_event(e);
    });
    store.write_result(result);
    JobEvent e{JobEvent::Kind::kFinished, job.id};
    e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    e.message = headline_metrics(result.value("metrics", nlohmann::json::object()));
    e.prefill_computed = prefill.computed;
    e.prefill_reused = prefill.reused;
    e.rows_projected = decode_rows.projected;
    e.rows_batched = decode_rows.batched;
    on_event(e);
  } catch (const std::exception& error) {
    store.log_failure(job.id, user_message(error));
    JobEvent e{JobEvent::Kind::kFailed, job.id};
    e.message = user_message(error);
    on_event(e);
  }
  claim.release();
}

// Runs the job if it is neither finished nor claimed by a live process.
Attempt attempt_job(const Job& job, ResultsStore& store, const JobEventFn& on_event) {
  Attempt attempt;
  std::optional<JobClaim> claim = claim_job(job, store, on_event, attempt);
  if (claim) run_claimed_job(job, *claim, store, on_event);
  return attempt;
}

// Claims what it can of a ring and runs those jobs taking turns, sharing their prefills.
void run_ring(const std::vector<const Job*>& ring, ResultsStore& store, const JobEventFn& on_event,
              std::vector<const Job*>& elsewhere) {
  std::vector<const Job*> mine;
  std::vector<JobClaim> claims;
  for (const Job* job : ring) {
    Attempt attempt;
    std::optional<JobClaim> claim = claim_job(*job, store, on_event, attempt);
    if (claim) mine.push_back(job), claims.push_back(std::move(*claim));
    if (attempt == Attempt::kClaimedElsewhere) elsewhere.push_back(job);
  }
  std::vector<std::function<void()>> bodies;
  for (size_t i = 0; i < mine.size(); ++i)
    bodies.push_back([&, i] { run_claimed_job(*mine[i], claims[i], store, on_event); });
  if (!bodies.empty()) run_taking_turns(bodies);
}

}  // namespace

nlohmann::json JobEvent::to_json() const {
  nlohmann::json j = {{"event", kind_names().at(kind)}, {"id", id}};
  if (kind == Kind::kProgress) j["done"] = done, j["total"] = total;
  if (kind == Kind::kFinished)
    j["seconds"] = seconds, j["prefill_computed"] = prefill_computed, j["prefill_reused"] = prefill_reused,
    j["rows_projected"] = rows_projected, j["rows_batched"] = rows_batched;
  if (!message.empty()) j["message"] = message;
  return j;
}

JobEvent JobEvent::from_json(const nlohmann::json& j) {
  JobEvent e;
  const std::string name = j.at("event");
  bool known = false;
  for (const auto& [kind, text] : kind_names())
    if (text == name) e.kind = kind, known = true;
  if (!known) throw std::runtime_error("worker sent an unknown event: " + j.dump());
  e.id = j.at("id");
  e.done = j.value("done", int64_t{0});
  e.total = j.value("total", int64_t{0});
  e.seconds = j.value("seconds", 0.0);
  e.prefill_computed = j.value("prefill_computed", int64_t{0});
  e.prefill_reused = j.value("prefill_reused", int64_t{0});
  e.rows_projected = j.value("rows_projected", int64_t{0});
  e.rows_batched = j.value("rows_batched", int64_t{0});
  e.message = j.value("message", "");
  return e;
}

std::string headline_metrics(const nlohmann::json& metrics) {
  std::string out;
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    if (!it->is_number()) continue;
    char value[48];
    if (it->is_number_integer())
      std::snprintf(value, sizeof value, "%lld", static_cast<long long>(it->get<int64_t>()));
    else
      std::snprintf(value, sizeof value, "%.6g", it->get<double>());
    out += (out.empty() ? "" : " ") + it.key() + "=" + value;
  }
  return out;
}

void run_job_queue(const std::vector<Job>& jobs, ResultsStore& store, const JobEventFn& on_event, size_t ring_jobs,
                   double poll_seconds) {
  std::vector<const Job*> elsewhere;
  for (const auto& ring : prefill_rings(jobs, ring_jobs)) run_ring(ring, store, on_event, elsewhere);
  // Jobs another process holds: wait for their results, or take them over if their holder dies.
  bool announced = false;
  while (!elsewhere.empty()) {
    if (!announced) {
      for (const Job* job : elsewhere) {
        JobEvent e{JobEvent::Kind::kWaiting, job->id};
        nlohmann::json holder = store.claim_holder(job->id);
        e.message = holder.is_null() ? "claimed elsewhere" : "claimed by " + holder.dump();
        on_event(e);
      }
      announced = true;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
    std::vector<const Job*> still;
    for (const Job* job : elsewhere) {
      if (attempt_job(*job, store, on_event) == Attempt::kClaimedElsewhere) still.push_back(job);
    }
    elsewhere.swap(still);
  }
}

void write_job_manifest(const std::string& path, const std::vector<Job>& jobs) {
  std::string text;
  for (const Job& job : jobs)
    text += nlohmann::json{{"id", job.id}, {"spec", job.spec}, {"checksums", job.checksums}}.dump() + "\n";
  write_file_atomically(path, text);
}

std::vector<Job> read_job_manifest(const std::string& path) {
  std::istringstream lines(read_file(path));
  std::vector<Job> jobs;
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      auto j = datasets::parse_json(line, path, number);
      jobs.push_back({j.at("spec"), j.at("checksums"), j.at("id")});
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": not a job manifest line: " + e.what());
    }
  }
  return jobs;
}

void run_worker_pool(const std::vector<Job>& jobs, ResultsStore& store, const PoolOptions& options,
                     const JobEventFn& on_event) {
  // Threads from the workers asked for, not the ones started: the last pending job of a 2-worker
  // grid gets what it would have got beside another, so its numbers do not depend on the order.
  const int requested = std::max(options.workers, 1);
  const int threads = options.threads_per_worker > 0 ? options.threads_per_worker
                                                     : std::max(1, models::default_cpu_threads() / requested);
  const int worker_count = static_cast<int>(std::min<size_t>(requested, jobs.size()));
  // Rings split across the workers, so that each has its part of a ring to run.
  const size_t ring_jobs = !options.share_prefill ? 1
                           : std::min<size_t>(PoolOptions::kMaxRingJobs,
                                              (jobs.size() + std::max(worker_count, 1) - 1) / std::max(worker_count, 1));
  if (worker_count <= 1) {
    models::use_cpu_threads(threads);  // in this process, as a worker would
    run_job_queue(jobs, store, on_event, ring_jobs);
    return;
  }
  const std::string executable = options.executable.empty() ? this_executable() : options.executable;

  const std::string manifest = make_process_temp("jobs", /*folder=*/false);
  write_job_manifest(manifest, jobs);

  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::string buffer;
  };
  std::vector<Worker> workers(worker_count);
  const pid_t parent = ::getpid();
  for (auto& worker : workers) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot create a pipe for a worker");
    const std::vector<std::string> args = {executable, "grid-worker", "--manifest", manifest, "--results", store.dir(),
                                           "--threads", std::to_string(threads), "--ring-jobs", std::to_string(ring_jobs)};
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("cannot fork a worker: ") + std::strerror(errno));
    if (pid == 0) {  // only async-signal-safe calls until exec
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      ::dup2(pipe_fds[1], STDOUT_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    worker.pid = pid;
    worker.fd = pipe_fds[0];
  }

  std::string failures;
  size_t open_pipes = workers.size();
  while (open_pipes > 0) {
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (auto& w : workers)
      if (w.fd >= 0) fds.push_back({w.fd, POLLIN, 0}), owners.push_back(&w);
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll on the workers failed: ") + std::strerror(errno));
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = *owners[i];
      char chunk[4096];
      const ssize_t n = ::read(w.fd, chunk, sizeof chunk);
      if (n > 0) {
        w.buffer.append(chunk, static_cast<size_t>(n));
        size_t newline;
        while ((newline = w.buffer.find('\n')) != std::string::npos) {
          const std::string line = w.buffer.substr(0, newline);
          w.buffer.erase(0, newline + 1);
          try {
            on_event(JobEvent::from_json(nlohmann::json::parse(line)));
          } catch (const nlohmann::json::exception&) {
            // not an event (a stray print from a library): ignore
          }
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      ::close(w.fd);
      w.fd = -1;
      --open_pipes;
      int status = 0;
      ::waitpid(w.pid, &status, 0);
      if (WIFSIGNALED(status))
        failures += " worker " + std::to_string(w.pid) + " killed by signal " + std::to_string(WTERMSIG(status)) + ";";
      else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        failures += " worker " + std::to_string(w.pid) + " exited with status " + std::to_string(WEXITSTATUS(status)) + ";";
    }
  }
  std::filesystem::remove(manifest);
  if (!failures.empty()) throw std::runtime_error("grid workers failed:" + failures);
}

}  // namespace kvbench::harness
