#pragma once
// A compiled Oniguruma regular expression (Ruby syntax, UTF-8): the engine Hugging Face tokenizers
// runs its Split patterns on, so Unicode classes and lookahead behave identically.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kvbench::models {

// The backtracking steps (Oniguruma's "retries") every search over one text may take together.
// Oniguruma's own limit holds per match: (a+)+$ stays under it at each start position and still
// searches a 46 KB text for minutes. Real patterns take a few steps per byte.
class RegexBudget {
 public:
  explicit RegexBudget(size_t text_bytes);
  size_t text_bytes() const { return text_bytes_; }
  uint64_t total() const { return total_; }
  uint64_t left() const { return left_; }
  void spend(uint64_t steps) { left_ -= steps < left_ ? steps : left_; }

 private:
  size_t text_bytes_;
  uint64_t total_;
  uint64_t left_;
};

// What a search error blames: the file and the field the pattern came from.
struct RegexSource {
  std::string file;
  std::string field;
};

class OnigRegex {
 public:
  // Throws std::invalid_argument with Oniguruma's message when `pattern` does not compile.
  OnigRegex(const std::string& pattern, RegexSource source);
  ~OnigRegex();
  OnigRegex(const OnigRegex&) = delete;
  OnigRegex& operator=(const OnigRegex&) = delete;

  // Every non-overlapping match, left to right, as [begin, end) byte offsets; an empty match right
  // after the previous match is skipped (as the onig crate's find_iter does). Throws ModelLoadError
  // naming the source and the pattern when `budget` is spent or one match is over Oniguruma's limit.
  std::vector<std::pair<size_t, size_t>> find_all(const std::string& text, RegexBudget& budget) const;

 private:
  int search(const std::string& text, size_t from, void* region, void* param, RegexBudget& budget) const;
  [[noreturn]] void fail(const std::string& what) const;

  void* regex_;  // regex_t*
  std::string pattern_;
  RegexSource source_;
};

}  // namespace kvbench::models
