#include "tokenizers/tokenizer_config.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tokenizers/model_error.hpp"
#include "tokenizers/model_json.hpp"

namespace kvbench::models {
namespace {

nlohmann::json parse_json_file(const std::string& path) { return read_model_json(path, "tokenizer_config.json"); }

// A special token is written as "<s>" or as an AddedToken object {"content": "<s>", ...}.
std::optional<std::string> token_field(const std::string& path, const nlohmann::json& j, const std::string& key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  const nlohmann::json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  throw ModelLoadError(path, key + ": must be a string or an object with a \"content\" string, got " + v.dump().substr(0, 80));
}

std::optional<bool> bool_field(const std::string& path, const nlohmann::json& j, const std::string& key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_boolean()) throw ModelLoadError(path, key + ": must be true or false, got " + j[key].dump().substr(0, 80));
  return j[key].get<bool>();
}

std::optional<std::string> template_field(const std::string& path, const nlohmann::json& j) {
  if (!j.contains("chat_template") || j["chat_template"].is_null()) return std::nullopt;
  const nlohmann::json& v = j["chat_template"];
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) throw ModelLoadError(path, "chat_template: must be a string or a list of {name, template}");
  for (size_t i = 0; i < v.size(); ++i) {
    const nlohmann::json& e = v[i];
    const std::string where = "chat_template[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") || !e["template"].is_string())
      throw ModelLoadError(path, where + ": must be {\"name\": string, \"template\": string}");
    if (e["name"] == "default") return e["template"].get<std::string>();
  }
  throw ModelLoadError(path, "chat_template: a list of templates without one named \"default\"");
}

}  // namespace

TokenizerConfig read_tokenizer_config(const std::string& path) {
  const nlohmann::json j = parse_json_file(path);
  if (!j.is_object()) throw ModelLoadError(path, "must be a JSON object");
  TokenizerConfig c;
  c.bos_token = token_field(path, j, "bos_token");
  c.eos_token = token_field(path, j, "eos_token");
  c.pad_token = token_field(path, j, "pad_token");
  c.unk_token = token_field(path, j, "unk_token");
  c.add_bos_token = bool_field(path, j, "add_bos_token");
  c.add_eos_token = bool_field(path, j, "add_eos_token");
  // transformers >= 4.43 saves the template in a file of its own beside the config, and reads
  // that file over the config's field when both are there (from_pretrained's chat_template_file).
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const std::filesystem::path jinja = dir / "chat_template.jinja";
  const std::filesystem::path json = dir / "chat_template.json";
  if (std::filesystem::is_regular_file(jinja)) {
    std::ifstream in(jinja, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    c.chat_template = s.str();
  } else {
    c.chat_template = template_field(path, j);
    if (!c.chat_template && std::filesystem::is_regular_file(json))
      c.chat_template = template_field(json.string(), parse_json_file(json.string()));
  }
  return c;
}

}  // namespace kvbench::models
