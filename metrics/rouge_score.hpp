// Google rouge_score (google-research `rouge/`, the library behind `pip install rouge-score`),
// reproduced bit for bit: tokenizer, rouge1..rouge9, rougeL, rougeLsum, score_multi.
//
// Tokenizer: Python str.lower() on the whole Unicode text, every character outside [a-z0-9]
// separates tokens (so all non-ASCII does), with use_stemmer the NLTK Porter stemmer is applied
// to tokens longer than 3 characters only.
// rougeN: clipped multiset n-gram matches, P = hits/max(#pred n-grams,1), R = hits/max(#ref,1).
// rougeL: LCS of the token lists; Score(0,0,0) when either is empty.
// rougeLsum: lines split on "\n" only (empty lines dropped), union-LCS per reference line with
// rouge_score's non-recursive backtrack (on a tie it moves i unless t[i][j-1] > t[i-1][j]),
// hits capped by per-token counts so nothing is counted twice.
// F = 2*P*R/(P+R) evaluated left to right, 0 when P+R == 0.
// Stated bounds (scorer_limits.hpp): rougeL refuses inputs beyond kMaxLcsLengthWords and
// rougeLsum beyond kMaxLcsTableCells with ScorerLimitError, before any work.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kvbench::metrics {

struct RougeScore {
  double precision = 0.0;
  double recall = 0.0;
  double fmeasure = 0.0;
};

// rouge_score's scoring.fmeasure.
double rouge_fmeasure(double precision, double recall);

// tokenize.tokenize(text, stemmer): lowercase, [^a-z0-9]+ -> space, split, stem (len > 3).
std::vector<std::string> rouge_tokenize(const std::string& text, bool use_stemmer);

RougeScore rouge_n(const std::vector<std::string>& target_tokens,
                   const std::vector<std::string>& prediction_tokens, int n);
RougeScore rouge_l(const std::vector<std::string>& target_tokens,
                   const std::vector<std::string>& prediction_tokens);
// Summary-level LCS over already tokenized sentences.
RougeScore rouge_lsum(const std::vector<std::vector<std::string>>& target_sentences,
                      const std::vector<std::vector<std::string>>& prediction_sentences);

// RougeScorer(rouge_types, use_stemmer) with split_summaries=False.
// Types: "rouge1".."rouge9", "rougeL", "rougeLsum"; anything else throws std::invalid_argument.
class RougeScorer {
 public:
  explicit RougeScorer(std::vector<std::string> rouge_types = {"rouge1", "rouge2", "rougeL",
                                                               "rougeLsum"},
                       bool use_stemmer = false);

  // Note the argument order of the reference: target (reference) first.
  std::map<std::string, RougeScore> score(const std::string& target,
                                          const std::string& prediction) const;
  // Per type, the whole Score of the target with the largest fmeasure (np.argmax: first wins a
  // tie) -- not the field-wise max. Throws std::invalid_argument on an empty target list.
  std::map<std::string, RougeScore> score_multi(const std::vector<std::string>& targets,
                                                const std::string& prediction) const;

  const std::vector<std::string>& rouge_types() const { return types_; }
  bool use_stemmer() const { return use_stemmer_; }

 private:
  std::vector<std::string> types_;
  bool use_stemmer_;
};

// Plain mean of each field over the scores (Python sum(...)/len, summed in order), per type.
// This is the mean the papers report (not the BootstrapAggregator's resampled mid). Empty input
// gives an empty map.
std::map<std::string, RougeScore> rouge_mean(
    const std::vector<std::map<std::string, RougeScore>>& scores);

}  // namespace kvbench::metrics
