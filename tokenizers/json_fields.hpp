#pragma once
// One JSON object of a tokenizer file, named by its path ("pre_tokenizer.pretokenizers[1]"), so every
// error says which file and which field: `tokenizer.json: pre_tokenizer.type: unknown "Foo"`.
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>

namespace kvbench::models {

class JsonFields {
 public:
  // Throws ModelLoadError when `value` is not an object.
  JsonFields(std::string file, std::string path, const nlohmann::json& value);

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return *value_; }
  std::string where(const std::string& key) const;  // "pre_tokenizer.type"

  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  [[noreturn]] void fail_here(const std::string& what) const;
  // Every key outside `known` is an error naming it.
  void allow_only(std::initializer_list<const char*> known) const;

  bool has(const std::string& key) const;  // present and not null
  const nlohmann::json& at(const std::string& key) const;  // throws "missing field"
  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  JsonFields object(const std::string& key) const;
  const nlohmann::json& array(const std::string& key) const;
  JsonFields element(const std::string& key, size_t index) const;  // an object inside an array

 private:
  std::string file_;
  std::string path_;
  const nlohmann::json* value_;
};

// The `pattern` of a Replace normalizer or decoder: only {"String": "<non-empty>"} is supported.
inline std::string replace_pattern_string(const JsonFields& step) {
  JsonFields pattern = step.object("pattern");
  if (!pattern.has("String")) pattern.fail_here("only a {\"String\": ...} pattern is supported");
  pattern.allow_only({"String"});
  std::string from = pattern.string("String");
  if (from.empty()) pattern.fail("String", "must not be empty");
  return from;
}

}  // namespace kvbench::models
