#include "metrics/rouge_score.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "metrics/lcs_backtrack.hpp"
#include "metrics/lcs_length.hpp"
#include "metrics/porter_stemmer.hpp"
#include "metrics/scorer_limits.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {

double rouge_fmeasure(double precision, double recall) {
  if (precision + recall > 0) return 2 * precision * recall / (precision + recall);
  return 0.0;
}

std::vector<std::string> rouge_tokenize(const std::string& text, bool use_stemmer) {
  // After str.lower(), only ASCII [a-z0-9] survive; everything else separates.
  std::u32string lowered = python_lower(utf8_decode(text));
  std::vector<std::string> tokens;
  std::string cur;
  auto flush = [&]() {
    if (cur.empty()) return;
    std::string tok = (use_stemmer && cur.size() > 3) ? porter_stem(cur) : cur;
    // VALID_TOKEN_RE: ^[a-z0-9]+$ (the stemmer of an [a-z0-9] word stays in [a-z0-9]).
    bool valid = !tok.empty() && std::all_of(tok.begin(), tok.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    });
    if (valid) tokens.push_back(std::move(tok));
    cur.clear();
  };
  for (char32_t c : lowered) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      cur.push_back(static_cast<char>(c));
    } else {
      flush();
    }
  }
  flush();
  return tokens;
}

namespace {

using Ids = std::vector<int>;

struct Interner {
  std::unordered_map<std::string, int> ids;
  Ids map(const std::vector<std::string>& toks) {
    Ids out;
    out.reserve(toks.size());
    for (const auto& t : toks) out.push_back(ids.emplace(t, static_cast<int>(ids.size())).first->second);
    return out;
  }
};

// rouge_score's _backtrack_norec: indices into ref of one LCS (order irrelevant to callers).
std::vector<size_t> lcs_indices(const Ids& ref, const Ids& can) {
  return detail::lcs_backtrack(ref, can, detail::LcsTie::kGoogle).x_indices;
}

}  // namespace

RougeScore rouge_n(const std::vector<std::string>& target_tokens,
                   const std::vector<std::string>& prediction_tokens, int n) {
  if (n < 1) throw std::invalid_argument("rouge_n: n must be >= 1");
  // Tokens are interned to ids; an n-gram is the raw bytes of its n ids (a hashable key).
  Interner in;
  Ids t_ids = in.map(target_tokens), p_ids = in.map(prediction_tokens);
  auto ngrams = [n](const Ids& ids) {
    std::unordered_map<std::string, long long> counts;
    auto len = static_cast<size_t>(n);
    for (size_t i = 0; i + len <= ids.size(); ++i) {
      ++counts[std::string(reinterpret_cast<const char*>(ids.data() + i), len * sizeof(int))];
    }
    return counts;
  };
  auto t = ngrams(t_ids);
  auto p = ngrams(p_ids);
  long long hits = 0, tc = 0, pc = 0;
  for (const auto& [g, c] : t) {
    auto it = p.find(g);
    if (it != p.end()) hits += std::min(c, it->second);
    tc += c;
  }
  for (const auto& kv : p) pc += kv.second;
  RougeScore s;
  s.precision = static_cast<double>(hits) / static_cast<double>(std::max(pc, 1LL));
  s.recall = static_cast<double>(hits) / static_cast<double>(std::max(tc, 1LL));
  s.fmeasure = rouge_fmeasure(s.precision, s.recall);
  return s;
}

RougeScore rouge_l(const std::vector<std::string>& target_tokens,
                   const std::vector<std::string>& prediction_tokens) {
  if (target_tokens.empty() || prediction_tokens.empty()) return {};
  detail::require_lcs_length_within_bound("rouge_score rougeL", target_tokens.size(), prediction_tokens.size(), "tokens");
  Interner in;
  // Only the length is needed: the bit-parallel LCS gives the plain table's last cell.
  double lcs = static_cast<double>(detail::lcs_length(in.map(target_tokens), in.map(prediction_tokens)));
  RougeScore s;
  s.precision = lcs / static_cast<double>(prediction_tokens.size());
  s.recall = lcs / static_cast<double>(target_tokens.size());
  s.fmeasure = rouge_fmeasure(s.precision, s.recall);
  return s;
}

RougeScore rouge_lsum(const std::vector<std::vector<std::string>>& target_sentences,
                      const std::vector<std::vector<std::string>>& prediction_sentences) {
  if (target_sentences.empty() || prediction_sentences.empty()) return {};
  size_t m = 0, n = 0;
  for (const auto& s : target_sentences) m += s.size();
  for (const auto& s : prediction_sentences) n += s.size();
  if (m == 0 || n == 0) return {};
  // Every (target line, prediction line) table is backtracked: (m + lines) * (n + lines) cells.
  const uint64_t cells = detail::mul_saturating(m + target_sentences.size(), n + prediction_sentences.size());
  if (cells > kMaxLcsTableCells) {
    throw ScorerLimitError(scorer_limit_message(
        "rouge_score rougeLsum",
        std::to_string(m) + " tokens in " + std::to_string(target_sentences.size()) + " lines x " + std::to_string(n) +
            " tokens in " + std::to_string(prediction_sentences.size()) + " lines",
        cells, "LCS table cells", kMaxLcsTableCells));
  }
  Interner in;
  std::vector<Ids> refs, cans;
  for (const auto& s : target_sentences) refs.push_back(in.map(s));
  for (const auto& s : prediction_sentences) cans.push_back(in.map(s));
  std::vector<long long> cnt_r(in.ids.size(), 0), cnt_c(in.ids.size(), 0);
  for (const auto& s : refs) for (int t : s) ++cnt_r[static_cast<size_t>(t)];
  for (const auto& s : cans) for (int t : s) ++cnt_c[static_cast<size_t>(t)];
  long long hits = 0;
  for (const auto& r : refs) {
    std::set<size_t> uni;  // _find_union: sorted union of indices into r
    for (const auto& c : cans) {
      for (size_t idx : lcs_indices(r, c)) uni.insert(idx);
    }
    for (size_t idx : uni) {
      auto t = static_cast<size_t>(r[idx]);
      if (cnt_c[t] > 0 && cnt_r[t] > 0) {
        ++hits;
        --cnt_c[t];
        --cnt_r[t];
      }
    }
  }
  RougeScore s;
  s.recall = static_cast<double>(hits) / static_cast<double>(m);
  s.precision = static_cast<double>(hits) / static_cast<double>(n);
  s.fmeasure = rouge_fmeasure(s.precision, s.recall);
  return s;
}

namespace {

int rouge_n_order(const std::string& type) {
  // re.match(r"rouge[0-9]$")
  if (type.size() == 6 && type.compare(0, 5, "rouge") == 0 && type[5] >= '0' && type[5] <= '9') {
    return type[5] - '0';
  }
  return -1;
}

// get_sents with split_summaries=False: split on "\n", drop empty lines.
std::vector<std::string> summary_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty()) out.push_back(std::move(line));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

}  // namespace

RougeScorer::RougeScorer(std::vector<std::string> rouge_types, bool use_stemmer)
    : types_(std::move(rouge_types)), use_stemmer_(use_stemmer) {
  for (const auto& t : types_) {
    int n = rouge_n_order(t);
    if (t != "rougeL" && t != "rougeLsum" && n < 1) {
      // rouge0 would divide nothing meaningful; the reference would fail on it too.
      throw std::invalid_argument("RougeScorer: invalid rouge type '" + t + "'");
    }
  }
}

std::map<std::string, RougeScore> RougeScorer::score(const std::string& target,
                                                     const std::string& prediction) const {
  std::map<std::string, RougeScore> result;
  bool need_tokens = std::any_of(types_.begin(), types_.end(),
                                 [](const std::string& t) { return t != "rougeLsum"; });
  std::vector<std::string> tt, pt;
  if (need_tokens) {
    tt = rouge_tokenize(target, use_stemmer_);
    pt = rouge_tokenize(prediction, use_stemmer_);
  }
  for (const auto& type : types_) {
    if (type == "rougeL") {
      result[type] = rouge_l(tt, pt);
    } else if (type == "rougeLsum") {
      std::vector<std::vector<std::string>> ts, ps;
      for (const auto& s : summary_lines(target)) ts.push_back(rouge_tokenize(s, use_stemmer_));
      for (const auto& s : summary_lines(prediction)) ps.push_back(rouge_tokenize(s, use_stemmer_));
      result[type] = rouge_lsum(ts, ps);
    } else {
      result[type] = rouge_n(tt, pt, rouge_n_order(type));
    }
  }
  return result;
}

std::map<std::string, RougeScore> RougeScorer::score_multi(const std::vector<std::string>& targets,
                                                           const std::string& prediction) const {
  if (targets.empty()) throw std::invalid_argument("RougeScorer::score_multi: no targets");
  std::vector<std::map<std::string, RougeScore>> all;
  all.reserve(targets.size());
  for (const auto& t : targets) all.push_back(score(t, prediction));
  std::map<std::string, RougeScore> best;
  for (const auto& type : types_) {
    size_t arg = 0;
    for (size_t i = 1; i < all.size(); ++i) {
      // np.argmax: first maximum wins; a NaN cannot occur here.
      if (all[i].at(type).fmeasure > all[arg].at(type).fmeasure) arg = i;
    }
    best[type] = all[arg].at(type);
  }
  return best;
}

std::map<std::string, RougeScore> rouge_mean(
    const std::vector<std::map<std::string, RougeScore>>& scores) {
  std::map<std::string, RougeScore> sum;
  if (scores.empty()) return sum;
  for (const auto& m : scores) {
    for (const auto& [type, s] : m) {
      auto& acc = sum[type];
      acc.precision += s.precision;
      acc.recall += s.recall;
      acc.fmeasure += s.fmeasure;
    }
  }
  auto n = static_cast<double>(scores.size());
  for (auto& kv : sum) {
    kv.second.precision /= n;
    kv.second.recall /= n;
    kv.second.fmeasure /= n;
  }
  return sum;
}

}  // namespace kvbench::metrics
