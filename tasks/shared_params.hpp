#pragma once
// Task parameters that several tasks accept with one meaning, declared once.
#include "base/param.hpp"
#include "models/logits_processors.hpp"

namespace kvbench::tasks {

// `record_prompts`: add each example's prompt text, as fed to the model, to the result.
params::Param record_prompts_param();
// `chat_template`: none, a named template (tasks/chat_template.hpp) or "model" (the model's own);
// the default is the task's official one (none unless it serves a chat model; null: computed).
params::Param chat_template_param(const std::string& help =
                                      "the chat template around the prompt (none for base models; "
                                      "model = the model's own)",
                                  const nlohmann::json& default_value = "none");

// temperature, top_p, top_k, min_p, repetition_penalty: transformers' sampling
// (models/logits_processors.hpp), each defaulting to the task's reference value in `defaults`.
params::Params sampling_params(const models::SamplingSettings& defaults);
struct TaskContext;
// The settings a task declared with sampling_params, as the job gives them.
models::SamplingSettings sampling_settings(const TaskContext& ctx);

}  // namespace kvbench::tasks
