// RULER scripts/data/synthetic/niah.py: needles "One of the special magic {type_needle_v} for
// {key} is: {value}." in a haystack of repeated noise sentences, of other needles, or of the Paul
// Graham essays cut into sentences by NLTK's Punkt and the needles put at sampled depths.
#include <algorithm>
#include <cstdio>

#include "datasets/python_format.hpp"
#include "datasets/ruler/generator_run.hpp"
#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::datasets::ruler {
namespace {

const char* kNeedle = "One of the special magic {type_needle_v} for {key} is: {value}.";
const char* kNoise = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";

std::string join(const std::vector<std::string>& parts, const std::string& sep, std::size_t begin, std::size_t end) {
  std::string out;
  for (std::size_t i = begin; i < end; ++i) {
    if (i > begin) out += sep;
    out += parts[i];
  }
  return out;
}

// str(uuid.UUID(int=random.getrandbits(128), version=4))
std::string random_uuid(PythonRandom& random) {
  std::vector<uint32_t> w = random.getrandbits_words(128);  // least significant word first
  w[2] = (w[2] & ~0xF000U) | 0x4000U;                        // version 4: bits 76-79
  w[1] = (w[1] & ~0xC0000000U) | 0x80000000U;                // RFC 4122 variant: bits 62-63
  char hex[33];
  std::snprintf(hex, sizeof hex, "%08x%08x%08x%08x", w[3], w[2], w[1], w[0]);
  const std::string h(hex);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

struct Niah {
  GeneratorRun& run;
  std::string type_haystack, type_k, type_v;
  int64_t num_k, num_v, num_q;

  explicit Niah(GeneratorRun& r)
      : run(r),
        type_haystack(r.text_arg("type_haystack")),
        type_k(r.text_arg("type_needle_k")),
        type_v(r.text_arg("type_needle_v")),
        num_k(std::max(r.arg("num_needle_k"), r.arg("num_needle_q"))),
        num_v(r.arg("num_needle_v")),
        num_q(r.arg("num_needle_q")) {}

  std::string random_value(const std::string& type) {
    if (type == "numbers") return std::to_string(run.random.randint(1000000, 9999999));
    if (type == "words") {
      const AdjectiveNouns& words = run.data.adjective_nouns();
      return words.at(static_cast<std::size_t>(run.random.randbelow(words.size())));
    }
    if (type == "uuids") return random_uuid(run.random);
    throw std::invalid_argument("RULER niah: unknown needle type '" + type + "' (numbers, words, uuids)");
  }

  std::string needle(const std::string& key, const std::string& value) const {
    return python_format(kNeedle, {{"type_needle_v", type_v}, {"key", key}, {"value", value}});
  }

  // generate_input_output(num_haystack): the prompt and the answers.
  std::pair<std::string, std::vector<std::string>> make(int64_t num_haystack) {
    std::vector<std::string> keys, needles;
    std::vector<std::vector<std::string>> values;
    for (int64_t k = 0; k < num_k; ++k) {
      keys.push_back(random_value(type_k));
      std::vector<std::string> value;
      for (int64_t v = 0; v < num_v; ++v) {
        value.push_back(random_value(type_v));
        needles.push_back(needle(keys.back(), value.back()));
      }
      values.push_back(std::move(value));
    }
    PythonRandom(static_cast<uint32_t>(run.request.random_seed)).shuffle(needles);

    std::string context;
    const auto n = static_cast<std::size_t>(num_haystack);
    if (type_haystack == "essay") {
      const std::vector<std::string>& haystack = run.data.essay_words();
      std::string text;
      for (std::size_t i = 0; i < n; ++i) {  // repeated as often as needed, cut at num_haystack
        if (i) text += ' ';
        text += haystack[i % haystack.size()];
      }
      context = insert_at_depths(run.random, run.data.punkt().tokenize(metrics::python_strip(text)), needles);
    } else {
      std::vector<std::string> sentences;
      if (type_haystack == "noise") {
        sentences.assign(n, kNoise);
      } else if (type_haystack == "needle") {
        for (std::size_t i = 0; i < n; ++i) {
          const std::string key = random_value(type_k);
          sentences.push_back(needle(key, random_value(type_v)));
        }
      } else {
        throw std::invalid_argument("RULER niah: unknown type_haystack '" + type_haystack + "' (noise, essay, needle)");
      }
      std::vector<std::size_t> indexes = run.random.sample_indices(n, needles.size());
      std::sort(indexes.rbegin(), indexes.rend());
      for (std::size_t i = 0; i < indexes.size(); ++i)
        sentences.insert(sentences.begin() + static_cast<std::ptrdiff_t>(std::min(indexes[i], sentences.size())), needles[i]);
      context = join(sentences, "\n", 0, sentences.size());
    }

    std::vector<std::string> queries, answers;
    for (std::size_t i : run.random.sample_indices(static_cast<std::size_t>(num_k), static_cast<std::size_t>(num_q))) {
      queries.push_back(keys[i]);
      answers.insert(answers.end(), values[i].begin(), values[i].end());
    }
    std::string query = queries.back();
    if (queries.size() > 1) query = join(queries, ", ", 0, queries.size() - 1) + ", and " + queries.back();

    std::string tmpl = run.template_text;
    std::string type_needle_v = type_v;
    if (num_q * num_v == 1) {  // the singular wording
      for (const auto& [from, to] : {std::pair<const char*, const char*>{"Some", "A"}, {"are all", "is"}, {"are", "is"}, {"answers", "answer"}})
        tmpl = metrics::python_replace(tmpl, from, to);
      type_needle_v.pop_back();
    }
    return {python_format(tmpl, {{"type_needle_v", type_needle_v}, {"context", context}, {"query", query}}), answers};
  }
};

}  // namespace

std::vector<Sample> generate_niah(GeneratorRun& run) {
  Niah niah(run);
  const int64_t max_seq_length = run.request.max_seq_length;
  int64_t incremental = niah.type_haystack == "essay" ? 500 : 25;
  if (niah.type_haystack != "essay" && max_seq_length < 4096) incremental = 5;
  const int64_t num_haystack = search_haystack(run, incremental, max_seq_length, run.tokens_to_generate,
                                               [&](int64_t n) { return niah.make(n).first; });
  std::vector<Sample> samples = draw_samples(run, num_haystack, incremental, [&](int64_t, int64_t n) { return niah.make(n); });
  for (Sample& s : samples) {  // niah.py's record: "index" is where the first answer stands
    s.index = code_point_find(s.input, s.outputs.front());
    s.token_position_answer = run.count_tokens(code_point_prefix(s.input, s.index));
  }
  return samples;
}

}  // namespace kvbench::datasets::ruler
