#include "models/attention_path.hpp"

#include <stdexcept>

namespace kvbench::models {

const std::vector<std::string>& attention_path_names() {
  static const std::vector<std::string> names{"auto", "chunked", "split_k"};
  return names;
}

const std::string& attention_path_name(AttentionPath path) {
  return attention_path_names().at(static_cast<size_t>(path));
}

AttentionPath parse_attention_path(const std::string& name) {
  const auto& names = attention_path_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<AttentionPath>(i);
  std::string accepted;
  for (const auto& n : names) accepted += (accepted.empty() ? "\"" : ", \"") + n + "\"";
  throw std::invalid_argument("\"attention\" must be one of " + accepted + ", got \"" + name + "\"");
}

bool split_k_decode_built() {
#ifdef KVBENCH_SPLIT_K_DECODE
  return true;
#else
  return false;
#endif
}

}  // namespace kvbench::models
