#pragma once
// A sentencepiece tokenizer.model (Llama-2's 32k, stories260K's tok512, Mistral's), read by the
// sentencepiece library through its isolated shim (sentencepiece_shim/).
#include <memory>
#include <string>

#include "tokenizers/tokenizer_backend.hpp"

namespace kvbench::models {

class SentencePieceInterface;

class SentencePieceTokenizer : public TokenizerBackend {
 public:
  explicit SentencePieceTokenizer(const std::string& model_path);  // throws ModelLoadError naming the file
  ~SentencePieceTokenizer() override;

  // add_special_tokens prepends BOS; "<s>" / "</s>" written in the text become BOS / EOS (as
  // transformers' LlamaTokenizer). Decoding always drops BOS and EOS (sentencepiece renders its
  // control tokens as nothing).
  using TokenizerBackend::encode;
  std::vector<int> encode(const std::string& text, bool add_special_tokens, const std::vector<ExtraSpecialToken>& extra) const override;
  std::string decode(const std::vector<int>& ids, bool skip_special_tokens) const override;
  std::optional<int> token_to_id(const std::string& token) const override;
  std::string piece(int id) const override;
  int vocab_size() const override;
  int bos_id() const override;
  int eos_id() const override;
  std::string format() const override { return "sentencepiece"; }

 private:
  std::unique_ptr<SentencePieceInterface> sp_;
};

}  // namespace kvbench::models
