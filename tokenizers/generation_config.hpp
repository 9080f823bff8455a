#pragma once
// generation_config.json (transformers) beside a model: the ids generation stops on.
#include <string>
#include <vector>

namespace kvbench::models {

// `eos_token_id`: an int or a list of ints (Llama-3.1-Instruct stops on <|end_of_text|>,
// <|eom_id|> and <|eot_id|>); empty when absent or null. Throws ModelLoadError naming the field.
std::vector<int> read_generation_eos_ids(const std::string& path);

}  // namespace kvbench::models
