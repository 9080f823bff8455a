#pragma once
// News summarization (XSum, CNN/DailyMail) as the KV-cache papers ran it:
//  - helm (HELM itself, stanford-crfm/helm summarization_scenario.py + the in-context-learning
//    adapter): articles cleaned (newlines flattened, whitespace collapsed, cut to 512 words); each
//    shot is "###\nArticle: {article}\n\nSummarize the above article in {N} sentence(s).\n{summary}\n",
//    the evaluated block ends with the instruction without its newline (output_prefix.rstrip()),
//    blocks are joined by "\n" (instance_prefix); N = 1 (XSum) or 3 (CNN/DM); shots are drawn from
//    the training split (articles of 50-150 words, XSum's extra filter) by HELM's sample_examples
//    with Python's random seeded by the trial index; stop "###"; max tokens 64 / 128; BOS (HF).
//  - h2o (H2O run_summarization.py): the request files H2O generated with HELM (xsum_0shot.jsonl:
//    the evaluated block keeps the instruction's newline), fed WITHOUT BOS
//    (add_special_tokens=False), pltrdy ROUGE, the text[:text.find("###")] cut.
//  - buzz (BUZZ main_run.py): "Text: {article}\n\nSUMMARIZE the previous text to 50 words!" on the
//    raw article, BOS, greedy until EOS (max_gen_len 1000).
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench::tasks::summarization {

struct Document {
  std::string id;
  std::string article;  // raw article text (unwrapped)
  std::string summary;  // the reference
  int64_t line = 0;
};

// Reads any of: the H2O/HELM request file (article wrapped as above, summary_gt), the HF XSum
// export (document, summary, id) or the HF CNN/DailyMail export (article, highlights, id).
// `num_sentences` is the N of the wrapped format. DataError "<file>:<line>: ..." on bad records.
std::vector<Document> read_documents(const std::string& path, int num_sentences, int64_t limit = 0);

// Python's str.split() (any run of Unicode whitespace, as CPython's _PyUnicode_IsWhitespace).
std::vector<std::string> python_split(const std::string& text);
// HELM's _clean_and_truncate: text.replace("\n", " "), then " ".join(text.split()[:max_words])
// (max_words <= 0: no cut).
std::string helm_clean(const std::string& text, int64_t max_words);
// HELM's _xsum_filter on a cleaned training pair: true = dropped.
bool helm_xsum_filter(const std::string& article, const std::string& summary);

struct ShotPoolRule {
  int64_t doc_max_words = 512;  // doc_max_length
  int64_t min_words = 50;       // sampling_min_length
  int64_t max_words = 150;      // sampling_max_length
  bool xsum_filter = false;     // dataset_name == "xsum"
};
// HELM's training instances: every pair cleaned (article cut to doc_max_words), articles outside
// [min_words, max_words] words dropped, then XSum's filter. File order is kept.
std::vector<Document> helm_training_pool(const std::vector<Document>& train, const ShotPoolRule& rule);
// HELM's InContextLearningAdapter.sample_examples(pool, seed) with max_train_instances = k:
// labels (summaries) sorted, grouped by count (most frequent first), ties shuffled by Python's
// random seeded with `seed`, one instance per label in turn (randrange pick). Indices into pool.
std::vector<size_t> helm_sample_examples(const std::vector<Document>& pool, size_t k, uint32_t seed);

std::string helm_instruction(int num_sentences);  // "Summarize the above article in 1 sentence.\n"
// The evaluated block: "###\nArticle: {article}\n\n" + the instruction, with its trailing newline
// (H2O's request files) or without it (HELM's output_prefix.rstrip()).
std::string helm_block(const std::string& article, int num_sentences, bool keep_newline = true);
std::string helm_prompt(const std::vector<const Document*>& shots, const Document& doc, int num_sentences,
                        bool keep_newline = true);
std::string buzz_prompt(const Document& doc);

// k shot indices for document `index` out of n: the first k entries of a seeded permutation of
// 0..n-1 that are not `index` (used when no training split is given: shots from the evaluated
// file, never the document itself). Deterministic in (n, seed).
std::vector<size_t> pick_shots(size_t n, size_t index, size_t k, uint64_t seed);

// BUZZ's "mean ROUGE": the geometric mean of ROUGE-1, ROUGE-2 and ROUGE-L.
double rouge_geometric_mean(double r1, double r2, double rl);

}  // namespace kvbench::tasks::summarization
