#pragma once
// What every RULER generator shares: the run's arguments, its one global random stream
// (random.seed(random_seed) at the script's start), and the scripts' common steps.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "datasets/python_random.hpp"
#include "datasets/ruler/ruler_config.hpp"
#include "datasets/ruler/ruler_generator.hpp"

namespace kvbench::datasets::ruler {

struct GeneratorRun {
  const Request& request;
  const TaskConfig& config;
  const TokenCounter& count_tokens;
  RulerData& data;
  std::string template_text;  // prepare.py's --template: model template + task template + answer prefix
  PythonRandom random;
  int tokens_to_generate;

  int64_t arg(const char* key) const;
  std::string text_arg(const char* key) const;
};

// The binary search every script runs over its haystack size: the largest size in
// [lower, upper] whose prompt fits, if any.
std::optional<int64_t> largest_fitting(int64_t lower, int64_t upper, const std::function<bool(int64_t)>& fits);

// The scripts' per-sample loop: try `size`; when the prompt does not fit (or drawing failed),
// shrink by `incremental` down to `incremental`, where the scripts retry forever with new draws;
// kvbench gives up after kMaxRetriesAtFloor tries there, naming the task and the length it had
// to fit (vt's in-context example fits 500 tokens, whatever the request's max_seq_length).
constexpr int kMaxRetriesAtFloor = 1000;
void fit_sample(const GeneratorRun& run, int64_t max_seq_length, int64_t size, int64_t incremental,
                const std::function<bool(int64_t)>& attempt);

// A prompt (the answer prefix still in it) and its answers.
using Made = std::pair<std::string, std::vector<std::string>>;

// niah.py, qa.py, variable_tracking.py: tokens per haystack unit from one draw of `incremental`
// units, 3x that as the upper bound, then the binary search for the largest haystack whose prompt
// plus `reserved` tokens fits max_seq_length (`incremental` when none does).
int64_t search_haystack(const GeneratorRun& run, int64_t incremental, int64_t max_seq_length, int64_t reserved,
                        const std::function<std::string(int64_t)>& prompt_of);

// One manifest record: --remove_newline_tab, then the answer prefix cut off (index = the sample's
// number; niah overwrites it).
Sample finish_sample(const GeneratorRun& run, int64_t index, const std::string& input, std::vector<std::string> outputs,
                     int64_t length);

// The samples of niah.py, cwe and qa.py: each the largest haystack from `size` down that fits
// (fit_sample), `make(index, size)` drawing it, finished as above.
std::vector<Sample> draw_samples(GeneratorRun& run, int64_t size, int64_t incremental,
                                 const std::function<Made(int64_t index, int64_t size)>& make);

// niah.py / variable_tracking.py's essay haystack: `items` put between the sentences at depths
// drawn from depths() (one random.sample), everything joined with spaces.
std::string insert_at_depths(PythonRandom& random, const std::vector<std::string>& sentences, const std::vector<std::string>& items);

// --remove_newline_tab: ' '.join(text.replace('\n', ' ').replace('\t', ' ').strip().split()).
std::string remove_newline_tab(const std::string& text);

// input_text.rfind(answer_prefix[:10]) and the split there: {input, answer_prefix} (Python's -1
// when absent: the last character becomes the "prefix").
std::pair<std::string, std::string> split_answer_prefix(const std::string& input, const std::string& answer_prefix);

// list(np.round(np.linspace(0, 100, num=40)).astype(int))
const std::vector<int>& depths();

// Python's text[:index] for index >= -1 counted in code points (-1: all but the last).
std::string code_point_prefix(const std::string& text, int64_t index);
// text.find(needle) in code points, -1 when absent.
int64_t code_point_find(const std::string& text, const std::string& needle);

std::vector<Sample> generate_niah(GeneratorRun& run);
std::vector<Sample> generate_variable_tracking(GeneratorRun& run);
std::vector<Sample> generate_common_words(GeneratorRun& run);
std::vector<Sample> generate_freq_words(GeneratorRun& run);
std::vector<Sample> generate_qa(GeneratorRun& run);

}  // namespace kvbench::datasets::ruler
