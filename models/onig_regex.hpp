#pragma once
// A compiled Oniguruma regular expression (Ruby syntax, UTF-8): the engine Hugging Face tokenizers
// runs its Split patterns on, so Unicode classes and lookahead behave identically.
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kvbench::models {

class OnigRegex {
 public:
  // Throws std::invalid_argument with Oniguruma's message when `pattern` does not compile.
  explicit OnigRegex(const std::string& pattern);
  ~OnigRegex();
  OnigRegex(const OnigRegex&) = delete;
  OnigRegex& operator=(const OnigRegex&) = delete;

  // Every non-overlapping match, left to right, as [begin, end) byte offsets; an empty match right
  // after the previous match is skipped (as the onig crate's find_iter does).
  std::vector<std::pair<size_t, size_t>> find_all(const std::string& text) const;

 private:
  void* regex_;  // regex_t*
};

}  // namespace kvbench::models
