#pragma once
// A task = dataset + prompt template + protocol + metric mapping. One instance runs one job.
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "models/inference_session.hpp"
#include "tokenizers/tokenizer.hpp"
#include "models/transformer.hpp"
#include "policies/policy.hpp"
#include "base/param.hpp"
#include "tasks/example_loop.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {

// Throughput and memory of a job, accumulated by the engines over every sequence they run.
struct RunMeter {
  int64_t prefill_tokens = 0;
  double prefill_seconds = 0;
  int64_t decode_tokens = 0;
  double decode_seconds = 0;
  int64_t kv_logical_bytes_peak = 0;
  int64_t kv_allocated_bytes_peak = 0;
  int64_t max_cache_len = 0;
  void add_session(const models::InferenceSession& session);
  nlohmann::json timings() const;
};

// Watches every sequence an engine runs (fidelity tasks install their probes through it).
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  // After the session is made, before the prompt is fed.
  virtual void begin(models::InferenceSession& session, int64_t prompt_tokens) = 0;
  // After the last generated token.
  virtual void end(models::InferenceSession& session, int64_t prompt_tokens) = 0;
};

// Everything a task needs to run one job: the model, and how to make the policy for a sequence.
struct TaskContext {
  const models::Transformer* model = nullptr;
  const models::Tokenizer* tokenizer = nullptr;
  std::string model_name;
  std::string policy_name = "full";
  nlohmann::json policy_params = nlohmann::json::object();
  std::string budget = "full";
  std::string protocol = "oneshot";
  int64_t block = 1;
  uint64_t seed = 0;
  int64_t limit = 0;  // examples, 0 = all
  nlohmann::json params = nlohmann::json::object();  // task_params, as given
  params::Params declared;                            // the task's declaration of them (defaults, types)
  std::string data_root;
  ProgressFn progress;
  std::shared_ptr<RunMeter> meter = std::make_shared<RunMeter>();
  std::shared_ptr<SessionObserver> observer;  // null: none

  // A fresh policy instance (one per sequence: policies keep per-sequence state).
  std::unique_ptr<policies::Policy> make_policy() const;
  models::SessionOptions session_options() const;
  // What a query-aware kvpress prompt puts between context and question for the job's policy
  // (Policy::query_delimiter; empty for all but FinchPress).
  std::string query_delimiter() const { return make_policy()->query_delimiter(); }
  // The same context with the Full cache (fidelity tasks' reference run).
  TaskContext with_full_cache() const;
  int64_t max_context() const { return model->config().max_seq_len; }
  // A task parameter: the value given, else its declared default. Throws std::logic_error when the
  // declaration has no default (a computed one: use param_or) or does not declare it.
  template <typename T>
  T param(const std::string& key) const;
  // A parameter whose default is computed (declared with a null default): the value given, else
  // `computed`. Throws std::logic_error when the declaration has a default of its own (one fact,
  // one place).
  template <typename T>
  T param_or(const std::string& key, const T& computed) const;
  bool given(const std::string& key) const { return params.contains(key); }

 private:
  template <typename T>
  T read(const std::string& key, const nlohmann::json& value) const;
};

class Task {
 public:
  virtual ~Task() = default;
  // Prompt template, truncation, decoding, stop rules, max new tokens, metric: what `kvbench tasks`
  // prints and what the result records.
  virtual nlohmann::json settings() const = 0;
  // Every key `task_params` may hold, declared once with its type, default, range and help
  // (base/param.hpp): checked when the job spec is normalised, so an unknown key or a bad value
  // fails before the job id; listed by `kvbench tasks` and in the docs' tables.
  virtual params::Params parameters() const = 0;
  // Checks between parameters, after each passed parameters(): a parameter that the chosen mode
  // never reads would otherwise be accepted and do nothing. Throws std::invalid_argument.
  virtual void check_params(const nlohmann::json& params) const { (void)params; }
  // The data files read (their sha256 enters the job id).
  virtual std::vector<std::string> data_files(const TaskContext& ctx) const = 0;
  // Runs the job's examples (through an ExampleLoop) and returns the aggregates, the records and
  // the settings it resolved; the result records settings() with them, so a task instance keeps
  // no state between jobs.
  virtual TaskOutput run(const TaskContext& ctx) const = 0;
};

// What a result records and `kvbench tasks` prints: the task's settings and its declared parameters
// (and, for a job that ran, the settings it resolved).
nlohmann::json task_settings(const Task& task, const nlohmann::json& resolved = nullptr);

template <typename T>
T TaskContext::read(const std::string& key, const nlohmann::json& value) const {
  try {
    return value.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument("task_params." + key + " has the wrong type: " + value.dump());
  }
}

template <typename T>
T TaskContext::param(const std::string& key) const {
  if (params.contains(key)) return read<T>(key, params.at(key));
  const params::Param& declared_param = params::find(declared, key);
  if (declared_param.default_value.is_null())
    throw std::logic_error("task_params." + key + " has a computed default: read it with param_or");
  return read<T>(key, declared_param.default_value);
}

template <typename T>
T TaskContext::param_or(const std::string& key, const T& computed) const {
  if (!params::find(declared, key).default_value.is_null())
    throw std::logic_error("task_params." + key + " has a declared default: read it with param");
  return params.contains(key) ? read<T>(key, params.at(key)) : computed;
}

}  // namespace kvbench::tasks
