#pragma once
// Needle-in-a-haystack context construction, as gkamradt/LLMTest_NeedleInAHaystack builds it
// (needlehaystack/llm_needle_haystack_tester.py, the same code the KV-cache papers' forks —
// KVCache-Factory/PyramidKV, HeadKV/Retrieval_Head — copy):
//  1. read_context_files: the essays concatenated (no separator), the whole set appended again
//     until the text has at least max(context_lengths) tokens. The tester globs "*.txt" (file
//     system order); we take sorted file names so the haystack is the same on every machine.
//  2. encode_and_trim: the first context_length tokens of the haystack, decoded back to text.
//  3. insert_needle: context_length -= final_context_length_buffer; if context + needle tokens
//     exceed it, the context is cut to context_length - len(needle); depth 100 appends the
//     needle; otherwise insertion_point = int(len(context) * depth / 100) and it walks back
//     until the token before it is a period token, then inserts the needle tokens there.
//     The tester's period tokens are `encode('.')`; for a sentencepiece tokenizer that is the
//     dummy-prefix piece "▁." (plus BOS on HF Llama), which almost never ends a sentence in
//     running text, so its walk back reaches the start. We take the intent: every id whose piece
//     is "." or "▁." (`period_token_ids`).
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {

// The original test's needle and retrieval question (gkamradt run.py defaults).
inline const char* kNeedle = "\nThe best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a sunny day.\n";
inline const char* kNeedleQuestion = "What is the best thing to do in San Francisco?";
// KVCache-Factory's (and HeadKV's) retrieval_question: a completion cue, not a question.
inline const char* kKvcacheFactoryQuestion = "The best thing to do in San Francisco is: ";
// The needle's answer part HeadKV scores against (run_needle_visulize.py's expected_answer).
inline const char* kNeedleAnswer = "eat a sandwich and sit in Dolores Park on a sunny day.";

// The *.txt files of `dir`, "sorted" by name (kvbench's default: the same on every machine) or in
// "directory" order — readdir's, which Python's glob in the reference testers walks; it differs
// between file systems, so the reference's haystack is not portable. Throws std::runtime_error
// naming the folder when there are none.
std::vector<std::string> haystack_files(const std::string& dir, const std::string& order = "sorted");
// The named files of `dir` in the given order (e.g. the order a reference run saw).
std::vector<std::string> haystack_files(const std::string& dir, const std::vector<std::string>& names);

// Step 1: the files' text concatenated, repeated until it has >= min_tokens tokens.
std::string read_haystack(const std::vector<std::string>& files, const models::Tokenizer& tok, int64_t min_tokens);

// Ids whose piece is "." or "▁.".
std::vector<int> period_token_ids(const models::Tokenizer& tok);

struct NeedlePlacement {
  std::vector<int> tokens;     // context tokens with the needle inserted (no BOS)
  int64_t needle_begin = 0;    // index of the needle's first token in `tokens`
  int64_t needle_length = 0;
  int64_t requested_point = 0; // int(len(context) * depth / 100) before the walk back
  int64_t context_tokens = 0;  // haystack tokens kept (after the cut for the needle)
};

// Step 2: decode(encode(text)[:context_length]).
std::string trim_to_tokens(const std::string& text, const models::Tokenizer& tok, int64_t context_length);

// Step 3 on token ids: `context` = encode(trimmed text), `needle` = encode(needle), no BOS.
NeedlePlacement place_needle(const std::vector<int>& context, const std::vector<int>& needle, double depth_percent,
                             int64_t context_length, int64_t final_context_length_buffer,
                             const std::vector<int>& period_ids);

// Scores of one response (the original's GPT judge cannot run here; the KV-cache papers' forks
// replaced it):
//  - score: KVCache-Factory/PyramidKV, rouge_score rouge1 F (use_stemmer) x 10 against the
//    needle, 0 for an empty response (0–10, the original's scale);
//  - headkv: HeadKV's needle score (run_needle_visulize.py) x 100: the share of the answer's
//    distinct lower-cased whitespace-separated words that occur among the response's (K-VEC
//    Table 4 follows HeadKV); a response holding the answer scores 100;
//  - rouge1_recall: rouge1 recall x 100 against the whole needle (Retrieval_Head's retrieval-head
//    detection score; not HeadKV's needle score);
//  - keyword: 1 if every keyword occurs in the response (ASCII case-insensitive), else 0.
struct NeedleScores {
  double score = 0;
  double headkv = 0;
  double rouge1_recall = 0;
  double keyword = 0;
};
NeedleScores score_needle_response(const std::string& needle, const std::string& answer, const std::string& response,
                                   const std::vector<std::string>& keywords);

// HeadKV: |set(response.lower().split()) ∩ set(answer.lower().split())| / |set(answer...)|, in [0, 1]
// (Python's str.split() and str.lower() on ASCII).
double headkv_needle_score(const std::string& answer, const std::string& response);

}  // namespace kvbench::tasks
