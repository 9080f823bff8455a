#pragma once
// kvpress's needle in a haystack (NVIDIA/kvpress evaluation/benchmarks/needle_in_haystack): the
// dataset's one row (context, needle, question, answer_prefix, max_new_tokens), the needle inserted
// by utils.py's insert_needle_in_haystack for each max_context_length x depth, each context run by
// kvpress's pipeline (compressed once, the question after it), scored by its calculate_metrics.py
// (pltrdy Rouge().get_scores(needle.strip(), prediction.strip())).
#include <cstdint>
#include <string>
#include <vector>

#include "tasks/example_loop.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {

struct TaskContext;

namespace needle_kvpress {

struct Row {
  std::string context, needle, question, answer_prefix;
  int64_t max_new_tokens = 0;
};
// The first record of a JSONL export of alessiodevoto/paul_graham_essays (what insert_needle reads;
// other fields are left alone).
Row read_row(const std::string& path);

// The row's context and needle as utils.py tokenises them (no special tokens), once per job.
struct EncodedRow {
  std::vector<int> context, needle;
};
EncodedRow encode_row(const models::Tokenizer& tokenizer, const Row& row);

// insert_needle_in_haystack: the context's tokens cut to max_context_length - needle tokens - 150
// (Python's slice: a negative limit drops that many from the end), the needle's tokens at
// int(n * depth / 100), decoded (special tokens skipped) into "This is a very long story book:
// <book> {context} </book>."
std::string insert_needle(const models::Tokenizer& tokenizer, const EncodedRow& row, int64_t max_context_length, double depth);

TaskOutput run(const TaskContext& ctx, const std::string& data_file, const std::vector<int64_t>& lengths, const std::vector<double>& depths);

}  // namespace needle_kvpress
}  // namespace kvbench::tasks
