// nltk 3.8 nltk.translate.bleu_score sentence_bleu / corpus_bleu on token lists, bit for bit
// (the BLEU of Self-BLEU and of BUZZ's run_bleu_eval).
//
// modified_precision(refs, hyp, n): Fraction(clipped matches, max(1, #hyp n-grams)) left
// unnormalised; corpus sums of numerators and denominators; closest reference length
// (min by (|r - h|, r)); brevity penalty 1 if h > r, 0 if h == 0, else exp(1 - r/h);
// if no unigram matches: 0; smoothing on the precisions; then
//   bp * exp(math.fsum(w_i * log(p_i) for each order with p_i > 0)).
// log(Fraction) is log of the correctly rounded numerator/denominator, and math.fsum is the
// correctly rounded sum, both reproduced.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvbench::metrics {

enum class NltkSmoothing {
  Method0,  // nltk's default (no smoothing function): a 0-match order becomes
            // sys.float_info.min, i.e. contributes w * log(2.2250738585072014e-308)
  Method1,  // SmoothingFunction().method1: a 0-match order becomes (0 + epsilon) / denominator
  Method4,  // SmoothingFunction().method4: the i-th 0-match order becomes 1 / (2^i · k / ln(hyp_len)) / denominator
            // (hyp_len > 1; else it stays 0 and is left out)
};

struct NltkBleuOptions {
  std::vector<double> weights{0.25, 0.25, 0.25, 0.25};  // one per n-gram order
  NltkSmoothing smoothing = NltkSmoothing::Method0;
  double epsilon = 0.1;  // method1's epsilon (SmoothingFunction(epsilon=0.1))
  int64_t k = 5;         // method4's k (SmoothingFunction(k=5))
};

// corpus_bleu(list_of_references, hypotheses, weights, smoothing). Throws std::invalid_argument
// on a size mismatch, empty weights, or a hypothesis without references (nltk fails there).
double nltk_corpus_bleu(const std::vector<std::vector<std::vector<std::string>>>& list_of_references,
                        const std::vector<std::vector<std::string>>& hypotheses,
                        const NltkBleuOptions& options = NltkBleuOptions());

// sentence_bleu(references, hypothesis, weights, smoothing) = corpus_bleu([references], [hypothesis]).
double nltk_sentence_bleu(const std::vector<std::vector<std::string>>& references,
                          const std::vector<std::string>& hypothesis,
                          const NltkBleuOptions& options = NltkBleuOptions());

}  // namespace kvbench::metrics
