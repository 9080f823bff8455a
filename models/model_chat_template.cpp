#include "models/model_chat_template.hpp"

#include <filesystem>
#include <map>
#include <mutex>

#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace fs = std::filesystem;

namespace {

jinja::Template parse_template(const TokenizerConfig& config, const std::string& origin) {
  if (!config.chat_template)
    throw ModelLoadError(origin, "chat_template: the model has no chat template (tokenizer_config.json has none "
                                 "and there is no chat_template.jinja beside it)");
  try {
    return jinja::Template(*config.chat_template);
  } catch (const jinja::TemplateError& e) {
    throw ModelLoadError(origin, std::string("chat_template: ") + e.what());
  }
}

}  // namespace

ModelChatTemplate::ModelChatTemplate(const TokenizerConfig& config, const std::string& origin)
    : origin_(origin), config_(config), template_(parse_template(config, origin)) {}

std::string tokenizer_config_path(const std::string& tokenizer_path) {
  const fs::path p(tokenizer_path);
  const fs::path dir = fs::is_directory(p) ? p : p.parent_path();
  const fs::path config = dir / "tokenizer_config.json";
  return fs::is_regular_file(config) ? config.string() : std::string();
}

std::shared_ptr<const ModelChatTemplate> ModelChatTemplate::for_tokenizer(const std::string& path) {
  // Tasks ask once per example: parse each template once per process.
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ModelChatTemplate>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  const std::string config = tokenizer_config_path(path);
  if (config.empty())
    throw ModelLoadError(path, "chat_template \"model\": no tokenizer_config.json beside the tokenizer, so the "
                               "model has no chat template of its own");
  auto t = std::make_shared<const ModelChatTemplate>(read_tokenizer_config(config), config);
  cache[path] = t;
  return t;
}

std::string ModelChatTemplate::render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                      const nlohmann::ordered_json& kwargs, const jinja::RenderOptions& options) const {
  if (!messages.is_array()) throw std::invalid_argument("messages must be a list");
  if (!kwargs.is_object()) throw std::invalid_argument("kwargs must be an object");
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = messages;
  context["tools"] = kwargs.contains("tools") ? kwargs["tools"] : nlohmann::ordered_json(nullptr);
  context["documents"] = kwargs.contains("documents") ? kwargs["documents"] : nlohmann::ordered_json(nullptr);
  context["add_generation_prompt"] = add_generation_prompt;
  auto special = [&](const char* key, const std::optional<std::string>& value) {
    if (value) context[key] = *value;
  };
  special("bos_token", config_.bos_token);
  special("eos_token", config_.eos_token);
  special("pad_token", config_.pad_token);
  special("unk_token", config_.unk_token);
  for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
    if (it.key() == "messages" || it.key() == "add_generation_prompt")
      throw std::invalid_argument("kwargs." + it.key() + ": set by the caller, not a template kwarg");
    context[it.key()] = it.value();
  }
  return template_.render(jinja::Value::from_json(context), options);
}

std::string ModelChatTemplate::render_user_prompt(const std::string& prompt) const {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  messages.push_back({{"role", "user"}, {"content", prompt}});
  return render(messages, true);
}

}  // namespace kvbench::models
