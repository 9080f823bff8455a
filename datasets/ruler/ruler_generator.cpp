#include "datasets/ruler/ruler_generator.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "datasets/ruler/generator_run.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::datasets::ruler {
namespace {

// json.dumps(s, ensure_ascii=True) of one string.
void append_python_json_string(std::string& out, const std::string& s) {
  out.push_back('"');
  char buf[16];
  for (char32_t c : metrics::utf8_decode(s)) {
    switch (c) {
      case U'"': out += "\\\""; continue;
      case U'\\': out += "\\\\"; continue;
      case U'\n': out += "\\n"; continue;
      case U'\r': out += "\\r"; continue;
      case U'\t': out += "\\t"; continue;
      case U'\b': out += "\\b"; continue;
      case U'\f': out += "\\f"; continue;
      default: break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x10000) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {  // a surrogate pair
      const char32_t v = c - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)));
      out += buf;
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      out += buf;
    }
  }
  out.push_back('"');
}

}  // namespace

int64_t GeneratorRun::arg(const char* key) const {
  const nlohmann::json& v = config.args.at(key);
  return v.get<int64_t>();
}

std::string GeneratorRun::text_arg(const char* key) const { return config.args.at(key).get<std::string>(); }

std::optional<int64_t> largest_fitting(int64_t lower, int64_t upper, const std::function<bool(int64_t)>& fits) {
  std::optional<int64_t> best;
  while (lower <= upper) {
    const int64_t mid = (lower + upper) / 2;  // both positive: Python's // is C++'s /
    if (fits(mid)) {
      best = mid;
      lower = mid + 1;
    } else {
      upper = mid - 1;
    }
  }
  return best;
}

void fit_sample(const GeneratorRun& run, int64_t max_seq_length, int64_t size, int64_t incremental,
                const std::function<bool(int64_t)>& attempt) {
  int retries_at_floor = 0;
  std::string last_failure;
  for (;;) {
    try {
      if (attempt(size)) return;
      last_failure = "the prompt is longer than max_seq_length";
    } catch (const std::invalid_argument& e) {  // the scripts' bare `except:` retries failed draws too
      last_failure = e.what();
    }
    if (size > incremental) {
      size -= incremental;
    } else if (++retries_at_floor >= kMaxRetriesAtFloor) {
      throw std::invalid_argument("RULER " + run.config.name + ": no sample fits max_seq_length " +
                                  std::to_string(max_seq_length) + " even with the smallest haystack (" +
                                  std::to_string(size) + ") after " + std::to_string(kMaxRetriesAtFloor) +
                                  " draws (" + last_failure + "); RULER's script would retry forever");
    }
  }
}

int64_t search_haystack(const GeneratorRun& run, int64_t incremental, int64_t max_seq_length, int64_t reserved,
                        const std::function<std::string(int64_t)>& prompt_of) {
  const double per_unit = static_cast<double>(run.count_tokens(prompt_of(incremental))) / static_cast<double>(incremental);
  const auto estimated = static_cast<int64_t>((static_cast<double>(max_seq_length) / per_unit) * 3);
  return largest_fitting(incremental, std::max(estimated, incremental * 2), [&](int64_t mid) {
           return run.count_tokens(prompt_of(mid)) + reserved <= max_seq_length;
         }).value_or(incremental);
}

Sample finish_sample(const GeneratorRun& run, int64_t index, const std::string& input, std::vector<std::string> outputs,
                     int64_t length) {
  Sample s;
  s.index = index;
  std::tie(s.input, s.answer_prefix) = split_answer_prefix(run.request.remove_newline_tab ? remove_newline_tab(input) : input,
                                                           constants(run.config.generator).answer_prefix);
  s.outputs = std::move(outputs);
  s.length = length;
  s.length_w_model_temp = length;
  return s;
}

std::vector<Sample> draw_samples(GeneratorRun& run, int64_t size, int64_t incremental,
                                 const std::function<Made(int64_t index, int64_t size)>& make) {
  const int64_t max_seq_length = run.request.max_seq_length;
  std::vector<Sample> samples;
  for (int64_t index = 0; index < run.request.num_samples; ++index) {
    Made made;
    int64_t length = 0;
    fit_sample(run, max_seq_length, size, incremental, [&](int64_t used) {
      made = make(index, used);
      length = run.count_tokens(made.first) + run.tokens_to_generate;
      return length <= max_seq_length;
    });
    samples.push_back(finish_sample(run, index, made.first, std::move(made.second), length));
  }
  return samples;
}

std::string insert_at_depths(PythonRandom& random, const std::vector<std::string>& sentences, const std::vector<std::string>& items) {
  std::vector<std::size_t> positions;
  for (std::size_t d : random.sample_indices(depths().size(), items.size()))
    positions.push_back(static_cast<std::size_t>(static_cast<double>(sentences.size()) * (depths()[d] / 100.0)));
  std::sort(positions.begin(), positions.end());
  positions.insert(positions.begin(), 0);
  positions.push_back(sentences.size());
  std::string out;
  auto append = [&out, first = true](const std::string& part) mutable {
    out += (first ? "" : " ") + part;
    first = false;
  };
  for (std::size_t i = 1; i < positions.size(); ++i) {
    std::string between;
    for (std::size_t k = positions[i - 1]; k < positions[i]; ++k) between += (k > positions[i - 1] ? " " : "") + sentences[k];
    append(between);
    if (i - 1 < items.size()) append(items[i - 1]);
  }
  return out;
}

std::string remove_newline_tab(const std::string& text) { return metrics::python_collapse_ws(text); }

std::pair<std::string, std::string> split_answer_prefix(const std::string& input, const std::string& answer_prefix) {
  const std::u32string prefix = metrics::utf8_decode(answer_prefix).substr(0, 10);
  const std::size_t at = input.rfind(metrics::utf8_encode(prefix));
  if (at != std::string::npos) return {input.substr(0, at), input.substr(at)};
  const std::u32string all = metrics::utf8_decode(input);
  if (all.empty()) return {"", ""};
  return {metrics::utf8_encode(all.substr(0, all.size() - 1)), metrics::utf8_encode(all.substr(all.size() - 1))};
}

const std::vector<int>& depths() {
  static const std::vector<int> d = [] {
    std::vector<int> out;
    const double step = 100.0 / 39.0;  // np.linspace: arange(num) * (delta / div) + start, last = stop
    for (int i = 0; i < 40; ++i) out.push_back(static_cast<int>(std::nearbyint(i == 39 ? 100.0 : i * step)));
    return out;
  }();
  return d;
}

std::string code_point_prefix(const std::string& text, int64_t index) {
  const std::u32string all = metrics::utf8_decode(text);
  if (index < 0) return metrics::utf8_encode(all.substr(0, all.empty() ? 0 : all.size() - 1));
  return metrics::utf8_encode(all.substr(0, static_cast<std::size_t>(index)));
}

int64_t code_point_find(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return -1;
  return static_cast<int64_t>(metrics::utf8_decode(text.substr(0, at)).size());
}

std::vector<Sample> generate(const Request& request, const TokenCounter& count_tokens, RulerData& data) {
  const TaskConfig& config = task(request.task);
  if (request.max_seq_length < 1) throw std::invalid_argument("RULER: max_seq_length must be positive");
  if (request.tokens_to_generate && (*request.tokens_to_generate < 0 || *request.tokens_to_generate >= request.max_seq_length))
    throw std::invalid_argument("RULER: tokens_to_generate must be in [0, max_seq_length)");
  if (request.num_samples < 0) throw std::invalid_argument("RULER: num_samples must be >= 0");
  if (request.random_seed < 0 || request.random_seed > 0xFFFFFFFFLL)
    throw std::invalid_argument("RULER: random_seed must be in [0, 2**32) (NumPy's seed range)");
  GeneratorRun run{request,
                   config,
                   count_tokens,
                   data,
                   full_template(config, request.model_template_type),
                   PythonRandom(static_cast<uint32_t>(request.random_seed)),
                   static_cast<int>(request.tokens_to_generate.value_or(constants(config.generator).tokens_to_generate))};
  switch (config.generator) {
    case Generator::niah: return generate_niah(run);
    case Generator::variable_tracking: return generate_variable_tracking(run);
    case Generator::common_words_extraction: return generate_common_words(run);
    case Generator::freq_words_extraction: return generate_freq_words(run);
    case Generator::qa: return generate_qa(run);
  }
  throw std::logic_error("RULER: unhandled generator");
}

std::vector<std::string> data_file_names(const std::string& name) {
  const TaskConfig& config = task(name);
  const nlohmann::json& a = config.args;
  std::vector<std::string> files;
  auto essay = [&] {
    files.push_back("PaulGrahamEssays.json");
    for (const char* f : {"abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab"})
      files.push_back(std::string("punkt_english/") + f);
  };
  switch (config.generator) {
    case Generator::niah:
      if (a.at("type_haystack") == "essay") essay();
      if (a.at("type_needle_k") == "words" || a.at("type_needle_v") == "words")
        files.insert(files.end(), {"wonderwords/adjectivelist.txt", "wonderwords/nounlist.txt"});
      break;
    case Generator::variable_tracking:
      if (a.at("type_haystack") == "essay") essay();
      break;
    case Generator::common_words_extraction:
      files = {"wonderwords/nounlist.txt", "wonderwords/adjectivelist.txt", "wonderwords/verblist.txt"};
      break;
    case Generator::freq_words_extraction:
      break;
    case Generator::qa:
      files = {a.at("dataset").get<std::string>() + ".json"};
      break;
  }
  return files;
}

std::string manifest_line(const Sample& s) {
  std::string out = "{\"index\": " + std::to_string(s.index) + ", \"input\": ";
  append_python_json_string(out, s.input);
  out += ", \"outputs\": [";
  for (std::size_t i = 0; i < s.outputs.size(); ++i) {
    if (i) out += ", ";
    append_python_json_string(out, s.outputs[i]);
  }
  out += "], \"length\": " + std::to_string(s.length) + ", \"length_w_model_temp\": " + std::to_string(s.length_w_model_temp) +
         ", \"answer_prefix\": ";
  append_python_json_string(out, s.answer_prefix);
  if (s.token_position_answer) out += ", \"token_position_answer\": " + std::to_string(*s.token_position_answer);
  out += "}";
  return out;
}

}  // namespace kvbench::datasets::ruler
