#include "tasks/prompt_truncation.hpp"

#include <stdexcept>

namespace kvbench::tasks {
namespace {

std::string decode_range(const models::Tokenizer& tok, const std::vector<int>& ids, size_t begin, size_t end) {
  // pred.py: tokenizer.decode(ids[...], skip_special_tokens=True); the BOS is dropped.
  return tok.decode(std::vector<int>(ids.begin() + begin, ids.begin() + end), /*skip_special_tokens=*/true);
}

void check(int64_t max_length) {
  if (max_length < 2) throw std::invalid_argument("prompt truncation: max_length must be >= 2, got " + std::to_string(max_length));
}

}  // namespace

TruncatedText truncate_middle(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length) {
  check(max_length);
  const std::vector<int> ids = tokenizer.encode(prompt, /*add_bos=*/true);
  TruncatedText out{prompt, static_cast<int64_t>(ids.size()), false};
  if (out.original_tokens <= max_length) return out;
  const size_t half = static_cast<size_t>(max_length / 2);
  out.text = decode_range(tokenizer, ids, 0, half) + decode_range(tokenizer, ids, ids.size() - half, ids.size());
  out.truncated = true;
  return out;
}

TruncatedText truncate_middle_v2(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length) {
  check(max_length);
  const std::vector<int> ids = tokenizer.encode(prompt, /*add_bos=*/true);
  TruncatedText out{prompt, static_cast<int64_t>(ids.size()), false};
  if (out.original_tokens <= max_length) return out;
  const size_t head = static_cast<size_t>(max_length / 2), tail = static_cast<size_t>(max_length - max_length / 2);
  std::vector<int> kept(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(head));
  kept.insert(kept.end(), ids.end() - static_cast<std::ptrdiff_t>(tail), ids.end());
  out.text = decode_range(tokenizer, kept, 0, kept.size());
  out.truncated = true;
  return out;
}

TruncatedText truncate_middle_infinitebench(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length) {
  check(max_length);
  std::vector<int> ids = tokenizer.encode(prompt, /*add_bos=*/true);
  TruncatedText out{prompt, static_cast<int64_t>(ids.size()), false};
  if (out.original_tokens > max_length) {
    const auto split = static_cast<std::ptrdiff_t>(max_length / 2);
    ids.erase(ids.begin() + split, ids.end() - split);
    out.truncated = true;
  }
  out.text = decode_range(tokenizer, ids, 0, ids.size());
  return out;
}

TruncatedText truncate_right(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length) {
  check(max_length);
  const std::vector<int> ids = tokenizer.encode(prompt, /*add_bos=*/true);
  TruncatedText out{prompt, static_cast<int64_t>(ids.size()), false};
  if (out.original_tokens <= max_length) return out;
  out.text = decode_range(tokenizer, ids, 0, static_cast<size_t>(max_length));
  out.truncated = true;
  return out;
}

TruncatedText truncate_left(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length) {
  check(max_length);
  const std::vector<int> ids = tokenizer.encode(prompt, /*add_bos=*/true);
  TruncatedText out{prompt, static_cast<int64_t>(ids.size()), false};
  if (out.original_tokens <= max_length) return out;
  out.text = decode_range(tokenizer, ids, ids.size() - static_cast<size_t>(max_length - 1), ids.size());
  out.truncated = true;
  return out;
}

}  // namespace kvbench::tasks
