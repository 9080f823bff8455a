#include "tasks/example_loop.hpp"

#include <algorithm>
#include <stdexcept>

#include "tasks/task.hpp"

namespace kvbench::tasks {

namespace {

bool declares(const params::Params& declared, const std::string& name) {
  return std::any_of(declared.begin(), declared.end(), [&](const params::Param& p) { return p.name == name; });
}

}  // namespace

ExampleLoop::ExampleLoop(const TaskContext& ctx, int64_t available, ProgressSpan span)
    : ctx_(ctx), size_(ctx.limit > 0 ? std::min(ctx.limit, available) : available), span_(span) {
  if (available < 0) throw std::logic_error("ExampleLoop: negative example count");
  // Tasks without prompts (perplexity) do not declare the parameter.
  record_prompts_ = declares(ctx.declared, "record_prompts") && ctx.param<bool>("record_prompts");
}

void ExampleLoop::record(Example example) {
  if (done()) throw std::logic_error("ExampleLoop: more examples recorded than the loop runs");
  nlohmann::json e = std::move(example.fields);
  e["id"] = std::move(example.id);
  e["prompt_tokens"] = example.prompt_tokens;
  e["prediction"] = std::move(example.prediction);
  e["references"] = std::move(example.references);
  if (!example.metrics.is_null()) {
    add_to_means(example.metrics);
    e["metrics"] = std::move(example.metrics);
  }
  if (record_prompts_) {
    if (example.prompt) e["prompt"] = std::move(*example.prompt);
    for (auto it = example.recorded_with_prompt.begin(); it != example.recorded_with_prompt.end(); ++it)
      e[it.key()] = it.value();
  }
  examples_.push_back(std::move(e));
  if (ctx_.progress)
    ctx_.progress(span_.done_before + recorded(), span_.total > 0 ? span_.total : span_.done_before + size_);
}

void ExampleLoop::score(size_t index, const nlohmann::json& metrics) {
  nlohmann::json& e = examples_.at(index);
  if (e.contains("metrics")) throw std::logic_error("ExampleLoop: example " + std::to_string(index) + " scored twice");
  add_to_means(metrics);
  e["metrics"] = metrics;
}

void ExampleLoop::add_to_means(const nlohmann::json& metrics) {
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    if (it.value().is_number()) means_[it.key()].add(it.value().get<double>());
    else if (it.value().is_null()) means_[it.key()];  // undefined in every example: a null mean
  }
}

nlohmann::json ExampleLoop::means() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, mean] : means_) out[name] = mean.value();
  return out;
}

nlohmann::json ExampleLoop::mean(const std::string& metric) const {
  auto it = means_.find(metric);
  return it == means_.end() ? nlohmann::json(nullptr) : it->second.value();
}

TaskOutput ExampleLoop::finish(nlohmann::json metrics, nlohmann::json resolved) {
  for (size_t i = 0; i < examples_.size(); ++i)
    if (!examples_[i].contains("metrics")) throw std::logic_error("ExampleLoop: example " + std::to_string(i) + " was never scored");
  TaskOutput out;
  out.metrics = std::move(metrics);
  out.examples = std::move(examples_);
  out.resolved = std::move(resolved);
  examples_ = nlohmann::json::array();
  return out;
}

}  // namespace kvbench::tasks
