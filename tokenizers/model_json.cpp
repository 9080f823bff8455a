#include "tokenizers/model_json.hpp"

#include <stdexcept>

#include "datasets/json_parse.hpp"
#include "datasets/regular_file.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {

nlohmann::json parse_model_json(const std::string& text, const std::string& path) {
  try {
    return datasets::parse_json(text, path);
  } catch (const datasets::DataError& e) {
    const std::string where = e.file() + ":" + std::to_string(e.line());  // e.what() = "<where>: <what>"
    throw ModelLoadError(where, std::string(e.what()).substr(where.size() + 2));
  }
}

nlohmann::json read_model_json(const std::string& path, const std::string& what) {
  std::string text;
  try {
    text = datasets::read_regular_file(path, what);
  } catch (const std::runtime_error& e) {
    throw ModelLoadError(path, "cannot read " + what + " (" + e.what() + ")");
  }
  return parse_model_json(text, path);
}

}  // namespace kvbench::models
