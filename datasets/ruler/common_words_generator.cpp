// RULER scripts/data/synthetic/common_words_extraction.py: a numbered list where num_cw words
// repeat freq_cw times and the rest freq_ucw times (6 and 1 below 4096 tokens), after one solved
// example list.
#include <algorithm>
#include <cmath>
#include <set>

#include "datasets/python_format.hpp"
#include "datasets/ruler/generator_run.hpp"

namespace kvbench::datasets::ruler {
namespace {

// CPython's float floor division (float_floor_div), which is not always floor(a / b).
double python_floordiv(double vx, double wx) {
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0 && ((wx < 0) != (mod < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, vx / wx);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

struct CommonWords {
  GeneratorRun& run;
  int64_t freq_cw, freq_ucw, num_cw, num_fewshot = 1;
  std::vector<std::string> words;

  explicit CommonWords(GeneratorRun& r) : run(r), freq_cw(r.arg("freq_cw")), freq_ucw(r.arg("freq_ucw")), num_cw(r.arg("num_cw")) {
    std::set<std::string> unique;
    for (const char* list : {"nounlist.txt", "adjectivelist.txt", "verblist.txt"}) {
      const auto& w = run.data.word_list(list);
      unique.insert(w.begin(), w.end());
    }
    words.assign(unique.begin(), unique.end());
    PythonRandom(static_cast<uint32_t>(run.request.random_seed)).shuffle(words);
  }

  static std::string numbered(const std::vector<std::string>& list) {
    std::string out;
    for (std::size_t i = 0; i < list.size(); ++i) out += (i ? " " : "") + std::to_string(i + 1) + ". " + list[i];
    return out;
  }

  // get_example: the numbered list and its common words.
  std::pair<std::string, std::vector<std::string>> example(int64_t num_words, int64_t common_repeats, int64_t uncommon_repeats) {
    const auto n = static_cast<std::size_t>(num_words);
    const std::vector<std::string>& pool = n <= words.size() ? words : run.data.english_words();
    const std::vector<std::string> full = run.random.sample(pool, n);
    const auto split = std::min(full.size(), static_cast<std::size_t>(num_cw));
    const std::vector<std::string> common(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(split));
    std::vector<std::string> list;
    for (int64_t r = 0; r < common_repeats; ++r) list.insert(list.end(), common.begin(), common.end());
    for (int64_t r = 0; r < uncommon_repeats; ++r) list.insert(list.end(), full.begin() + static_cast<std::ptrdiff_t>(split), full.end());
    PythonRandom(static_cast<uint32_t>(run.request.random_seed)).shuffle(list);
    return {numbered(list), common};
  }

  std::pair<std::string, std::vector<std::string>> make(int64_t num_words) {
    std::vector<std::pair<std::string, std::vector<std::string>>> shots;
    std::pair<std::string, std::vector<std::string>> main;
    if (run.request.max_seq_length < 4096) {
      for (int64_t i = 0; i < num_fewshot; ++i) shots.push_back(example(20, 3, 1));
      main = example(num_words, 6, 1);
    } else {
      for (int64_t i = 0; i < num_fewshot; ++i) shots.push_back(example(40, 10, 3));
      main = example(num_words, freq_cw, freq_ucw);
    }
    auto fill = [&](const std::string& context) {
      return python_format(run.template_text, {{"num_cw", std::to_string(num_cw)}, {"context", context}, {"query", ""}});
    };
    std::string few;
    for (std::size_t i = 0; i < shots.size(); ++i) few += (i ? "\n" : "") + fill(shots[i].first) + " " + numbered(shots[i].second);
    return {few + "\n" + fill(main.first), main.second};
  }
};

}  // namespace

std::vector<Sample> generate_common_words(GeneratorRun& run) {
  CommonWords cwe(run);
  const int64_t max_seq_length = run.request.max_seq_length;
  const int64_t incremental = 10;
  const double tokens_per_word = static_cast<double>(run.count_tokens(cwe.make(4096).first)) / 4096.0;
  const auto estimated = static_cast<int64_t>(python_floordiv(static_cast<double>(max_seq_length), tokens_per_word)) * 2;
  const int64_t num_words = largest_fitting(incremental, std::max(estimated, incremental * 2), [&](int64_t mid) {
                              return run.count_tokens(cwe.make(mid).first) + run.tokens_to_generate <= max_seq_length;
                            }).value_or(incremental);
  return draw_samples(run, num_words, incremental, [&](int64_t, int64_t n) { return cwe.make(n); });
}

}  // namespace kvbench::datasets::ruler
