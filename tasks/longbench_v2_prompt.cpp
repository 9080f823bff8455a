#include "tasks/longbench_v2_prompt.hpp"

#include <stdexcept>

#include "metrics/unicode.hpp"

namespace kvbench::tasks {

std::string replace_every(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string longbench_v2_prompt(const std::string& template_text, const nlohmann::json& item, const std::string& context,
                                const std::string& where) {
  auto field = [&](const std::string& key) {
    if (!item.contains(key) || !item.at(key).is_string())
      throw std::invalid_argument(where + ": field '" + key + "' is missing or not a string");
    return metrics::python_strip(item.at(key).get<std::string>());
  };
  std::string p = replace_every(template_text, "$DOC$", metrics::python_strip(context));
  p = replace_every(p, "$Q$", field("question"));
  for (const char* c : {"A", "B", "C", "D"}) p = replace_every(p, std::string("$C_") + c + "$", field(std::string("choice_") + c));
  return p;
}

}  // namespace kvbench::tasks
