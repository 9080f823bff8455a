#include "datasets/jsonl_reader.hpp"

#include <cmath>

#include "datasets/json_parse.hpp"
#include "datasets/line_reader.hpp"

namespace kvbench::datasets {

std::string describe_json(const nlohmann::json& v) {
  std::string type = v.type_name();
  if (v.is_primitive() && !v.is_null()) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return type + " " + text;
  }
  return type;
}

DataError JsonRecord::field_error(const std::string& name, const std::string& what) const {
  return DataError(file, line, "field '" + name + "': " + what);
}

const nlohmann::json& JsonRecord::field(const std::string& name) const {
  auto it = value.find(name);
  if (it == value.end()) throw field_error(name, "missing");
  return *it;
}

std::string JsonRecord::string_field(const std::string& name) const {
  const auto& v = field(name);
  if (!v.is_string()) throw field_error(name, "expected a string, got " + describe_json(v));
  return v.get<std::string>();
}

int64_t JsonRecord::int_field(const std::string& name) const {
  const auto& v = field(name);
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  throw field_error(name, "expected an integer, got " + describe_json(v));
}

double JsonRecord::number_field(const std::string& name) const {
  const auto& v = field(name);
  if (!v.is_number()) throw field_error(name, "expected a number, got " + describe_json(v));
  return v.get<double>();
}

bool JsonRecord::bool_field(const std::string& name) const {
  const auto& v = field(name);
  if (!v.is_boolean()) throw field_error(name, "expected true or false, got " + describe_json(v));
  return v.get<bool>();
}

std::vector<std::string> JsonRecord::string_list_field(const std::string& name, bool allow_single) const {
  const auto& v = field(name);
  if (allow_single && v.is_string()) return {v.get<std::string>()};
  if (!v.is_array()) throw field_error(name, "expected a list of strings, got " + describe_json(v));
  std::vector<std::string> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      throw field_error(name, "element " + std::to_string(i) + ": expected a string, got " + describe_json(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::string JsonRecord::string_field_or(const std::string& name, const std::string& fallback) const {
  auto it = value.find(name);
  if (it == value.end() || it->is_null()) return fallback;
  return string_field(name);
}

int64_t JsonRecord::int_field_or(const std::string& name, int64_t fallback) const {
  auto it = value.find(name);
  if (it == value.end() || it->is_null()) return fallback;
  return int_field(name);
}

void for_each_jsonl(const std::string& path, const std::function<bool(const JsonRecord&)>& fn) {
  LineReader reader(path);
  std::string line;
  JsonRecord record;
  record.file = path;
  while (reader.next(line)) {
    if (reader.line_number() == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    record.line = reader.line_number();
    record.value = parse_json(line, path, record.line);
    if (!record.value.is_object())
      throw DataError(path, record.line, "expected a JSON object, got " + describe_json(record.value));
    if (!fn(record)) return;
  }
}

std::vector<JsonRecord> read_jsonl(const std::string& path, int64_t limit) {
  std::vector<JsonRecord> out;
  for_each_jsonl(path, [&](const JsonRecord& r) {
    out.push_back(r);
    return limit <= 0 || static_cast<int64_t>(out.size()) < limit;
  });
  return out;
}

}  // namespace kvbench::datasets
