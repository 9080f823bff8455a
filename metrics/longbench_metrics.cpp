#include "metrics/longbench_metrics.hpp"

#include <algorithm>
#include <stdexcept>

#include "metrics/qa.hpp"
#include "metrics/rouge_pltrdy.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {

namespace {

// re.findall(r"\d+", s) with Unicode \d.
std::vector<std::u32string> find_numbers(const std::u32string& s) {
  std::vector<std::u32string> out;
  std::u32string cur;
  for (char32_t c : s) {
    if (python_re_digit(c)) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

double share_equal(const std::string& prediction, const std::u32string& target) {
  auto numbers = find_numbers(utf8_decode(prediction));
  if (numbers.empty()) return 0.0;
  size_t right = static_cast<size_t>(std::count(numbers.begin(), numbers.end(), target));
  return static_cast<double>(right) / static_cast<double>(numbers.size());
}

std::vector<std::string> split_newlines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t nl = s.find('\n', start);
    out.push_back(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

std::string lstrip_newlines(const std::string& s) {
  size_t i = s.find_first_not_of('\n');
  return i == std::string::npos ? std::string() : s.substr(i);
}

}  // namespace

double lb_qa_f1_score(const std::string& prediction, const std::string& ground_truth) {
  return qa_token_f1(prediction, ground_truth);
}

double lb_rouge_score(const std::string& prediction, const std::string& ground_truth) {
  try {
    return pltrdy_rouge(prediction, ground_truth).rougel.f;
  } catch (const PltrdyError&) {
    return 0.0;
  }
}

double lb_classification_score(const std::string& prediction, const std::string& ground_truth,
                               const std::vector<std::string>& all_classes) {
  std::vector<std::string> em;
  for (const auto& c : all_classes) {
    if (prediction.find(c) != std::string::npos) em.push_back(c);
  }
  // `for match_term in em_match_list: ... em_match_list.remove(match_term)`: the list iterator
  // is an index that moves on after a removal, so the element after a removed one is skipped;
  // remove() drops the first element equal to the term.
  for (size_t idx = 0; idx < em.size(); ++idx) {
    std::string term = em[idx];
    if (ground_truth.find(term) != std::string::npos && term != ground_truth) {
      em.erase(std::find(em.begin(), em.end(), term));
    }
  }
  if (std::find(em.begin(), em.end(), ground_truth) != em.end()) {
    return 1.0 / static_cast<double>(em.size());
  }
  return 0.0;
}

double lb_retrieval_score(const std::string& prediction, const std::string& ground_truth) {
  // re.findall(r'Paragraph (\d+)', ground_truth)[0]
  std::u32string gt = utf8_decode(ground_truth);
  const std::u32string key = U"Paragraph ";
  for (size_t pos = gt.find(key); pos != std::u32string::npos; pos = gt.find(key, pos + 1)) {
    size_t k = pos + key.size();
    std::u32string id;
    while (k < gt.size() && python_re_digit(gt[k])) id.push_back(gt[k++]);
    if (!id.empty()) return share_equal(prediction, id);
  }
  throw std::invalid_argument("retrieval_score: no 'Paragraph <n>' in the ground truth (IndexError in the reference)");
}

double lb_count_score(const std::string& prediction, const std::string& ground_truth) {
  return share_equal(prediction, utf8_decode(ground_truth));
}

std::string lb_first_code_line(const std::string& prediction) {
  for (const auto& line : split_newlines(lstrip_newlines(prediction))) {
    if (line.find('`') == std::string::npos && line.find('#') == std::string::npos &&
        line.find("//") == std::string::npos) {
      return line;
    }
  }
  return "";
}

double lb_code_sim_score(const std::string& prediction, const std::string& ground_truth,
                         FuzzBackend backend) {
  return fuzz_ratio(lb_first_code_line(prediction), ground_truth, backend) / 100.0;
}

std::string lb_first_line(const std::string& prediction) {
  return split_newlines(lstrip_newlines(prediction)).front();
}

bool lb_uses_first_line_rule(const std::string& dataset) {
  return dataset == "trec" || dataset == "triviaqa" || dataset == "samsum" || dataset == "lsht";
}

std::string lb_metric_for_dataset(const std::string& dataset) {
  static const std::pair<const char*, const char*> table[] = {
      {"narrativeqa", "qa_f1_score"},     {"qasper", "qa_f1_score"},
      {"multifieldqa_en", "qa_f1_score"}, {"hotpotqa", "qa_f1_score"},
      {"2wikimqa", "qa_f1_score"},        {"musique", "qa_f1_score"},
      {"gov_report", "rouge_score"},      {"qmsum", "rouge_score"},
      {"multi_news", "rouge_score"},      {"trec", "classification_score"},
      {"triviaqa", "qa_f1_score"},        {"samsum", "rouge_score"},
      {"lsht", "classification_score"},   {"passage_retrieval_en", "retrieval_score"},
      {"passage_count", "count_score"},   {"lcc", "code_sim_score"},
      {"repobench-p", "code_sim_score"},
  };
  std::string base = dataset;
  if (base.size() > 2 && base.compare(base.size() - 2, 2, "_e") == 0) base.resize(base.size() - 2);
  for (const auto& [d, m] : table) {
    if (base == d) return m;
  }
  throw std::invalid_argument("LongBench: no English metric for dataset '" + dataset +
                              "' (Chinese jieba metrics are not implemented)");
}

double lb_metric(const std::string& metric, const std::string& prediction,
                 const std::string& ground_truth, const std::vector<std::string>& all_classes,
                 FuzzBackend backend) {
  if (metric == "qa_f1_score") return lb_qa_f1_score(prediction, ground_truth);
  if (metric == "rouge_score") return lb_rouge_score(prediction, ground_truth);
  if (metric == "classification_score") return lb_classification_score(prediction, ground_truth, all_classes);
  if (metric == "retrieval_score") return lb_retrieval_score(prediction, ground_truth);
  if (metric == "count_score") return lb_count_score(prediction, ground_truth);
  if (metric == "code_sim_score") return lb_code_sim_score(prediction, ground_truth, backend);
  throw std::invalid_argument("LongBench: unknown or unsupported metric '" + metric + "'");
}

}  // namespace kvbench::metrics
