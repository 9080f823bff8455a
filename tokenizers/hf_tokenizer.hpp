#pragma once
// A Hugging Face tokenizer pipeline, as huggingface/tokenizers runs it: added tokens split off the
// raw text, normalizer, added tokens again on the normalized text, pre-tokenizer, BPE model,
// post-processor; decoding through the decoder. Built from tokenizer.json (hf_tokenizer_json.cpp)
// or from GPT-2's vocab.json + merges.txt (gpt2_tokenizer_files.cpp).
#include <memory>
#include <string>
#include <vector>

#include "tokenizers/added_vocabulary.hpp"
#include "tokenizers/bpe_model.hpp"
#include "tokenizers/hf_decoder.hpp"
#include "tokenizers/hf_normalizer.hpp"
#include "tokenizers/hf_post_processor.hpp"
#include "tokenizers/hf_pre_tokenizer.hpp"
#include "tokenizers/tokenizer_backend.hpp"

namespace kvbench::models {

struct HfPipeline {
  std::unique_ptr<HfNormalizer> normalizer;       // may be null
  std::unique_ptr<HfPreTokenizer> pre_tokenizer;  // may be null
  std::unique_ptr<BpeModel> model;
  std::unique_ptr<HfPostProcessor> post_processor;  // may be null
  std::unique_ptr<HfDecoder> decoder;               // may be null: tokens joined with spaces
  std::vector<AddedToken> added_tokens;
};

class HfTokenizer : public TokenizerBackend {
 public:
  HfTokenizer(HfPipeline pipeline, std::string format);

  using TokenizerBackend::encode;
  std::vector<int> encode(const std::string& text, bool add_special_tokens, const std::vector<ExtraSpecialToken>& extra) const override;
  std::string decode(const std::vector<int>& ids, bool skip_special_tokens) const override;
  std::optional<int> token_to_id(const std::string& token) const override;
  std::string piece(int id) const override;
  int vocab_size() const override { return vocab_size_; }
  std::string format() const override { return format_; }
  bool is_special(int id) const;
  const AddedVocabulary& added_vocabulary() const { return added_; }

 private:
  HfPipeline p_;
  AddedVocabulary added_;
  std::string format_;
  int vocab_size_ = 0;
};

// tokenizer.json. Throws ModelLoadError naming the file and the field.
std::unique_ptr<HfTokenizer> load_tokenizer_json(const std::string& path);
// GPT-2's vocab.json + merges.txt, with the pipeline transformers' GPT2TokenizerFast builds from
// them: ByteLevel pre-tokenizer (no prefix space) and decoder, <|endoftext|> a special token.
std::unique_ptr<HfTokenizer> load_gpt2_vocab_merges(const std::string& vocab_path, const std::string& merges_path);

}  // namespace kvbench::models
