#pragma once
// The tokenizer of a model, whatever its format (the file or directory decides, see
// resolve_tokenizer_file): a sentencepiece tokenizer.model (Llama-2, Mistral, stories260K), a
// Hugging Face tokenizer.json (Llama-3, Qwen2.5/3; byte-level BPE), or GPT-2's vocab.json +
// merges.txt. Beside a Hugging Face file, tokenizer_config.json names BOS/EOS and the chat template,
// and generation_config.json the ids generation stops on.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tokenizers/tokenizer_backend.hpp"
#include "tokenizers/tokenizer_config.hpp"

namespace kvbench::models {

// The file kvbench reads for `path`: a file is itself; in a directory, tokenizer.json when present,
// else tokenizer.model, else vocab.json (with merges.txt), else the single *.model file. Throws
// ModelLoadError when there is none.
std::string resolve_tokenizer_file(const std::string& path);

class Tokenizer {
 public:
  explicit Tokenizer(const std::string& path);  // a file or a directory; throws ModelLoadError naming the file
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // add_special_tokens (historically "add_bos"): sentencepiece prepends BOS; a Hugging Face
  // tokenizer runs its post-processor (Llama-3 prepends <|begin_of_text|>, Qwen3 adds nothing).
  // Special-token strings in the text become their ids.
  std::vector<int> encode(const std::string& text, bool add_special_tokens) const;
  // As encode(), with `added_special_tokens` added first as transformers'
  // tokenizer.add_special_tokens({"additional_special_tokens": [...]}) adds them (kvpress's
  // FinchPress delimiter): each keeps the id the vocabulary has for it, else takes the next free
  // one (vocab_size(), vocab_size() + 1, ...), and splits the text wherever it occurs. The
  // tokenizer itself is unchanged.
  std::vector<int> encode(const std::string& text, bool add_special_tokens, const std::vector<std::string>& added_special_tokens) const;
  // Special tokens are kept (as transformers' decode(skip_special_tokens=False)) unless asked.
  // sentencepiece always drops BOS/EOS.
  std::string decode(const std::vector<int>& ids, bool skip_special_tokens = false) const;
  int bos_id() const { return bos_id_; }  // -1 when the tokenizer has none (Qwen3)
  int eos_id() const { return eos_id_; }  // -1 when none
  // Every id generation stops on: EOS and generation_config.json's eos_token_id.
  const std::vector<int>& stop_ids() const { return stop_ids_; }
  int vocab_size() const { return backend_->vocab_size(); }
  std::string piece(int id) const { return backend_->piece(id); }
  std::optional<int> token_to_id(const std::string& token) const { return backend_->token_to_id(token); }
  const std::string& path() const { return path_; }  // the file read
  std::string format() const { return backend_->format(); }
  const TokenizerConfig& config() const { return config_; }

 private:
  std::string path_;
  std::unique_ptr<TokenizerBackend> backend_;
  TokenizerConfig config_;
  int bos_id_ = -1;
  int eos_id_ = -1;
  std::vector<int> stop_ids_;
};

}  // namespace kvbench::models
