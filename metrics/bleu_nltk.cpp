#include "metrics/bleu_nltk.hpp"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "metrics/aggregate.hpp"
#include "metrics/bleu_ngrams.hpp"

namespace kvbench::metrics {
namespace {

// nltk closest_ref_length: min over references by (|len - hyp_len|, len).
int64_t closest_ref_length(const std::vector<std::vector<std::string>>& references, int64_t hyp_len) {
  int64_t best = -1;
  for (const auto& ref : references) {
    const auto len = static_cast<int64_t>(ref.size());
    if (best < 0 || std::llabs(len - hyp_len) < std::llabs(best - hyp_len) ||
        (std::llabs(len - hyp_len) == std::llabs(best - hyp_len) && len < best)) {
      best = len;
    }
  }
  return best;
}

// Adds the modified_precision numerators and denominators of every order of one segment.
void add_modified_precisions(const std::vector<std::vector<std::string>>& references,
                             const std::vector<std::string>& hypothesis, size_t orders,
                             std::vector<int64_t>& numerators, std::vector<int64_t>& denominators) {
  detail::NgramInterner interner;
  size_t n_tokens = hypothesis.size();
  for (const auto& ref : references) n_tokens += ref.size();
  interner.reserve(n_tokens, static_cast<int>(orders));
  const std::vector<uint32_t> hyp = interner.ngrams(hypothesis, static_cast<int>(orders));
  std::vector<std::vector<uint32_t>> refs;
  for (const auto& ref : references) refs.push_back(interner.ngrams(ref, static_cast<int>(orders)));

  std::vector<int32_t> max_ref(interner.size(), 0), this_ref(interner.size(), 0), hyp_count(interner.size(), 0);
  for (const auto& ids : refs) {
    for (uint32_t id : ids) ++this_ref[id];
    for (uint32_t id : ids) max_ref[id] = std::max(max_ref[id], this_ref[id]);
    for (uint32_t id : ids) this_ref[id] = 0;
  }
  std::vector<int64_t> numerator(orders, 0), total(orders, 0);
  for (uint32_t id : hyp) ++hyp_count[id];
  for (uint32_t id : hyp) {
    if (hyp_count[id] == 0) continue;
    const size_t n = static_cast<size_t>(interner.order(id)) - 1;
    total[n] += hyp_count[id];
    numerator[n] += std::min(hyp_count[id], max_ref[id]);
    hyp_count[id] = 0;
  }
  for (size_t n = 0; n < orders; ++n) {
    numerators[n] += numerator[n];
    denominators[n] += std::max<int64_t>(1, total[n]);
  }
}

}  // namespace

double nltk_corpus_bleu(const std::vector<std::vector<std::vector<std::string>>>& list_of_references,
                        const std::vector<std::vector<std::string>>& hypotheses, const NltkBleuOptions& options) {
  if (list_of_references.size() != hypotheses.size())
    throw std::invalid_argument("nltk bleu: " + std::to_string(hypotheses.size()) + " hypotheses but " +
                                std::to_string(list_of_references.size()) + " reference lists");
  if (options.weights.empty()) throw std::invalid_argument("nltk bleu: empty weights");
  if (options.weights.size() > 255) throw std::invalid_argument("nltk bleu: more than 255 n-gram orders");
  const size_t orders = options.weights.size();
  std::vector<int64_t> numerators(orders, 0), denominators(orders, 0);
  int64_t hyp_lengths = 0, ref_lengths = 0;
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    if (list_of_references[s].empty())
      throw std::invalid_argument("nltk bleu: hypothesis " + std::to_string(s) + " has no reference");
    add_modified_precisions(list_of_references[s], hypotheses[s], orders, numerators, denominators);
    const auto hyp_len = static_cast<int64_t>(hypotheses[s].size());
    hyp_lengths += hyp_len;
    ref_lengths += closest_ref_length(list_of_references[s], hyp_len);
  }

  double bp;
  if (hyp_lengths > ref_lengths) {
    bp = 1.0;
  } else if (hyp_lengths == 0) {
    bp = 0.0;
  } else {
    bp = std::exp(1.0 - static_cast<double>(ref_lengths) / static_cast<double>(hyp_lengths));
  }
  if (numerators[0] == 0) return 0.0;  // no unigram match

  std::vector<double> terms;
  int64_t halvings = 1;  // method4's incvnt
  for (size_t n = 0; n < orders; ++n) {
    double p;
    if (numerators[n] != 0) {
      p = static_cast<double>(numerators[n]) / static_cast<double>(denominators[n]);  // float(Fraction)
    } else if (options.smoothing == NltkSmoothing::Method1) {
      p = (0 + options.epsilon) / static_cast<double>(denominators[n]);
    } else if (options.smoothing == NltkSmoothing::Method4) {
      // 1 / (2**incvnt * k / ln(hyp_len)) / denominator where the hypothesis has 2+ tokens, else 0 (skipped).
      p = 0;
      if (hyp_lengths > 1) {
        const double scaled = static_cast<double>((int64_t{1} << halvings++) * options.k) / std::log(static_cast<double>(hyp_lengths));
        p = 1 / scaled / static_cast<double>(denominators[n]);
      }
    } else {
      p = DBL_MIN;  // method0: sys.float_info.min
    }
    if (p > 0) terms.push_back(options.weights[n] * std::log(p));
  }
  return bp * std::exp(python_fsum(terms));
}

double nltk_sentence_bleu(const std::vector<std::vector<std::string>>& references,
                          const std::vector<std::string>& hypothesis, const NltkBleuOptions& options) {
  return nltk_corpus_bleu({references}, {hypothesis}, options);
}

}  // namespace kvbench::metrics
