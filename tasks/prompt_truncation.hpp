#pragma once
// Fitting prompts into a model's window, by the rules the reference evaluations use.
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {

struct TruncatedText {
  std::string text;
  int64_t original_tokens = 0;  // tokens of the input, BOS included
  bool truncated = false;
};

// LongBench pred.py (THUDM/LongBench 2e00731): ids = tokenizer(prompt) (BOS included); if
// len(ids) > max_length: half = int(max_length / 2) and
//   prompt = decode(ids[:half], skip_special_tokens) + decode(ids[-half:], skip_special_tokens).
// The text is re-tokenised by the caller (after the chat template), exactly as pred.py does, so the
// final count can differ from max_length by a token or two at the junction; sentencepiece's decode
// drops the leading space of the second half, as HF's does.
TruncatedText truncate_middle(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length);

// LongBench-v2 pred.py query_llm: ids = tokenizer.encode(prompt) (BOS included); if longer than
// max_length, ids[:max_length//2] + ids[-max_length//2:] (Python's floor division: an odd
// max_length gives the tail the extra token) decoded once, special tokens skipped.
TruncatedText truncate_middle_v2(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length);

// InfiniteBench eval_yarn_mistral.py truncate_by_tokens (eval_chatglm.py and eval_yi_200k.py hold
// copies): ids = tok.encode(prompt) (BOS included); if longer than max_length,
// ids[:max_length//2] + ids[-(max_length//2):] (an odd max_length keeps one token less). The ids
// are decoded back (special tokens skipped) whether cut or not, so the text is the tokenizer's
// round trip of the prompt even when it fits.
TruncatedText truncate_middle_infinitebench(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length);

// Keeps the first max_length tokens (BOS included) and decodes them (HELM's truncate_from_right).
TruncatedText truncate_right(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length);

// Keeps BOS and the last max_length - 1 tokens (HF truncation_side="left").
TruncatedText truncate_left(const models::Tokenizer& tokenizer, const std::string& prompt, int64_t max_length);

}  // namespace kvbench::tasks
