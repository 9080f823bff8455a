#include "tasks/longbench_v2_prompt.hpp"

#include <stdexcept>

#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::tasks {

std::string longbench_v2_prompt(const std::string& template_text, const nlohmann::json& item, const std::string& context,
                                const std::string& where) {
  auto field = [&](const std::string& key) {
    if (!item.contains(key) || !item.at(key).is_string())
      throw std::invalid_argument(where + ": field '" + key + "' is missing or not a string");
    return metrics::python_strip(item.at(key).get<std::string>());
  };
  std::string p = metrics::python_replace(template_text, "$DOC$", metrics::python_strip(context));
  p = metrics::python_replace(p, "$Q$", field("question"));
  for (const char* c : {"A", "B", "C", "D"}) p = metrics::python_replace(p, std::string("$C_") + c + "$", field(std::string("choice_") + c));
  return p;
}

}  // namespace kvbench::tasks
