#include "tasks/shared_params.hpp"

#include "tasks/chat_template.hpp"

namespace kvbench::tasks {

params::Param record_prompts_param() {
  return params::Param::flag("record_prompts", false, "add each example's prompt text, as fed to the model");
}

params::Param chat_template_param(const std::string& help, const nlohmann::json& default_value) {
  return params::Param::choice("chat_template", default_value, chat_template_names(), help);
}

}  // namespace kvbench::tasks
