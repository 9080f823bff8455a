#pragma once
// tokenizer_config.json (transformers): the special tokens' names and the chat template.
#include <optional>
#include <string>

namespace kvbench::models {

struct TokenizerConfig {
  std::optional<std::string> bos_token;  // null or absent: none
  std::optional<std::string> eos_token;
  // The Jinja chat template: the string, or the "default" entry of a list of {name, template};
  // without one in the file, chat_template.jinja (or chat_template.json) beside it.
  std::optional<std::string> chat_template;
  std::optional<bool> add_bos_token, add_eos_token;
  std::optional<std::string> pad_token, unk_token;
};

// Throws ModelLoadError naming the file and the field (a token that is neither a string nor an
// {"content": ...} object, a template list without "default", invalid JSON).
TokenizerConfig read_tokenizer_config(const std::string& path);

}  // namespace kvbench::models
