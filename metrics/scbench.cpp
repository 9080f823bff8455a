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

// re.findall(r"^```(?:\w+)?\s*\n(.*?)(?=^```)```", output.strip(), DOTALL | MULTILINE)[0]: a fence at a
// line start, an optional word, whitespace up to its last newline; the block runs to the next fence
// at a line start. Over code points, with Python's Unicode \w and \s.
std::string repoqa_sanitize(const std::string& output) {
  const std::string stripped = python_strip(output);
  const std::u32string s = utf8_decode(stripped);
  const std::u32string fence = U"```";
  auto at_line_start = [&](size_t p) { return p == 0 || s[p - 1] == U'\n'; };
  for (size_t p = s.find(fence); p != std::u32string::npos; p = s.find(fence, p + 1)) {
    if (!at_line_start(p)) continue;
    size_t q = p + 3;
    while (q < s.size() && python_re_word(s[q])) ++q;
    size_t w = q;
    while (w < s.size() && python_isspace(s[w])) ++w;
    const size_t newline = s.rfind(U'\n', w == 0 ? 0 : w - 1);
    if (w == q || newline == std::u32string::npos || newline < q) continue;  // \s*\n needs a newline right here
    for (size_t e = s.find(fence, newline + 1); e != std::u32string::npos; e = s.find(fence, e + 1))
      if (at_line_start(e)) return utf8_encode(s.substr(newline + 1, e - newline - 1));
  }
  return stripped;
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
