// RULER scripts/data/synthetic/variable_tracking.py: chains "VAR X = 12345", "VAR Y = VAR X " hidden
// in noise sentences (or essay sentences), preceded by one in-context example the script generates
// first (a 500-token prompt, 3-letter names, value 12345) and re-letters for every sample.
#include <algorithm>
#include <optional>
#include <queue>
#include <set>
#include <tuple>

#include "datasets/python_format.hpp"
#include "datasets/ruler/generator_run.hpp"
#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::datasets::ruler {
namespace {

const char* kNoise = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
const std::vector<char> kUppercase = [] {
  std::vector<char> v;
  for (char c = 'A'; c <= 'Z'; ++c) v.push_back(c);
  return v;
}();

struct Chains {
  std::vector<std::vector<std::string>> vars;
  std::vector<std::vector<std::string>> chains;
};

struct VariableTracking {
  GeneratorRun& run;
  NumpyRandomState numpy;
  std::string type_haystack;
  int64_t num_chains, num_hops;

  explicit VariableTracking(GeneratorRun& r)
      : run(r),
        numpy(static_cast<uint32_t>(r.request.random_seed)),
        type_haystack(r.text_arg("type_haystack")),
        num_chains(r.arg("num_chains")),
        num_hops(r.arg("num_hops")) {}

  std::string random_name(std::size_t letters) {
    const std::vector<char> c = run.random.choices(kUppercase, letters);
    return std::string(c.begin(), c.end());
  }

  Chains generate_chains(bool is_icl) {
    const std::size_t k = is_icl ? 3 : 5;
    const int64_t hops = is_icl ? std::min<int64_t>(10, num_hops) : num_hops;
    const auto needed = static_cast<std::size_t>((hops + 1) * num_chains);
    std::vector<std::string> all;
    for (std::size_t i = 0; i < needed; ++i) all.push_back(random_name(k));
    while (std::set<std::string>(all.begin(), all.end()).size() < needed) all.push_back(random_name(k));
    Chains out;
    for (std::size_t i = 0; i < all.size(); i += static_cast<std::size_t>(hops + 1)) {
      std::vector<std::string> these(all.begin() + static_cast<std::ptrdiff_t>(i),
                                     all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + static_cast<std::size_t>(hops + 1))));
      std::vector<std::string> chain = {"VAR " + these[0] + " = " + (is_icl ? std::string("12345") : std::to_string(numpy.randint(10000, 99999)))};
      for (int64_t j = 0; j < hops; ++j) {
        if (static_cast<std::size_t>(j + 1) >= these.size())  // the script's IndexError on a short extra chain
          throw std::invalid_argument("RULER vt: a repeated variable name left a chain short");
        chain.push_back("VAR " + these[static_cast<std::size_t>(j + 1)] + " = VAR " + these[static_cast<std::size_t>(j)] + " ");
      }
      out.vars.push_back(std::move(these));
      out.chains.push_back(std::move(chain));
    }
    return out;
  }

  // shuffle_sublists_heap: a random interleaving that keeps each chain's order.
  std::vector<std::string> interleave(const std::vector<std::vector<std::string>>& lists) {
    using Entry = std::tuple<double, std::size_t, std::size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    for (std::size_t i = 0; i < lists.size(); ++i) heap.emplace(run.random.random(), i, 0);
    std::vector<std::string> out;
    while (!heap.empty()) {
      const auto [priority, list, element] = heap.top();
      heap.pop();
      out.push_back(lists[list][element]);
      if (element + 1 < lists[list].size()) heap.emplace(run.random.random(), list, element + 1);
    }
    return out;
  }

  std::pair<std::string, std::vector<std::string>> make(int64_t num_noises, bool is_icl) {
    Chains c = generate_chains(is_icl);
    const std::string& first = c.chains[0][0];
    const std::string value = metrics::python_strip(first.substr(first.rfind('=') + 1));
    const auto n = static_cast<std::size_t>(num_noises);
    std::string context;
    if (type_haystack == "essay") {
      const std::vector<std::string>& haystack = run.data.essay_words();
      std::string text;
      for (std::size_t i = 0; i < std::min(n, haystack.size()); ++i) text += (i ? " " : "") + haystack[i];
      const std::vector<std::string> sents = run.data.punkt().tokenize(metrics::python_strip(text));
      const std::vector<std::string> flat = interleave(c.chains);
      std::vector<std::string> items;
      for (const std::string& link : flat) items.push_back(metrics::python_strip(link) + ".");
      context = insert_at_depths(run.random, sents, items);
    } else if (type_haystack == "noise") {
      std::vector<std::string> sentences(n, kNoise);
      for (const auto& chain : c.chains) {
        std::vector<std::size_t> positions = run.random.sample_indices(sentences.size(), chain.size());
        std::sort(positions.begin(), positions.end());
        for (std::size_t j = 0; j < chain.size(); ++j)
          sentences.insert(sentences.begin() + static_cast<std::ptrdiff_t>(std::min(positions[j] + j, sentences.size())), chain[j]);
      }
      for (std::size_t i = 0; i < sentences.size(); ++i) context += (i ? "\n" : "") + sentences[i];
    } else {
      throw std::invalid_argument("RULER vt: unknown type_haystack '" + type_haystack + "' (noise, essay)");
    }
    context = metrics::python_replace(context, ". \n", ".\n");
    const GeneratorConstants& k = constants(Generator::variable_tracking);
    const std::string tmpl = is_icl ? std::string(k.template_text) + k.answer_prefix : run.template_text;  // the example: no model template
    return {python_format(tmpl, {{"context", context}, {"query", value}, {"num_v", std::to_string(num_hops + 1)}}), c.vars[0]};
  }

  // randomize_icl: new letters for the example's answer names (every occurrence), a new value.
  std::string randomize_icl(std::string example) {
    const std::vector<std::string> words = metrics::python_split_ws(metrics::python_strip(example));
    const std::size_t take = std::min(words.size(), static_cast<std::size_t>(num_hops + 1));
    for (std::size_t i = words.size() - take; i < words.size(); ++i)
      example = metrics::python_replace(example, words[i], random_name(metrics::utf8_decode(words[i]).size()));
    return metrics::python_replace(example, "12345", std::to_string(numpy.randint(10000, 99999)));
  }

  // sys_vartrack_w_noise_random: the in-context example's run (no example yet), or the samples
  // after `example` (the example's input, its answer and a newline).
  std::vector<Sample> samples(int64_t num_samples, int64_t max_seq_length, const std::optional<std::string>& example) {
    const bool is_icl = !example;  // add_fewshot is always True
    const int64_t tokens_to_generate = is_icl ? 0 : run.tokens_to_generate;
    int64_t incremental;
    if (!is_icl) {
      incremental = type_haystack == "essay" ? 500 : 10;
      if (type_haystack != "essay" && run.request.max_seq_length < 4096) incremental = 5;
    } else {
      incremental = type_haystack == "essay" ? 50 : 5;
    }
    const int64_t example_tokens = example ? run.count_tokens(*example) : 0;
    const int64_t num_noises = search_haystack(run, incremental, max_seq_length, example_tokens + tokens_to_generate,
                                               [&](int64_t n) { return make(n, is_icl).first; });

    const std::string cut_at = std::string(constants(Generator::variable_tracking).template_text).substr(0, 20);
    std::vector<Sample> out;
    for (int64_t index = 0; index < num_samples; ++index) {
      std::string input;
      std::vector<std::string> answer;
      int64_t length = 0;
      fit_sample(run, max_seq_length, num_noises, incremental, [&](int64_t used) {
        std::tie(input, answer) = make(used, is_icl);
        if (!is_icl) {
          const std::size_t cutoff = input.find(cut_at);
          if (cutoff == std::string::npos) throw std::invalid_argument("RULER vt: the template lost its first words");
          input = input.substr(0, cutoff) + randomize_icl(*example) + "\n" + input.substr(cutoff);
        }
        if (run.request.remove_newline_tab) input = remove_newline_tab(input);
        length = run.count_tokens(input) + tokens_to_generate;
        return length <= max_seq_length;
      });
      Sample s;
      s.index = index;
      s.outputs = answer;
      s.length = length;
      s.length_w_model_temp = length;
      if (is_icl)
        s.input = input;
      else
        std::tie(s.input, s.answer_prefix) = split_answer_prefix(input, constants(Generator::variable_tracking).answer_prefix);
      out.push_back(std::move(s));
    }
    return out;
  }
};

}  // namespace

std::vector<Sample> generate_variable_tracking(GeneratorRun& run) {
  VariableTracking vt(run);
  const Sample icl = vt.samples(1, 500, std::nullopt).front();
  std::string answer;
  for (std::size_t i = 0; i < icl.outputs.size(); ++i) answer += (i ? " " : "") + icl.outputs[i];
  return vt.samples(run.request.num_samples, run.request.max_seq_length, icl.input + " " + answer + "\n");
}

}  // namespace kvbench::datasets::ruler
