#pragma once
// What every tokenizer format provides behind models::Tokenizer (tokenizer.hpp): sentencepiece
// (tokenizer.model), Hugging Face tokenizer.json, GPT-2 vocab.json + merges.txt.
#include <optional>
#include <string>
#include <vector>

namespace kvbench::models {

// A special token added for one encode, as transformers' tokenizer.add_special_tokens() adds one
// (kvpress's FinchPress delimiter): matched in the raw text before anything else, no stripping.
struct ExtraSpecialToken {
  std::string content;
  int id = -1;
};

class TokenizerBackend {
 public:
  virtual ~TokenizerBackend() = default;
  // `add_special_tokens`: sentencepiece prepends BOS; Hugging Face runs the post-processor.
  std::vector<int> encode(const std::string& text, bool add_special_tokens) const { return encode(text, add_special_tokens, {}); }
  virtual std::vector<int> encode(const std::string& text, bool add_special_tokens,
                                  const std::vector<ExtraSpecialToken>& extra) const = 0;
  virtual std::string decode(const std::vector<int>& ids, bool skip_special_tokens) const = 0;
  virtual std::optional<int> token_to_id(const std::string& token) const = 0;
  virtual std::string piece(int id) const = 0;  // "" for an unknown id
  virtual int vocab_size() const = 0;           // highest id + 1
  // The tokenizer's own BOS/EOS, -1 when it has none (Hugging Face files name them in
  // tokenizer_config.json instead).
  virtual int bos_id() const { return -1; }
  virtual int eos_id() const { return -1; }
  virtual std::string format() const = 0;
};

}  // namespace kvbench::models
