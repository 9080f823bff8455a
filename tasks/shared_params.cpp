#include "tasks/shared_params.hpp"

#include "tasks/chat_template.hpp"
#include "tasks/task.hpp"

namespace kvbench::tasks {

params::Param record_prompts_param() {
  return params::Param::flag("record_prompts", false, "add each example's prompt text, as fed to the model");
}

params::Param chat_template_param(const std::string& help, const nlohmann::json& default_value) {
  return params::Param::choice("chat_template", default_value, chat_template_names(), help);
}

params::Params sampling_params(const models::SamplingSettings& d) {
  using params::Param;
  return {Param::number("temperature", d.temperature, "sampling temperature (0: greedy, transformers' do_sample=False)", 0),
          Param::number("top_p", d.top_p, "nucleus sampling: keep the smallest set of tokens holding this probability (1: off)", 0, 1),
          Param::integer("top_k", d.top_k, "keep the k highest-scoring tokens (0: off; transformers' own default is 50)", 0),
          Param::number("min_p", d.min_p, "drop tokens below min_p times the top token's probability (0: off)", 0, 1),
          Param::number("repetition_penalty", d.repetition_penalty, "divide positive (multiply negative) scores of ids already seen (1: off)", 1e-9)};
}

models::SamplingSettings sampling_settings(const TaskContext& ctx) {
  models::SamplingSettings s;
  s.temperature = ctx.param<double>("temperature");
  s.top_p = ctx.param<double>("top_p");
  s.top_k = ctx.param<int64_t>("top_k");
  s.min_p = ctx.param<double>("min_p");
  s.repetition_penalty = ctx.param<double>("repetition_penalty");
  s.check();
  return s;
}

}  // namespace kvbench::tasks
