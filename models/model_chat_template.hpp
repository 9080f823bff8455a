#pragma once
// A model's own chat template (tokenizer_config.json's chat_template), rendered as transformers'
// apply_chat_template renders it: the template gets messages, tools (None unless given),
// documents (None), add_generation_prompt, the special tokens (bos_token, eos_token, pad_token,
// unk_token where the config has them) and the caller's extra kwargs (enable_thinking, tools...).
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "jinja/template.hpp"
#include "tokenizers/tokenizer_config.hpp"

namespace kvbench::models {

class ModelChatTemplate {
 public:
  // `origin` names the file for errors. Throws ModelLoadError when the config has no template or
  // the template does not parse (the message carries the template's line and column).
  ModelChatTemplate(const TokenizerConfig& config, const std::string& origin);

  // tokenizer_config.json in `path` (a directory) or beside it (a tokenizer file). Throws
  // ModelLoadError naming the file when there is no config or it has no chat_template.
  static std::shared_ptr<const ModelChatTemplate> for_tokenizer(const std::string& path);

  // messages: [{"role", "content", ...}]; kwargs: extra template variables (a JSON object; may not
  // redefine messages or add_generation_prompt). Throws jinja::TemplateRaised when the template
  // calls raise_exception, jinja::TemplateError on other template failures.
  std::string render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                     const nlohmann::ordered_json& kwargs = nlohmann::ordered_json::object(),
                     const jinja::RenderOptions& options = {}) const;

  // What kvpress feeds the model: [{"role": "user", "content": prompt}], add_generation_prompt=true.
  std::string render_user_prompt(const std::string& prompt) const;

  const std::string& origin() const { return origin_; }

 private:
  std::string origin_;
  TokenizerConfig config_;
  jinja::Template template_;
};

// tokenizer_config.json for a tokenizer file or directory; empty when there is none.
std::string tokenizer_config_path(const std::string& tokenizer_path);

}  // namespace kvbench::models
