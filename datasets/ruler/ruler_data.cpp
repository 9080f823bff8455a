#include "datasets/ruler/ruler_data.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "datasets/data_error.hpp"
#include "datasets/json_parse.hpp"
#include "datasets/regular_file.hpp"
#include "datasets/text_reader.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::datasets::ruler {
namespace {

// Where the official files come from (RULER's README, "1. Download data").
const std::map<std::string, std::string>& official_sources() {
  static const std::map<std::string, std::string> s = {
      {"PaulGrahamEssays.json", "RULER scripts/data/synthetic/json/download_paulgraham_essay.py"},
      {"squad.json", "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v2.0.json (RULER download_qa_dataset.sh)"},
      {"hotpotqa.json",
       "http://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json (RULER download_qa_dataset.sh)"},
      {"english_words.json", "RULER scripts/data/synthetic/json/english_words.json (a Git LFS file of the repository)"},
      {"wonderwords/nounlist.txt", "the wonderwords package, wonderwords/assets/nounlist.txt"},
      {"wonderwords/adjectivelist.txt", "the wonderwords package, wonderwords/assets/adjectivelist.txt"},
      {"wonderwords/verblist.txt", "the wonderwords package, wonderwords/assets/verblist.txt"},
      {"punkt_english", "nltk_data tokenizers/punkt_tab/english/"},
  };
  return s;
}

// Python's text-mode readlines() (universal newlines) with each line rstripped.
std::vector<std::string> read_rstripped_lines(const std::string& path) {
  const std::u32string text = metrics::utf8_decode(read_text(path));
  std::vector<std::string> lines;
  std::u32string line;
  auto flush = [&] {
    std::size_t end = line.size();
    while (end > 0 && metrics::python_isspace(line[end - 1])) --end;
    lines.push_back(metrics::utf8_encode(line.substr(0, end)));
    line.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == U'\r' || c == U'\n') {
      if (c == U'\r' && i + 1 < text.size() && text[i + 1] == U'\n') ++i;
      flush();
    } else {
      line.push_back(c);
    }
  }
  if (!line.empty()) flush();
  return lines;
}

const std::string& string_at(const nlohmann::json& object, const char* key, const std::string& file, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_string())
    throw DataError(file, 1, where + ": field '" + key + "' is missing or not a string");
  return object.at(key).get_ref<const std::string&>();
}

const nlohmann::json& array_at(const nlohmann::json& object, const char* key, const std::string& file, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_array())
    throw DataError(file, 1, where + ": field '" + key + "' is missing or not a list");
  return object.at(key);
}

// Sorted unique documents and the index of each.
struct DocIndex {
  std::vector<std::string> docs;
  std::unordered_map<std::string, std::size_t> index;
  explicit DocIndex(std::set<std::string> unique) : docs(unique.begin(), unique.end()) {
    for (std::size_t i = 0; i < docs.size(); ++i) index.emplace(docs[i], i);
  }
};

// qa.py read_squad: answerable questions; context = its paragraph, more_context = the article's
// other paragraphs.
QaDataset read_squad(const std::string& file) {
  const nlohmann::json data = read_json_file(file);
  const nlohmann::json& articles = array_at(data, "data", file, "top level");
  std::set<std::string> unique;
  for (const auto& article : articles)
    for (const auto& p : array_at(article, "paragraphs", file, "an article")) unique.insert(string_at(p, "context", file, "a paragraph"));
  DocIndex docs(std::move(unique));
  QaDataset out;
  for (const auto& article : articles) {
    std::vector<std::size_t> more_docs;
    for (const auto& p : article.at("paragraphs")) more_docs.push_back(docs.index.at(p.at("context").get<std::string>()));
    for (const auto& p : article.at("paragraphs")) {
      const std::size_t own = docs.index.at(p.at("context").get<std::string>());
      for (const auto& qas : array_at(p, "qas", file, "a paragraph")) {
        if (!qas.contains("is_impossible") || !qas.at("is_impossible").is_boolean())
          throw DataError(file, 1, "a question: field 'is_impossible' is missing or not a boolean (SQuAD v2.0 expected)");
        if (qas.at("is_impossible").get<bool>()) continue;
        QaItem item;
        item.query = string_at(qas, "question", file, "a question");
        for (const auto& a : array_at(qas, "answers", file, "a question")) item.outputs.push_back(string_at(a, "text", file, "an answer"));
        item.context = {own};
        for (std::size_t idx : more_docs)
          if (idx != own) item.more_context.push_back(idx);
        out.questions.push_back(std::move(item));
      }
    }
  }
  out.docs = std::move(docs.docs);
  return out;
}

// qa.py read_hotpotqa: every question; its documents are "title\n" + the joined sentences.
QaDataset read_hotpotqa(const std::string& file) {
  const nlohmann::json data = read_json_file(file);
  if (!data.is_array()) throw DataError(file, 1, "expected a list of questions (hotpot_dev_distractor_v1.json)");
  auto doc_of = [&](const nlohmann::json& pair) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_array())
      throw DataError(file, 1, "a context entry is not [title, [sentences]]");
    std::string doc = pair[0].get<std::string>() + "\n";
    for (const auto& s : pair[1]) {
      if (!s.is_string()) throw DataError(file, 1, "a context sentence is not a string");
      doc += s.get<std::string>();
    }
    return doc;
  };
  std::set<std::string> unique;
  for (const auto& d : data)
    for (const auto& pair : array_at(d, "context", file, "a question")) unique.insert(doc_of(pair));
  DocIndex docs(std::move(unique));
  QaDataset out;
  for (const auto& d : data) {
    QaItem item;
    item.query = string_at(d, "question", file, "a question");
    item.outputs = {string_at(d, "answer", file, "a question")};
    for (const auto& pair : d.at("context")) item.context.push_back(docs.index.at(doc_of(pair)));
    out.questions.push_back(std::move(item));
  }
  out.docs = std::move(docs.docs);
  return out;
}

}  // namespace

AdjectiveNouns::AdjectiveNouns(const std::vector<std::string>& adjectives, const std::vector<std::string>& nouns) {
  const std::set<std::string> noun_set(nouns.begin(), nouns.end());
  nouns_.assign(noun_set.begin(), noun_set.end());
  std::vector<std::string> keys;  // "adj-", sorted: a key's extensions follow it
  for (const std::string& a : std::set<std::string>(adjectives.begin(), adjectives.end())) keys.push_back(a + "-");
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i + 1;
    while (j < keys.size() && keys[j].compare(0, keys[i].size(), keys[i]) == 0) ++j;
    Group g;
    g.first = size_;
    if (j == i + 1) {
      g.adjective = keys[i].substr(0, keys[i].size() - 1);
      size_ += nouns_.size();
    } else {
      std::set<std::string> words;
      for (std::size_t k = i; k < j; ++k)
        for (const std::string& n : nouns_) words.insert(keys[k] + n);
      g.combined.assign(words.begin(), words.end());
      size_ += g.combined.size();
    }
    groups_.push_back(std::move(g));
    i = j;
  }
}

std::string AdjectiveNouns::at(std::size_t i) const {
  if (i >= size_) throw std::out_of_range("AdjectiveNouns::at");
  const auto g = std::prev(std::upper_bound(groups_.begin(), groups_.end(), i, [](std::size_t v, const Group& x) { return v < x.first; }));
  const std::size_t offset = i - g->first;
  return g->combined.empty() ? g->adjective + "-" + nouns_[offset] : g->combined[offset];
}

RulerData::RulerData(std::vector<std::string> folders, std::map<std::string, std::string> overrides)
    : folders_(std::move(folders)), overrides_(std::move(overrides)) {
  if (folders_.empty()) throw std::invalid_argument("RulerData: no folder to read from");
}

std::string RulerData::path(const std::string& name) const {
  const auto o = overrides_.find(name);
  std::vector<std::string> candidates;
  if (o != overrides_.end())
    candidates = {o->second};
  else
    for (const std::string& f : folders_) candidates.push_back(f + "/" + name);
  for (const std::string& p : candidates)
    if (std::filesystem::exists(p)) return p;
  const auto s = official_sources().find(name);
  throw std::runtime_error(candidates.front() + ": RULER data file missing (official source: " +
                           (s == official_sources().end() ? std::string("RULER's repository") : s->second) +
                           "; point --data-root or KVBENCH_DATA at a folder holding ruler/" + name + ")");
}

const std::vector<std::string>& RulerData::essay_words() {
  if (!essay_words_) {
    const std::string file = path("PaulGrahamEssays.json");
    const nlohmann::json j = read_json_file(file);
    const std::u32string text = metrics::utf8_decode(string_at(j, "text", file, "top level"));
    auto words = std::make_unique<std::vector<std::string>>();
    std::u32string word;
    for (std::size_t i = 0; i < text.size();) {  // re.sub(r"\s+", " ", text).split(" ")
      if (metrics::python_isspace(text[i])) {
        words->push_back(metrics::utf8_encode(word));
        word.clear();
        while (i < text.size() && metrics::python_isspace(text[i])) ++i;
      } else {
        word.push_back(text[i++]);
      }
    }
    words->push_back(metrics::utf8_encode(word));
    essay_words_ = std::move(words);
  }
  return *essay_words_;
}

const PunktSentenceTokenizer& RulerData::punkt() {
  if (!punkt_) punkt_ = std::make_unique<PunktSentenceTokenizer>(PunktParameters::load(path("punkt_english")));
  return *punkt_;
}

const std::vector<std::string>& RulerData::word_list(const std::string& name) {
  auto it = word_lists_.find(name);
  if (it == word_lists_.end()) it = word_lists_.emplace(name, read_rstripped_lines(path("wonderwords/" + name))).first;
  return it->second;
}

const AdjectiveNouns& RulerData::adjective_nouns() {
  if (!adjective_nouns_)
    adjective_nouns_ = std::make_unique<AdjectiveNouns>(word_list("adjectivelist.txt"), word_list("nounlist.txt"));
  return *adjective_nouns_;
}

const QaDataset& RulerData::qa(const std::string& dataset) {
  auto it = qa_.find(dataset);
  if (it != qa_.end()) return it->second;
  if (dataset == "squad") return qa_.emplace(dataset, read_squad(path("squad.json"))).first->second;
  if (dataset == "hotpotqa") return qa_.emplace(dataset, read_hotpotqa(path("hotpotqa.json"))).first->second;
  throw std::invalid_argument("RULER qa: unknown dataset '" + dataset + "' (squad, hotpotqa)");
}

const std::vector<std::string>& RulerData::english_words() {
  if (!english_words_) {
    const std::string file = path("english_words.json");
    const std::string text = read_text(file);
    if (text.rfind("version https://git-lfs.github.com/spec/", 0) == 0)
      throw std::runtime_error(file + ": a Git LFS pointer, not the word list (run `git lfs pull` in RULER's repository)");
    parse_json(text, file);  // our checks (depth, duplicate keys), then the values in file order
    auto words = std::make_unique<std::vector<std::string>>();
    for (const auto& [key, value] : nlohmann::ordered_json::parse(text).items()) {
      if (!value.is_string()) throw DataError(file, 1, "the value of '" + key + "' is not a string");
      words->push_back(value.get<std::string>());
    }
    english_words_ = std::move(words);
  }
  return *english_words_;
}

}  // namespace kvbench::datasets::ruler
