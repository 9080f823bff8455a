// config.json integers outside what any model has: refused naming the file, the line and the field,
// with the number as written (not wrapped to int64).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "models/hf_config.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

// One field per line; `field` is written verbatim as the last one.
std::string config_with(const std::string& field, const std::string& raw_value) {
  nlohmann::json base = {{"model_type", "llama"},      {"hidden_size", 64},       {"intermediate_size", 128},
                         {"num_hidden_layers", 2},      {"num_attention_heads", 4}, {"vocab_size", 512},
                         {"max_position_embeddings", 256}};
  base.erase(field);
  std::string text = base.dump(1);
  text.insert(text.rfind('}'), ",\n \"" + field + "\": " + raw_value + "\n");
  return text;
}

std::string config_error(const std::string& text) {
  try {
    parse_hf_config(text, "config.json");
  } catch (const ModelLoadError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HfConfigBounds, IntegersPastTheBoundAreOutOfRangeAsWritten) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"max_position_embeddings", "1000000000000"},  // a needle task sized its grid to this and hung
      {"vocab_size", "18446744073709551615"},        // was "must be at least 1, got -1"
      {"hidden_size", "9223372036854775808"},
      {"num_hidden_layers", "2147483648"},
      {"num_key_value_heads", "4294967296"},
      {"head_dim", "9223372036854775807"}};
  for (const auto& [field, value] : cases) {
    const std::string text = config_with(field, value);
    const std::string line = std::to_string(std::count(text.begin(), text.begin() + text.find("\"" + field + "\""), '\n') + 1);
    EXPECT_EQ(config_error(text),
              "config.json:" + line + ": field '" + field + "': out of range: must be at most 2147483647, got " + value);
  }
}

TEST(HfConfigBounds, TheBoundItselfIsAccepted) {
  EXPECT_EQ(parse_hf_config(config_with("max_position_embeddings", "2147483647"), "config.json").max_seq_len, 2147483647);
}

TEST(HfConfigBounds, NestedIntegersAreBoundedToo) {
  const std::string text = config_with(
      "rope_scaling", R"({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 18446744073709551615})");
  EXPECT_NE(config_error(text).find("field 'original_max_position_embeddings': out of range: must be at most 2147483647, "
                                    "got 18446744073709551615"), std::string::npos) << config_error(text);
}

}  // namespace
}  // namespace kvbench::models
