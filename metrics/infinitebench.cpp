#include "metrics/infinitebench.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "metrics/longbench_metrics.hpp"
#include "metrics/python_str.hpp"
#include "metrics/rouge_score.hpp"
#include "metrics/unicode.hpp"


namespace kvbench::metrics {
namespace {

using nlohmann::json;

std::string replace_each(std::string s, const std::vector<std::string>& chars, const std::string& with = " ") {
  for (const auto& c : chars) s = python_replace(s, c, with);
  return s;
}

// re.split("[^0-9]", s): the runs of ASCII digits.
std::vector<std::string> digit_runs(const std::string& s) {
  std::vector<std::string> runs;
  std::string cur;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      cur.push_back(c);
    } else if (!cur.empty()) {
      runs.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) runs.push_back(cur);
  return runs;
}

std::string first_int_match(const std::string& s) {
  const auto runs = digit_runs(s);
  return runs.empty() ? "" : runs.front();
}

// `label == value` with Python's cross-type rule: a string never equals a number.
bool equals_string(const json& label, const std::string& value) { return label.is_string() && label.get<std::string>() == value; }

bool in_words(const json& label, const std::vector<std::string>& words) {
  return label.is_string() && std::find(words.begin(), words.end(), label.get<std::string>()) != words.end();
}

// Python int(text) for one whitespace-free word: optional sign, ASCII digits, single underscores
// between digits. False when Python would raise.
bool python_int(const std::string& w, long long& out) {
  std::size_t i = 0;
  bool negative = false;
  if (i < w.size() && (w[i] == '+' || w[i] == '-')) negative = w[i++] == '-';
  std::string digits;
  bool last_digit = false;
  for (; i < w.size(); ++i) {
    if (w[i] >= '0' && w[i] <= '9') {
      digits.push_back(w[i]), last_digit = true;
    } else if (w[i] == '_' && last_digit && i + 1 < w.size()) {
      last_digit = false;
    } else {
      return false;
    }
  }
  if (digits.empty() || !last_digit) return false;
  try {
    out = std::stoll(digits);
  } catch (const std::exception&) {
    return false;
  }
  if (negative) out = -out;
  return true;
}

// re.search(r"\d+\.\d+|\d+", s) over ASCII digits.
std::string first_number(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') continue;
    std::size_t j = i;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    if (j + 1 < s.size() && s[j] == '.' && s[j + 1] >= '0' && s[j + 1] <= '9') {
      std::size_t k = j + 1;
      while (k < s.size() && s[k] >= '0' && s[k] <= '9') ++k;
      return s.substr(i, k - i);
    }
    return s.substr(i, j - i);
  }
  return "";
}

std::string collapse_double_spaces(std::string s) {
  while (s.find("  ") != std::string::npos) s = python_replace(s, "  ", " ");
  return s;
}

double kv_retrieval(const std::string& pred, const json& label) {
  return in_words(label, python_split_ws(replace_each(pred, {"\n", ":", "\"", "'", ".", ",", "?", "!", "{", "}"}))) ? 1 : 0;
}

double code_run(const std::string& pred_in, const json& label_in) {
  const json& label = first_if_list(label_in);
  const std::vector<std::string> words = python_split_ws(replace_each(python_strip(pred_in), {"\n", ".", "`", "'", "\"", ":"}));
  long long value = 0;
  if (words.empty() || !python_int(words.back(), value)) return 0;
  return label.is_number_integer() && label.get<long long>() == value ? 1 : 0;
}

double code_debug(const std::string& pred_in, const json& label) {
  if (!label.is_array() || label.size() < 2 || !label[0].is_string() || !label[1].is_string())
    throw std::invalid_argument("code_debug: the label is [function name, option letter]");
  const std::string label_c = label[1], fn_name = label[0];
  std::string pred = python_strip(pred_in);
  const std::string head = metrics::utf8_encode(metrics::utf8_decode(pred).substr(0, 2));
  if (head == label_c + "." || head == label_c + ":") return 1;
  pred = collapse_double_spaces(replace_each(python_strip(pred), {"\n", "`", "'", "\"", "-", "*", "Option", "option"}));
  for (const std::string prefix : {"answer is:", "is:", "answer:", "correct option is:"}) {
    const std::size_t idx = pred.find(prefix);
    if (idx == std::string::npos) continue;
    const std::u32string rest = utf8_decode(pred.substr(idx + prefix.size()));
    if (rest.empty()) return 0;  // the prediction ends with the prefix
    const std::string after = utf8_encode(rest.substr(1));
    for (const std::string& s : {label_c, fn_name})
      if (after.compare(0, s.size(), s) == 0) return 1;
    return 0;
  }
  return 0;
}

double math_find(const std::string& pred, const json& label_in) {
  const json& label = first_if_list(label_in);
  const std::string found = first_number(pred);
  if (label.is_number_integer()) {
    if (found.empty()) return 0;
    if (found.find('.') != std::string::npos)  // int("3.5") raises in the official code
      throw std::invalid_argument("math_find: int() of '" + found + "' raises in compute_scores.py");
    return std::stoll(found) == label.get<long long>() ? 1 : 0;
  }
  if (label.is_number_float()) return !found.empty() && std::stod(found) == label.get<double>() ? 1 : 0;
  throw std::invalid_argument("math_find: expected an int or float label, got " + std::string(label.type_name()));
}

double longdialogue_qa_eng(const std::string& pred, const json& label) {
  std::vector<std::string> words = python_split_ws(replace_each(python_strip(pred), {"\n", ":", "\"", "'", ".", ",", "?", "!", "{", "}"}));
  for (auto& w : words) w = python_upper_simple(w);
  return in_words(label.is_array() && !label.empty() ? label[0] : label, words) ? 1 : 0;
}

bool label_contains(const json& label, const std::string& s) {
  if (label.is_array()) return std::any_of(label.begin(), label.end(), [&](const json& x) { return x.is_string() && x.get<std::string>() == s; });
  if (label.is_string()) return label.get<std::string>().find(s) != std::string::npos;  // `in` on a str
  return false;
}

double longbook_choice_eng(const std::string& pred_in, const json& label) {
  std::string pred = python_strip(pred_in);
  if (pred.empty()) return 0;
  const std::u32string chars = utf8_decode(pred);
  if (chars[0] == U'A' || chars[0] == U'B' || chars[0] == U'C' || chars[0] == U'D') return label_contains(label, utf8_encode(chars.substr(0, 1))) ? 1 : 0;
  if (label_contains(label, pred)) return 1;
  pred = collapse_double_spaces(replace_each(pred, {"\n", "\"", "'", ".", ",", "?", "!", "{", "}"}));
  for (const std::string prefix : {"answer is:", "answer:", "answer is", "option is"}) {
    const std::size_t idx = pred.find(prefix);
    if (idx == std::string::npos) continue;
    const std::u32string rest = utf8_decode(pred.substr(idx + prefix.size()));
    if (rest.empty()) return 0;
    const std::string after = utf8_encode(rest.substr(1));
    if (label.is_array())
      for (const auto& s : label)
        if (s.is_string() && after.compare(0, s.get<std::string>().size(), s.get<std::string>()) == 0) return 1;
    return 0;
  }
  for (const std::string& word : python_split_ws(pred))
    if (std::string("ABCD").find(word) != std::string::npos) return label_contains(label, word) ? 1 : 0;  // `word in "ABCD"`: a substring
  return 0;
}

}  // namespace

const json& first_if_list(const json& label) { return label.is_array() && !label.empty() ? label[0] : label; }

std::vector<std::string> label_items(const json& label, const std::string& task) {
  std::vector<std::string> out;
  if (label.is_string()) {  // Python iterates a str's characters
    for (char32_t c : utf8_decode(label.get<std::string>())) out.push_back(utf8_encode(c));
    return out;
  }
  if (!label.is_array()) throw std::invalid_argument(task + ": the label is not a list of answers");
  for (const auto& x : label) {
    if (!x.is_string()) throw std::invalid_argument(task + ": an answer is not a string");
    out.push_back(x.get<std::string>());
  }
  return out;
}

namespace {

// InfiniteBench's normalize_zh_answer: lower, ASCII and CJK punctuation removed, all whitespace removed.
std::u32string normalize_zh(const std::string& s) {
  static const std::u32string punct = utf8_decode(
      "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
      "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏.");
  std::u32string out;
  for (char32_t c : python_lower(utf8_decode(s)))
    if (punct.find(c) == std::u32string::npos && !python_isspace(c)) out.push_back(c);
  return out;
}

double char_f1(const std::u32string& pred, const std::u32string& truth) {
  std::map<char32_t, int> a, b;
  for (char32_t c : pred) ++a[c];
  for (char32_t c : truth) ++b[c];
  int same = 0;
  for (const auto& [c, n] : a)
    if (b.count(c)) same += std::min(n, b[c]);
  if (same == 0) return 0;
  const double precision = 1.0 * same / static_cast<double>(pred.size()), recall = 1.0 * same / static_cast<double>(truth.size());
  return (2 * precision * recall) / (precision + recall);
}

double math_calc(const std::string& pred, const json& label_in, const std::string& model_name) {
  if (!label_in.is_array()) throw std::invalid_argument("math_calc: expected a list label");
  const json& label = !label_in.empty() && label_in[0].is_array() ? label_in[0] : label_in;
  std::vector<std::string> nums;  // int(item) of each digit run, as its decimal string (no size limit)
  for (std::string run : digit_runs(pred)) {
    run.erase(0, std::min(run.find_first_not_of('0'), run.size() - 1));
    nums.push_back(run);
  }
  if (model_name == "gpt4" && !nums.empty()) nums.erase(nums.begin());
  std::size_t count = 0;
  for (std::size_t i = 0; i < label.size() && i < nums.size(); ++i) {
    if (label[i].is_number_integer() && std::to_string(label[i].get<long long>()) == nums[i]) ++count;
    else break;
  }
  return static_cast<double>(count) / static_cast<double>(label.size());
}

// re.search(r"\b[A-D]\b(?!.*\b[A-D]\b)", pred): the first standalone letter A-D (Unicode word
// boundaries) with no other standalone one after it before the end of its line.
std::string last_standalone_choice(const std::string& pred) {
  const std::u32string c = utf8_decode(pred);
  auto standalone = [&](std::size_t i) {
    return c[i] >= U'A' && c[i] <= U'D' && (i == 0 || !python_re_word(c[i - 1])) && (i + 1 == c.size() || !python_re_word(c[i + 1]));
  };
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!standalone(i)) continue;
    bool later = false;
    for (std::size_t j = i + 1; j < c.size() && c[j] != U'\n' && !later; ++j) later = standalone(j);
    if (!later) return utf8_encode(c[i]);
  }
  return "";
}

}  // namespace

const std::vector<std::string>& infinitebench_tasks() {
  static const std::vector<std::string> t = {"passkey",         "number_string",       "kv_retrieval",       "longbook_sum_eng",
                                             "longbook_choice_eng", "longbook_qa_eng", "longbook_qa_chn",    "longdialogue_qa_eng",
                                             "math_find",       "math_calc",           "code_run",           "code_debug"};
  return t;
}

double infinitebench_score_one(const std::string& task, const std::string& pred, const json& label, const std::string& model_name) {
  if (task == "kv_retrieval" || task == "kv_retrieval_prefix" || task == "kv_retrieval_both") return kv_retrieval(pred, label);
  if (task == "passkey" || task == "number_string") return equals_string(first_if_list(label), first_int_match(pred)) ? 1 : 0;
  if (task == "code_run") return code_run(pred, label);
  if (task == "code_debug") return code_debug(pred, label);
  if (task == "math_find") return math_find(pred, label);
  if (task == "math_calc") return math_calc(pred, label, model_name);
  if (task == "longdialogue_qa_eng") return longdialogue_qa_eng(pred, label);
  if (task == "longbook_choice_eng") return longbook_choice_eng(pred, label);
  if (task == "longbook_qa_eng") {
    double best = 0;
    for (const std::string& truth : label_items(label, "longbook_qa_eng")) best = std::max(best, lb_qa_f1_score(pred, truth));
    return best;
  }
  if (task == "longbook_qa_chn") {
    double best = 0;
    for (const std::string& truth : label_items(label, "longbook_qa_chn")) best = std::max(best, char_f1(normalize_zh(pred), normalize_zh(truth)));
    return best;
  }
  if (task == "longbook_sum_eng") {
    static const RougeScorer scorer({"rougeLsum"}, /*use_stemmer=*/false);
    const std::string reference = label.is_array() && !label.empty() && label[0].is_string() ? label[0].get<std::string>()
                                  : label.is_string()                                        ? label.get<std::string>()
                                                                                             : "";
    return scorer.score(reference, pred).at("rougeLsum").fmeasure;
  }
  throw std::invalid_argument("unknown InfiniteBench task '" + task + "'");
}

bool infinitebench_kvpress_scores(const std::string& task) {
  static const std::vector<std::string> scored = {"passkey",         "number_string",   "kv_retrieval",       "longbook_choice_eng",
                                                  "longbook_qa_eng", "longbook_qa_chn", "longdialogue_qa_eng"};
  return std::find(scored.begin(), scored.end(), task) != scored.end();
}

double infinitebench_kvpress_score_one(const std::string& task, const std::string& pred, const json& label) {
  if (!infinitebench_kvpress_scores(task))
    throw std::invalid_argument("kvpress's calculate_metrics.py cannot score " + task +
                                " on its dataset's string labels (it raises, or compares a string with a number); use InfiniteBench's scorer");
  if (task == "longbook_choice_eng") {
    const std::string letter = last_standalone_choice(python_strip(pred));
    if (!letter.empty() && label_contains(label, letter)) return 1;
  }
  if (task == "longdialogue_qa_eng") {
    const std::string p = python_upper_simple(python_strip(pred));
    for (const std::string& item : label_items(label, "longdialogue_qa_eng"))
      if (p.find(python_upper_simple(item)) != std::string::npos) return 1;
    return 0;
  }
  if (task == "kv_retrieval") return kv_retrieval(pred, first_if_list(label));  // its `label = label[0]`
  return infinitebench_score_one(task, pred, label, "dummy_model");
}

}  // namespace kvbench::metrics
