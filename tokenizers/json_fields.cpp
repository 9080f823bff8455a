#include "tokenizers/json_fields.hpp"

#include "tokenizers/model_error.hpp"

namespace kvbench::models {

JsonFields::JsonFields(std::string file, std::string path, const nlohmann::json& value)
    : file_(std::move(file)), path_(std::move(path)), value_(&value) {
  if (!value.is_object()) throw ModelLoadError(file_, (path_.empty() ? "top level" : path_) + ": must be an object, got " + value.dump().substr(0, 80));
}

std::string JsonFields::where(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void JsonFields::fail(const std::string& key, const std::string& what) const { throw ModelLoadError(file_, where(key) + ": " + what); }

void JsonFields::fail_here(const std::string& what) const {
  throw ModelLoadError(file_, (path_.empty() ? "top level" : path_) + ": " + what);
}

void JsonFields::allow_only(std::initializer_list<const char*> known) const {
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok) fail(it.key(), "unknown field");
  }
}

bool JsonFields::has(const std::string& key) const { return value_->contains(key) && !(*value_)[key].is_null(); }

const nlohmann::json& JsonFields::at(const std::string& key) const {
  if (!value_->contains(key)) fail(key, "missing field");
  return (*value_)[key];
}

std::string JsonFields::string(const std::string& key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_string()) fail(key, "must be a string, got " + v.dump().substr(0, 80));
  return v.get<std::string>();
}

std::optional<std::string> JsonFields::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return string(key);
}

bool JsonFields::boolean_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const nlohmann::json& v = at(key);
  if (!v.is_boolean()) fail(key, "must be true or false, got " + v.dump().substr(0, 80));
  return v.get<bool>();
}

JsonFields JsonFields::object(const std::string& key) const { return JsonFields(file_, where(key), at(key)); }

const nlohmann::json& JsonFields::array(const std::string& key) const {
  const nlohmann::json& v = at(key);
  if (!v.is_array()) fail(key, "must be a list, got " + v.dump().substr(0, 80));
  return v;
}

JsonFields JsonFields::element(const std::string& key, size_t index) const {
  return JsonFields(file_, where(key) + "[" + std::to_string(index) + "]", array(key)[index]);
}

}  // namespace kvbench::models
