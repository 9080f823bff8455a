#include "tasks/summarization.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <utility>

#include "datasets/jsonl_reader.hpp"
#include "datasets/python_random.hpp"

namespace kvbench::tasks::summarization {

namespace {
bool is_python_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

// The code point at s[i] and its byte length (an invalid byte counts as one non-space unit).
std::pair<uint32_t, size_t> code_point(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return {0xFFFD, 1};
  uint32_t v = n == 1 ? c : c & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) >> 6) != 2) return {0xFFFD, 1};
    v = (v << 6) | (b(i + k) & 0x3F);
  }
  return {v, n};
}
}  // namespace

std::vector<std::string> python_split(const std::string& text) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  for (size_t i = 0; i < text.size();) {
    const auto [c, n] = code_point(text, i);
    if (is_python_space(c)) {
      if (in_word) words.push_back(std::move(current)), current.clear();
      in_word = false;
    } else {
      current.append(text, i, n);
      in_word = true;
    }
    i += n;
  }
  if (in_word) words.push_back(std::move(current));
  return words;
}

std::string helm_clean(const std::string& text, int64_t max_words) {
  // "\n" -> " " first is a no-op for split(), which treats "\n" as whitespace already.
  std::vector<std::string> words = python_split(text);
  if (max_words > 0 && static_cast<int64_t>(words.size()) > max_words) words.resize(static_cast<size_t>(max_words));
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i ? " " : "") + words[i];
  return out;
}

bool helm_xsum_filter(const std::string& article, const std::string& summary) {
  const double art_len = static_cast<double>(python_split(article).size());
  const double summ_len = static_cast<double>(python_split(summary).size());
  if (article.find("Media playback is unsupported on your device") != std::string::npos) return true;
  if (article.find("Last updated at") != std::string::npos) return true;
  if (summ_len <= 10) return true;
  return summ_len / art_len > 0.2;
}

std::vector<Document> helm_training_pool(const std::vector<Document>& train, const ShotPoolRule& rule) {
  std::vector<Document> pool;
  for (const Document& d : train) {
    Document c = d;
    c.article = helm_clean(d.article, rule.doc_max_words);
    c.summary = helm_clean(d.summary, 0);
    const int64_t words = static_cast<int64_t>(python_split(c.article).size());
    if (rule.max_words > 0 && words > rule.max_words) continue;
    if (rule.min_words > 0 && words < rule.min_words) continue;
    if (rule.xsum_filter && helm_xsum_filter(c.article, c.summary)) continue;
    pool.push_back(std::move(c));
  }
  return pool;
}

std::vector<size_t> helm_sample_examples(const std::vector<Document>& pool, size_t k, uint32_t seed) {
  datasets::PythonRandom random(seed);
  size_t remaining = std::min(pool.size(), k);
  // label -> instances (in pool order); std::map iterates in byte order = Python's code point order.
  std::map<std::string, std::vector<size_t>> by_label;
  for (size_t i = 0; i < pool.size(); ++i) by_label[pool[i].summary].push_back(i);
  std::map<size_t, std::vector<std::string>> by_count;
  for (const auto& [label, members] : by_label) by_count[members.size()].push_back(label);
  std::vector<std::string> order;
  for (auto it = by_count.rbegin(); it != by_count.rend(); ++it) {
    random.shuffle(it->second);
    order.insert(order.end(), it->second.begin(), it->second.end());
  }
  std::vector<size_t> picked;
  // cycle(order); an empty label ends the draw (Python's `if not next_label: break`).
  for (size_t at = 0; remaining > 0 && !order.empty(); at = (at + 1) % order.size()) {
    if (order[at].empty()) break;
    std::vector<size_t>& members = by_label[order[at]];
    if (members.empty()) continue;
    const size_t j = static_cast<size_t>(random.randbelow(members.size()));
    picked.push_back(members[j]);
    members.erase(members.begin() + static_cast<std::ptrdiff_t>(j));
    --remaining;
  }
  return picked;
}

std::string helm_instruction(int num_sentences) {
  return num_sentences == 1 ? "Summarize the above article in 1 sentence.\n"
                            : "Summarize the above article in " + std::to_string(num_sentences) + " sentences.\n";
}

std::string helm_block(const std::string& article, int num_sentences, bool keep_newline) {
  std::string instruction = helm_instruction(num_sentences);
  if (!keep_newline) instruction.pop_back();
  return "###\nArticle: " + article + "\n\n" + instruction;
}

std::string helm_prompt(const std::vector<const Document*>& shots, const Document& doc, int num_sentences,
                        bool keep_newline) {
  std::string p;
  for (const Document* s : shots) p += helm_block(s->article, num_sentences) + s->summary + "\n" + "\n";
  return p + helm_block(doc.article, num_sentences, keep_newline);
}

std::string buzz_prompt(const Document& doc) { return "Text: " + doc.article + "\n\nSUMMARIZE the previous text to 50 words!"; }

std::vector<Document> read_documents(const std::string& path, int num_sentences, int64_t limit) {
  std::vector<Document> docs;
  const std::string prefix = "###\nArticle: ", suffix = "\n\n" + helm_instruction(num_sentences);
  datasets::for_each_jsonl(path, [&](const datasets::JsonRecord& r) {
    Document d;
    d.line = r.line;
    if (r.has("summary_gt")) {  // H2O / HELM request file
      const std::string a = r.string_field("article");
      if (a.size() < prefix.size() + suffix.size() || a.compare(0, prefix.size(), prefix) != 0 ||
          a.compare(a.size() - suffix.size(), suffix.size(), suffix) != 0)
        throw r.field_error("article", "not in the HELM format '###\\nArticle: ...\\n\\n" +
                                           helm_instruction(num_sentences).substr(0, helm_instruction(num_sentences).size() - 1) + "\\n'");
      d.article = a.substr(prefix.size(), a.size() - prefix.size() - suffix.size());
      d.summary = r.string_field("summary_gt");
    } else if (r.has("highlights")) {  // HF cnn_dailymail
      d.article = r.string_field("article");
      d.summary = r.string_field("highlights");
    } else if (r.has("document")) {  // HF xsum
      d.article = r.string_field("document");
      d.summary = r.string_field("summary");
    } else {
      throw r.error("expected the fields article+summary_gt (H2O/HELM), article+highlights (CNN/DailyMail) or "
                    "document+summary (XSum)");
    }
    d.id = r.has("id") && r.value["id"].is_string() ? r.string_field("id") : "line-" + std::to_string(r.line);
    docs.push_back(std::move(d));
    return limit <= 0 || static_cast<int64_t>(docs.size()) < limit;
  });
  if (docs.empty()) throw std::runtime_error(path + ": no records (the file holds no JSON object)");
  return docs;
}

std::vector<size_t> pick_shots(size_t n, size_t index, size_t k, uint64_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);  // Fisher-Yates, portable
  std::vector<size_t> shots;
  for (size_t i : order) {
    if (shots.size() == k) break;
    if (i != index) shots.push_back(i);
  }
  return shots;
}

double rouge_geometric_mean(double r1, double r2, double rl) { return std::cbrt(r1 * r2 * rl); }

}  // namespace kvbench::tasks::summarization
