#pragma once
// The BPE model of Hugging Face tokenizers: a vocabulary and ranked merges applied to one
// pre-tokenized word, lowest rank first (leftmost on ties), with a priority queue and a word cache.
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kvbench::models {

struct BpeOptions {
  std::optional<std::string> unk_token;
  std::optional<std::string> continuing_subword_prefix;
  std::optional<std::string> end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;  // unknown characters become <0xXX> byte tokens
  bool ignore_merges = false;  // a word that is itself in the vocabulary is one token
};

class BpeModel {
 public:
  using Vocab = std::unordered_map<std::string, int>;
  using Merges = std::vector<std::pair<std::string, std::string>>;
  // `fail(i, what)` reports a bad merge i (it must throw); e.g. a merge naming an unknown token.
  BpeModel(Vocab vocab, const Merges& merges, BpeOptions options,
           const std::function<void(size_t, const std::string&)>& fail);

  // Appends the ids of one word.
  void tokenize(const std::string& word, std::vector<int>& out) const;
  std::optional<int> token_to_id(const std::string& token) const;
  const std::string* id_to_token(int id) const;  // nullptr when unknown
  int vocab_size() const { return static_cast<int>(vocab_.size()); }
  int max_id() const { return static_cast<int>(tokens_.size()) - 1; }

 private:
  struct Merge {
    uint32_t rank;
    int new_id;
  };
  std::vector<int> merge_word(const std::string& word) const;
  const Merge* find_merge(int left, int right) const;

  Vocab vocab_;
  std::vector<std::string> tokens_;  // by id
  std::vector<bool> has_token_;
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  std::optional<int> unk_id_;
  bool decorated_ = false;       // a subword prefix or word suffix changes the per-character tokens
  std::vector<int> char_ids_;   // code point -> id of that one-character token, or -1

  // Words; once full no more are inserted (Hugging Face keeps 10,000; the size changes no result).
  static constexpr size_t kCacheCapacity = 200000;
  static constexpr size_t kCacheMaxWordBytes = 256;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int>> cache_;
};

// Why `vocab` cannot be a BPE vocabulary, or "" when it can: empty (every text would tokenize to
// nothing), or one id held by two tokens (decoding it would pick one of the two strings), named
// as "id 5 is held by both \"a\" and \"b\"".
std::string vocab_problem(const BpeModel::Vocab& vocab);

}  // namespace kvbench::models
