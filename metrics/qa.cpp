#include "metrics/qa.hpp"

#include <algorithm>
#include <unordered_map>

#include "metrics/unicode.hpp"

namespace kvbench::metrics {

namespace {

bool is_ascii_punct(char32_t c) {  // string.punctuation
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// re.sub(r"\b(a|an|the)\b", " ", s) with Unicode \w.
std::u32string remove_articles(const std::u32string& s) {
  static const std::u32string alts[] = {U"a", U"an", U"the"};  // tried in this order
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    bool boundary_before = (i == 0) || !python_re_word(s[i - 1]);
    size_t matched = 0;
    if (boundary_before) {
      for (const auto& a : alts) {
        size_t end = i + a.size();
        if (end <= s.size() && s.compare(i, a.size(), a) == 0 &&
            (end == s.size() || !python_re_word(s[end]))) {
          matched = a.size();
          break;
        }
      }
    }
    if (matched) {
      out.push_back(U' ');
      i += matched;
    } else {
      out.push_back(s[i]);
      ++i;
    }
  }
  return out;
}

std::vector<std::string> tokens(const std::string& s) { return python_split_ws(normalize_answer(s)); }

}  // namespace

std::string normalize_answer(const std::string& s) {
  std::u32string lowered = python_lower(utf8_decode(s));
  std::u32string no_punc;
  no_punc.reserve(lowered.size());
  for (char32_t c : lowered) {
    if (!is_ascii_punct(c)) no_punc.push_back(c);
  }
  return python_collapse_ws(utf8_encode(remove_articles(no_punc)));
}

double exact_match_score(const std::string& prediction, const std::string& ground_truth) {
  return normalize_answer(prediction) == normalize_answer(ground_truth) ? 1.0 : 0.0;
}

double qa_token_f1(const std::string& prediction, const std::string& ground_truth) {
  auto p = tokens(prediction);
  auto g = tokens(ground_truth);
  std::unordered_map<std::string, long long> cp, cg;
  for (const auto& t : p) ++cp[t];
  for (const auto& t : g) ++cg[t];
  long long same = 0;
  for (const auto& [t, c] : cp) {
    auto it = cg.find(t);
    if (it != cg.end()) same += std::min(c, it->second);
  }
  if (same == 0) return 0.0;
  double precision = 1.0 * static_cast<double>(same) / static_cast<double>(p.size());
  double recall = 1.0 * static_cast<double>(same) / static_cast<double>(g.size());
  return (2 * precision * recall) / (precision + recall);
}

double exact_match(const std::string& prediction, const std::vector<std::string>& ground_truths) {
  double best = 0.0;
  for (const auto& g : ground_truths) best = std::max(best, exact_match_score(prediction, g));
  return best;
}

double token_f1(const std::string& prediction, const std::vector<std::string>& ground_truths) {
  double best = 0.0;
  for (const auto& g : ground_truths) best = std::max(best, qa_token_f1(prediction, g));
  return best;
}

double best_subspan_em(const std::string& prediction,
                       const std::vector<std::string>& ground_truths) {
  std::string pred = python_lower(normalize_answer(prediction));
  for (const auto& g : ground_truths) {
    if (pred.find(python_lower(normalize_answer(g))) != std::string::npos) return 1.0;
  }
  return 0.0;
}

double strict_em(const std::string& prediction, const std::vector<std::string>& ground_truths) {
  return exact_match(prediction, ground_truths);
}

}  // namespace kvbench::metrics
