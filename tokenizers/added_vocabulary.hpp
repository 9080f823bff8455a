#pragma once
// Hugging Face's added tokens (special or not): found in the text before anything else splits it,
// leftmost-longest, with their lstrip / rstrip / single_word flags. Tokens with `normalized` are
// matched in the normalized text, the others in the raw text.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvbench::models {

class HfNormalizer;

struct AddedToken {
  std::string content;
  int id = -1;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
};

// A piece of the input: an added token's id, or text still to be tokenized (id -1).
struct TextPiece {
  std::string text;
  int id = -1;
  size_t offset = 0;  // where the piece starts in the split text
};

class AddedVocabulary {
 public:
  AddedVocabulary() = default;
  // `normalizer` (may be null) is applied to the content of normalized tokens for matching.
  AddedVocabulary(std::vector<AddedToken> tokens, const HfNormalizer* normalizer);

  // Splits `text` on the raw-text tokens (normalized == false) or the normalized ones.
  std::vector<TextPiece> split(const std::string& text, bool normalized_tokens) const;
  const AddedToken* by_id(int id) const;
  std::optional<int> id_of(const std::string& content) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  // A byte trie over the contents of one kind of token.
  struct Trie {
    struct Node {
      std::unordered_map<unsigned char, int> next;
      int token = -1;  // index into tokens_
    };
    std::vector<Node> nodes{Node{}};
    bool first_byte[256] = {};
    void add(const std::string& key, int token);
    // The longest key starting at `at`: its token index and length, or -1.
    int longest(const std::string& text, size_t at, size_t* length) const;
  };

  std::vector<AddedToken> tokens_;
  std::unordered_map<int, size_t> by_id_;
  std::unordered_map<std::string, int> id_of_;
  Trie raw_, normalized_;
};

}  // namespace kvbench::models
