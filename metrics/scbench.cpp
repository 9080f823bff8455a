#include "metrics/scbench.hpp"

#include <cctype>
#include <regex>
#include <stdexcept>

#include "metrics/bleu_nltk.hpp"
#include "metrics/infinitebench.hpp"
#include "metrics/longbench_metrics.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {
namespace {

using nlohmann::json;

const json& first_if_list(const json& label) { return label.is_array() && !label.empty() ? label[0] : label; }

// first_int_match: re.split("[^0-9]", prediction)'s first non-empty piece ("" when none).
std::string first_digits(const std::string& prediction) {
  size_t begin = prediction.find_first_of("0123456789");
  if (begin == std::string::npos) return "";
  return prediction.substr(begin, prediction.find_first_not_of("0123456789", begin) - begin);
}

double math_find(const std::string& prediction, const json& label_in) {
  const json& label = first_if_list(label_in);
  static const std::regex number(R"(\d+\.\d+|\d+)");
  std::smatch m;
  const bool found = std::regex_search(prediction, m, number);
  if (label.is_number_integer()) return found && static_cast<long long>(std::stod(m.str())) == label.get<long long>() ? 1 : 0;
  if (label.is_number_float()) return found && std::stod(m.str()) == label.get<double>() ? 1 : 0;
  throw std::invalid_argument("math_find: expected an int or float label, got " + std::string(label.type_name()));
}

double string_match_all(const std::string& prediction, const json& label) {
  const std::vector<std::string> refs = label_items(label, "scbench_vt");
  if (refs.empty()) throw std::invalid_argument("scbench_vt: an empty label (Python divides by zero)");
  const std::string pred = python_lower(prediction);
  double found = 0;
  for (const std::string& r : refs) found += pred.find(python_lower(r)) != std::string::npos ? 1 : 0;
  return python_round(found / static_cast<double>(refs.size()), 2);
}

}  // namespace

const std::vector<std::string>& scbench_scorers() {
  static const std::vector<std::string> names = {"kv_retrieval",       "scbench_vt",      "passkey",         "math_find",
                                                 "longdialogue_qa_eng", "longbook_choice_eng", "longbook_qa_chn", "longbook_sum_eng"};
  return names;
}

double scbench_score_one(const std::string& scorer, const std::string& prediction, const json& label) {
  if (scorer == "kv_retrieval") {
    if (!label.is_string()) throw std::invalid_argument("kv_retrieval: expected a string label");
    return prediction.find(label.get<std::string>()) != std::string::npos ? 1 : 0;
  }
  if (scorer == "scbench_vt") return string_match_all(prediction, label);
  if (scorer == "passkey") {
    const json& l = first_if_list(label);
    return l.is_string() && l.get<std::string>() == first_digits(prediction) ? 1 : 0;  // an int label never equals a str
  }
  if (scorer == "math_find") return math_find(prediction, label);
  if (scorer == "longdialogue_qa_eng") {
    const std::string pred = python_upper_simple(python_strip(prediction));
    for (const std::string& item : label_items(label, "longdialogue_qa_eng"))
      if (pred.find(python_upper_simple(item)) != std::string::npos) return 1;
    return 0;
  }
  if (scorer == "longbook_choice_eng" || scorer == "longbook_qa_chn" || scorer == "longbook_sum_eng")
    return infinitebench_score_one(scorer, prediction, label, "");
  throw std::invalid_argument("unknown SCBench scorer '" + scorer + "'");
}

namespace {

bool at_line_start(const std::string& s, size_t p) { return p == 0 || s[p - 1] == '\n'; }
bool is_word(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }  // \w (non-ASCII letters as words)
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

// re.findall(r"^```(?:\w+)?\s*\n(.*?)(?=^```)```", output.strip(), DOTALL | MULTILINE)[0]: a fence at a
// line start, an optional word, whitespace up to its last newline; the block runs to the next fence
// at a line start.
std::string repoqa_sanitize(const std::string& output) {
  const std::string s = python_strip(output);
  for (size_t p = s.find("```"); p != std::string::npos; p = s.find("```", p + 1)) {
    if (!at_line_start(s, p)) continue;
    size_t q = p + 3;
    while (q < s.size() && is_word(static_cast<unsigned char>(s[q]))) ++q;
    size_t w = q;
    while (w < s.size() && is_space(s[w])) ++w;
    const size_t newline = s.rfind('\n', w == 0 ? 0 : w - 1);
    if (w == q || newline == std::string::npos || newline < q) continue;  // \s*\n needs a newline right here
    for (size_t e = s.find("```", newline + 1); e != std::string::npos; e = s.find("```", e + 1))
      if (at_line_start(s, e)) return s.substr(newline + 1, e - newline - 1);
  }
  return s;
}

double repoqa_similarity(const std::string& candidate, const std::string& reference) {
  // re.split("\s+", x.strip()): the whitespace-separated tokens, [""] for an empty text.
  auto tokens = [](const std::string& x) {
    std::vector<std::string> t = python_split_ws(x);
    return t.empty() ? std::vector<std::string>{""} : t;
  };
  NltkBleuOptions options;
  options.smoothing = NltkSmoothing::Method4;
  return nltk_sentence_bleu({tokens(reference)}, tokens(candidate), options);
}

RepoqaVerdict repoqa_evaluate(const std::string& output, const std::string& gold_name, const std::vector<RepoqaNeedle>& needles,
                              double threshold) {
  const std::string answer = repoqa_sanitize(output);
  RepoqaVerdict v;
  for (const RepoqaNeedle& needle : needles) {
    const double similarity = repoqa_similarity(answer, needle.code);
    if (similarity > v.best_similarity) v.best_similarity = similarity, v.best_name = needle.name;
  }
  v.pass = !v.best_name.empty() && v.best_name == gold_name && v.best_similarity >= threshold;
  return v;
}

}  // namespace kvbench::metrics
