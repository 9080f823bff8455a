#pragma once
// Hugging Face tokenizers' normalizers: NFC, NFD, NFKC, NFKD (utf8proc), Prepend, Replace (a
// literal string) and Sequence. A missing/null normalizer is nullptr.
#include <memory>
#include <string>

#include "tokenizers/json_fields.hpp"

namespace kvbench::models {

class HfNormalizer {
 public:
  virtual ~HfNormalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

// Throws ModelLoadError naming the field for an unknown type or a malformed entry.
std::unique_ptr<HfNormalizer> parse_normalizer(const JsonFields& fields);

}  // namespace kvbench::models
