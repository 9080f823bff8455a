// RULER scripts/data/synthetic/freq_words_extraction.py: random 6-letter "coded words" drawn with
// Zipf frequencies (count of rank k = int(num_words * k**-alpha / zeta(alpha)), rank 1 is the
// '...' noise), the three next most frequent to be named.
#include <cmath>
#include <set>

#include "datasets/python_format.hpp"
#include "datasets/ruler/generator_run.hpp"

namespace kvbench::datasets::ruler {
namespace {

const std::vector<char> kLowercase = [] {
  std::vector<char> v;
  for (char c = 'a'; c <= 'z'; ++c) v.push_back(c);
  return v;
}();

// scipy.special.zeta(alpha): RULER uses alpha = 2, where scipy returns the double nearest pi^2/6.
double riemann_zeta(double alpha) {
  if (alpha == 2.0) return 1.6449340668482264;
  throw std::invalid_argument("RULER fwe: alpha must be 2.0 (RULER's value; scipy's zeta is reproduced there only)");
}

struct FreqWords {
  GeneratorRun& run;
  double alpha;
  std::size_t coded_wordlen = 6;

  explicit FreqWords(GeneratorRun& r) : run(r), alpha(r.config.args.at("alpha").get<double>()) { riemann_zeta(alpha); }

  std::string coded_word() {
    const std::vector<char> c = run.random.choices(kLowercase, coded_wordlen);
    return std::string(c.begin(), c.end());
  }

  std::pair<std::string, std::vector<std::string>> text(const std::vector<std::string>& vocab, int64_t num_words) const {
    std::vector<std::string> sampled;
    for (std::size_t k = 0; k < vocab.size(); ++k) {
      const double count = static_cast<double>(num_words) * std::pow(static_cast<double>(k + 1), -alpha) / riemann_zeta(alpha);
      for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) sampled.push_back(vocab[k]);
    }
    PythonRandom(static_cast<uint32_t>(run.request.random_seed)).shuffle(sampled);
    std::string context;
    for (std::size_t i = 0; i < sampled.size(); ++i) context += (i ? " " : "") + sampled[i];
    const std::vector<std::string> answer(vocab.begin() + std::min<std::size_t>(1, vocab.size()),
                                          vocab.begin() + std::min<std::size_t>(4, vocab.size()));
    return {python_format(run.template_text, {{"context", context}, {"query", ""}}), answer};
  }

  // generate_input_output: a new vocabulary, then the word count that fits max_len (grown from
  // max_len / 6 when num_words <= 0, else shrunk from num_words).
  struct Drawn {
    std::string text;
    std::vector<std::string> answer;
    int64_t num_words;
  };
  Drawn make(int64_t max_len, int64_t num_words, std::size_t vocab_size, int64_t incremental) {
    std::vector<std::string> vocab;
    for (std::size_t i = 0; i < vocab_size; ++i) vocab.push_back(coded_word());
    while (std::set<std::string>(vocab.begin(), vocab.end()).size() < vocab_size) vocab.push_back(coded_word());
    const std::set<std::string> unique(vocab.begin(), vocab.end());
    vocab.assign(unique.begin(), unique.end());
    PythonRandom(static_cast<uint32_t>(run.request.random_seed)).shuffle(vocab);
    if (vocab.empty()) throw std::invalid_argument("RULER fwe: max_seq_length leaves no vocabulary (max_seq_length // 50 words)");
    vocab[0] = "...";  // the top rank is noise
    auto made = text(vocab, num_words);
    if (num_words > 0) {
      while (run.count_tokens(made.first) > max_len) made = text(vocab, num_words -= incremental);
    } else {
      if (incremental <= 0) throw std::invalid_argument("RULER fwe: max_seq_length too small (the word step max_len // 32 is 0)");
      num_words = max_len / static_cast<int64_t>(coded_wordlen);
      made = text(vocab, num_words);
      while (run.count_tokens(made.first) < max_len) made = text(vocab, num_words += incremental);
      num_words -= incremental;
    }
    made = text(vocab, num_words);
    return {made.first, made.second, num_words};
  }
};

}  // namespace

std::vector<Sample> generate_freq_words(GeneratorRun& run) {
  FreqWords fwe(run);
  const int64_t max_len = run.request.max_seq_length - run.tokens_to_generate;
  if (max_len < 50) throw std::invalid_argument("RULER fwe: max_seq_length must leave at least 50 tokens besides tokens_to_generate");
  const auto vocab_size = static_cast<std::size_t>(max_len / 50);
  const int64_t incremental = max_len / 32;
  const int64_t num_words = fwe.make(max_len, -1, vocab_size, incremental).num_words;
  std::vector<Sample> samples;
  for (int64_t index = 0; index < run.request.num_samples; ++index) {
    const auto made = fwe.make(max_len, num_words, vocab_size, incremental);
    samples.push_back(finish_sample(run, index, made.text, made.answer, run.count_tokens(made.text) + run.tokens_to_generate));
  }
  return samples;
}

}  // namespace kvbench::datasets::ruler
