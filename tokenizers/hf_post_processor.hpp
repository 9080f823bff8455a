#pragma once
// Hugging Face tokenizers' post-processors, which add the special tokens of "add_special_tokens":
// TemplateProcessing (Llama-3's <|begin_of_text|>), ByteLevel (offsets only: ids unchanged) and
// Sequence. A missing/null post-processor is nullptr.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokenizers/json_fields.hpp"

namespace kvbench::models {

class HfPostProcessor {
 public:
  virtual ~HfPostProcessor() = default;
  // The ids of one sequence with the special tokens added when `add_special_tokens`.
  virtual void process(std::vector<int>& ids, bool add_special_tokens) const = 0;
};

// `is_token(id)`: the id belongs to the vocabulary or an added token; any other special-token id
// is refused here, not at run time past the embedding. Throws ModelLoadError naming the field.
std::unique_ptr<HfPostProcessor> parse_post_processor(const JsonFields& fields,
                                                      const std::function<bool(int)>& is_token);

}  // namespace kvbench::models
