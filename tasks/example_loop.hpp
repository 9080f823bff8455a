#pragma once
// The per-example engine every task runs its examples through. It owns what each task used to
// write again: the job's example limit, progress, the record of an example (id, prompt_tokens,
// prediction, references, metrics, the task's own fields and, with task_params.record_prompts,
// the text fed), the mean of every per-example metric, and the zero-example rule (a mean over no
// example is null; run_task fails a job that recorded none). A task file keeps what is its own:
// data, prompt, decoding, metric.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tasks/scored_mean.hpp"

namespace kvbench::tasks {

struct TaskContext;

// What a task's run returns: the aggregates, one record per example, and the settings this job
// resolved (defaults computed from the model, the data or other parameters; null where none).
struct TaskOutput {
  nlohmann::json metrics = nlohmann::json::object();
  nlohmann::json examples = nlohmann::json::array();
  nlohmann::json resolved;
};

// One example's record.
struct Example {
  std::string id;
  int64_t prompt_tokens = 0;
  std::string prediction;
  std::vector<std::string> references;
  // Per-example scores: numbers, or null where the metric is undefined for this example (it is then
  // left out of the mean). Null as a whole: scored later, over the corpus (ExampleLoop::score).
  nlohmann::json metrics = nlohmann::json::object();
  nlohmann::json fields = nlohmann::json::object();  // the task's own fields (shots, truncated, ...)
  std::optional<std::string> prompt = std::nullopt;  // the text fed; recorded with record_prompts
  nlohmann::json recorded_with_prompt = nlohmann::json::object();  // more text recorded with it
};

// Where a loop's examples sit in the job's progress: a task that runs several loops (one per
// subject or subset) reports one count. total 0: done_before + this loop's size.
struct ProgressSpan {
  int64_t done_before = 0;
  int64_t total = 0;
};

class ExampleLoop {
 public:
  // `available` examples in the data, cut to the job's limit (task_params' meaning of limit is the
  // task's: per subject for MMLU, per subset for LongBench; the loop is made per part then).
  ExampleLoop(const TaskContext& ctx, int64_t available, ProgressSpan span = {});

  // Examples to record (the limit applied).
  int64_t size() const { return size_; }
  int64_t recorded() const { return static_cast<int64_t>(examples_.size()); }
  // All `size()` examples are recorded (tasks that skip examples read further until then).
  bool done() const { return recorded() >= size_; }
  bool record_prompts() const { return record_prompts_; }

  // Appends the example's record, adds its metrics to the means and reports progress.
  void record(Example example);
  // Sets the metrics of recorded example `index` (corpus-level scorers: LongBench's eval.py).
  void score(size_t index, const nlohmann::json& metrics);

  // Each per-example metric's mean over the examples where it is a number (null where none).
  nlohmann::json means() const;
  nlohmann::json mean(const std::string& metric) const;
  const nlohmann::json& examples() const { return examples_; }

  // The output: `metrics` as the task composed them, the records, the resolved settings.
  TaskOutput finish(nlohmann::json metrics, nlohmann::json resolved = nullptr);

 private:
  void add_to_means(const nlohmann::json& metrics);

  const TaskContext& ctx_;
  int64_t size_ = 0;
  ProgressSpan span_;
  bool record_prompts_ = false;
  nlohmann::json examples_ = nlohmann::json::array();
  std::map<std::string, MeanMetric> means_;
};

}  // namespace kvbench::tasks
