#pragma once
// Hugging Face tokenizers' decoders: ByteLevel, and for sentencepiece-style tokenizer.json files
// Replace (a literal string), ByteFallback, Fuse, Strip; Sequence chains them. Without a decoder the
// tokens are joined with spaces.
#include <memory>
#include <string>
#include <vector>

#include "tokenizers/json_fields.hpp"

namespace kvbench::models {

class HfDecoder {
 public:
  virtual ~HfDecoder() = default;
  virtual std::vector<std::string> decode_chain(std::vector<std::string> tokens) const = 0;
  std::string decode(std::vector<std::string> tokens) const;
};

std::unique_ptr<HfDecoder> parse_decoder(const JsonFields& fields);
std::unique_ptr<HfDecoder> make_byte_level_decoder();

}  // namespace kvbench::models
