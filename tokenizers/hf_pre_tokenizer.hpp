#pragma once
// Hugging Face tokenizers' pre-tokenizers: Split (Oniguruma regex or literal string, every
// delimiter behaviour, invert), ByteLevel (add_prefix_space, use_regex), Metaspace (sentencepiece
// style: spaces become "▁", prepend_scheme, split) and Sequence.
#include <memory>
#include <string>
#include <vector>

#include "tokenizers/json_fields.hpp"
#include "tokenizers/onig_regex.hpp"

namespace kvbench::models {

// A piece of text on its way to the model; `at_text_start`: it begins at offset 0 of the original
// text (Metaspace's prepend_scheme "first" prepends "▁" there only).
struct PreToken {
  std::string text;
  bool at_text_start = false;
};

class HfPreTokenizer {
 public:
  virtual ~HfPreTokenizer() = default;
  // Replaces each word by the words it splits into (empty words are dropped). Regex searches
  // draw on `budget`, shared by every word of one text.
  virtual void pre_tokenize(std::vector<PreToken>& words, RegexBudget& budget) const = 0;
};

// Throws ModelLoadError naming the field (an unknown type, an invalid regex, ...).
std::unique_ptr<HfPreTokenizer> parse_pre_tokenizer(const JsonFields& fields);
// GPT-2's: ByteLevel with the GPT-2 regex; `source` is blamed if a search fails.
std::unique_ptr<HfPreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex,
                                                              RegexSource source);

}  // namespace kvbench::models
