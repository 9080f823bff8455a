#pragma once
// The JSON files of a checkpoint and its tokenizer (config.json, tokenizer.json, vocab.json,
// tokenizer_config.json, generation_config.json) through kvbench's one JSON reader
// (datasets/json_parse.hpp: depth limit, repeated keys, numbers beyond a double), every problem a
// ModelLoadError "<file>:<line>: invalid JSON: ...".
#include <nlohmann/json.hpp>

#include <string>

namespace kvbench::models {

nlohmann::json parse_model_json(const std::string& text, const std::string& path);

// Reads the regular file at `path` (`what` names it in errors: "tokenizer.json") and parses it.
nlohmann::json read_model_json(const std::string& path, const std::string& what);

}  // namespace kvbench::models
