#include "metrics/wordnet.hpp"

#include <algorithm>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <stdexcept>
#include <utility>

#include "base/string_affixes.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {
namespace {

const char* const kFileSuffix[4] = {"noun", "verb", "adj", "adv"};

// nltk's WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS, in order.
using Rules = std::vector<std::pair<std::string, std::string>>;
const Rules& substitutions(int slot) {
  static const Rules noun = {{"s", ""},     {"ses", "s"},   {"ves", "f"},   {"xes", "x"},  {"zes", "z"},
                             {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}};
  static const Rules verb = {{"s", ""},  {"ies", "y"}, {"es", "e"},  {"es", ""},
                             {"ed", "e"}, {"ed", ""},   {"ing", "e"}, {"ing", ""}};
  static const Rules adj = {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}};
  static const Rules adv = {};
  static const Rules* all[4] = {&noun, &verb, &adj, &adv};
  return *all[slot];
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("WordNet: cannot open " + path +
                             " (install Debian's wordnet-base, or set KVBENCH_WORDNET_DIR to a WordNet 3.0 dict folder)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Python str.split() on a line of the (ASCII) database files, as views into it.
void split_ws(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = std::string_view::npos;
  for (size_t i = 0; i <= line.size(); ++i) {
    const bool space = i == line.size() || (static_cast<unsigned char>(line[i]) < 0x80 &&
                                            python_isspace(static_cast<unsigned char>(line[i])));
    if (space && start != std::string_view::npos) {
      out.push_back(line.substr(start, i - start));
      start = std::string_view::npos;
    } else if (!space && start == std::string_view::npos) {
      start = i;
    }
  }
}

using base::ends_with;

// Python int(token) for the non-negative decimal tokens of the index files.
uint32_t parse_uint(std::string_view token, int base, const std::string& where) {
  uint64_t v = 0;
  bool ok = !token.empty() && token.size() <= 10;
  for (char c : token) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) ok = false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d < 0 ? 0 : d);
  }
  if (!ok || v > 0xFFFFFFFFull)
    throw std::runtime_error("WordNet: " + where + ": bad number '" + std::string(token) + "'");
  return static_cast<uint32_t>(v);
}

// Lemma name with nltk's syntactic-marker cut: (.*?)(\(.*\))?$.
std::string strip_marker(const std::string& name) {
  if (name.size() >= 2 && name.back() == ')') {
    const size_t k = name.find('(');
    if (k != std::string::npos && k < name.size() - 1) return name.substr(0, k);
  }
  return name;
}

}  // namespace

int WordNet::pos_slot(char pos) {
  switch (pos) {
    case 'n': return 0;
    case 'v': return 1;
    case 'a': return 2;
    case 's': return 2;  // adjective satellites share the adjective files and index entries
    case 'r': return 3;
    default: throw std::invalid_argument(std::string("WordNet: unknown part of speech '") + pos + "'");
  }
}

WordNet::WordNet(const std::string& dict_dir) : dir_(dict_dir) {
  for (size_t slot = 0; slot < 4; ++slot) {
    const std::string index_path = dir_ + "/index." + kFileSuffix[slot];
    index_text_[slot] = read_file(index_path);
    const std::string_view text = index_text_[slot];
    std::vector<std::string_view> t;
    size_t lineno = 0;
    for (size_t start = 0; start < text.size();) {
      size_t eol = text.find('\n', start);
      if (eol == std::string_view::npos) eol = text.size();
      const std::string_view line = text.substr(start, eol - start);
      start = eol + 1;
      ++lineno;
      if (!line.empty() && line[0] == ' ') continue;  // licence header
      split_ws(line, t);
      if (t.empty()) continue;
      const std::string where = index_path + ":" + std::to_string(lineno);
      if (t.size() < 4) throw std::runtime_error("WordNet: " + where + ": too few fields");
      const uint32_t n_synsets = parse_uint(t[2], 10, where);
      const uint32_t n_pointers = parse_uint(t[3], 10, where);
      const size_t senses_at = 4 + static_cast<size_t>(n_pointers);
      if (n_synsets == 0 || t.size() < senses_at + 2 + n_synsets)
        throw std::runtime_error("WordNet: " + where + ": malformed index line");
      if (parse_uint(t[senses_at], 10, where) != n_synsets)
        throw std::runtime_error("WordNet: " + where + ": sense count differs from synset count");
      if (t[1].size() != 1 || static_cast<size_t>(pos_slot(t[1][0])) != slot)
        throw std::runtime_error("WordNet: " + where + ": part of speech '" + std::string(t[1]) + "'");
      const auto first = static_cast<uint32_t>(offsets_[slot].size());
      for (uint32_t k = 0; k < n_synsets; ++k) offsets_[slot].push_back(parse_uint(t[senses_at + 2 + k], 10, where));
      entries_[slot].push_back({t[0], first, n_synsets});
    }
    std::stable_sort(entries_[slot].begin(), entries_[slot].end(),
                     [](const IndexEntry& a, const IndexEntry& b) { return a.lemma < b.lemma; });

    const std::string exc_path = dir_ + "/" + kFileSuffix[slot] + ".exc";
    const std::string exc_text = read_file(exc_path);
    lineno = 0;
    for (size_t start = 0; start < exc_text.size();) {
      size_t eol = exc_text.find('\n', start);
      if (eol == std::string::npos) eol = exc_text.size();
      split_ws(std::string_view(exc_text).substr(start, eol - start), t);
      start = eol + 1;
      ++lineno;
      if (t.empty()) throw std::runtime_error("WordNet: " + exc_path + ":" + std::to_string(lineno) + ": empty line");
      exceptions_[slot][std::string(t[0])] = std::vector<std::string>(t.begin() + 1, t.end());
    }
    data_[slot] = read_file(dir_ + "/data." + kFileSuffix[slot]);
  }
}

std::string WordNet::default_dir() {
  const char* env = std::getenv("KVBENCH_WORDNET_DIR");
  return env && *env ? env : "/usr/share/wordnet";
}

const WordNet& WordNet::instance() {
  static const WordNet wn(default_dir());
  return wn;
}

std::pair<const uint32_t*, size_t> WordNet::offsets(std::string_view lemma, char pos) const {
  const auto slot = static_cast<size_t>(pos_slot(pos));
  const auto& entries = entries_[slot];
  auto it = std::upper_bound(entries.begin(), entries.end(), lemma,
                             [](std::string_view l, const IndexEntry& e) { return l < e.lemma; });
  if (it == entries.begin() || std::prev(it)->lemma != lemma) return {nullptr, 0};
  const IndexEntry& e = *std::prev(it);  // the last of equal lemmas
  return {offsets_[slot].data() + e.first, e.count};
}

bool WordNet::in_index(const std::string& lemma, char pos) const { return offsets(lemma, pos).first != nullptr; }

std::vector<std::string> WordNet::morphy(const std::string& form, char pos) const {
  const int slot = pos_slot(pos);
  const Rules& rules = substitutions(slot);

  // The in-database forms, in order, without repeats.
  auto filter_forms = [&](const std::vector<std::string>& forms) {
    std::vector<std::string> result;
    std::unordered_set<std::string> seen;
    for (const auto& f : forms) {
      if (in_index(f, pos) && seen.insert(f).second) result.push_back(f);
    }
    return result;
  };
  // Every rule on every form. Repeats are dropped (keeping first occurrences): that changes no
  // result, since filter_forms keeps first occurrences too, and keeps the work polynomial.
  auto apply_rules = [&](const std::vector<std::string>& forms) {
    std::vector<std::string> out;
    std::unordered_set<std::string> seen;
    for (const auto& f : forms) {
      for (const auto& [old_suffix, new_suffix] : rules) {
        if (!ends_with(f, old_suffix)) continue;
        std::string g = f.substr(0, f.size() - old_suffix.size()) + new_suffix;
        if (seen.insert(g).second) out.push_back(std::move(g));
      }
    }
    return out;
  };

  const auto& exceptions = exceptions_[static_cast<size_t>(slot)];
  auto exc = exceptions.find(form);
  if (exc != exceptions.end()) {
    std::vector<std::string> forms{form};
    forms.insert(forms.end(), exc->second.begin(), exc->second.end());
    return filter_forms(forms);
  }
  std::vector<std::string> forms = apply_rules({form});
  std::vector<std::string> first{form};
  first.insert(first.end(), forms.begin(), forms.end());
  std::vector<std::string> results = filter_forms(first);
  if (!results.empty()) return results;
  while (!forms.empty()) {
    forms = apply_rules(forms);
    results = filter_forms(forms);
    if (!results.empty()) return results;
  }
  return {};
}

std::vector<WordNet::SynsetRef> WordNet::synsets(const std::string& word) const {
  const std::string lemma = python_lower(word);
  std::vector<SynsetRef> out;
  for (char pos : kPosList) {
    for (const auto& form : morphy(lemma, pos)) {
      const auto [first, count] = offsets(form, pos);
      for (size_t k = 0; k < count; ++k) out.push_back({pos, first[k]});
    }
  }
  return out;
}

std::vector<std::string> WordNet::lemma_names(const SynsetRef& synset) const {
  const std::string& data = data_[static_cast<size_t>(pos_slot(synset.pos))];
  const size_t at = synset.offset;
  char expect[16];
  std::snprintf(expect, sizeof expect, "%08u", synset.offset);
  if (at + 8 > data.size() || data.compare(at, 8, expect) != 0)
    throw std::runtime_error(std::string("WordNet: no synset at offset ") + expect + " of data." +
                             kFileSuffix[pos_slot(synset.pos)]);
  const size_t eol = data.find('\n', at);
  const std::string line = data.substr(at, (eol == std::string::npos ? data.size() : eol) - at);
  std::vector<std::string_view> t;
  split_ws(std::string_view(line).substr(0, line.find('|')), t);
  const std::string where = std::string("data.") + kFileSuffix[pos_slot(synset.pos)] + " offset " + expect;
  if (t.size() < 4) throw std::runtime_error("WordNet: " + where + ": malformed synset line");
  const uint32_t n_lemmas = parse_uint(t[3], 16, where);
  if (t.size() < 4 + 2 * static_cast<size_t>(n_lemmas))
    throw std::runtime_error("WordNet: " + where + ": too few lemma fields");
  std::vector<std::string> names;
  for (uint32_t k = 0; k < n_lemmas; ++k) names.push_back(strip_marker(std::string(t[4 + 2 * static_cast<size_t>(k)])));
  return names;
}

std::unordered_set<std::string> WordNet::synonyms(const std::string& word) const {
  std::unordered_set<std::string> out;
  for (const auto& s : synsets(word)) {
    for (auto& name : lemma_names(s)) {
      if (name.find('_') == std::string::npos) out.insert(std::move(name));
    }
  }
  return out;
}

}  // namespace kvbench::metrics
