#include "metrics/porter_stemmer.hpp"

#include <unordered_map>
#include <vector>

#include "metrics/unicode.hpp"

namespace kvbench::metrics {
namespace {

using Word = std::u32string;
// A rule's condition sees the stem (word minus suffix) and the whole word.
using Cond = bool (*)(const Word& stem, const Word& word);

struct Rule {
  Word suffix;  // U"*d" = ends with a double consonant
  Word replacement;
  Cond condition;  // nullptr = unconditional
};

bool is_vowel(char32_t c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// y is a consonant at the start or after a vowel (nltk's recursive definition, iterated).
bool is_consonant(const Word& w, size_t i) {
  bool cons = true;
  for (size_t k = 0; k <= i; ++k) {
    char32_t c = w[k];
    if (is_vowel(c)) {
      cons = false;
    } else if (c == 'y') {
      cons = (k == 0) ? true : !cons;
    } else {
      cons = true;
    }
  }
  return cons;
}

// Number of "vc" occurrences in the consonant/vowel pattern.
int measure(const Word& stem) {
  int m = 0;
  bool prev = true;  // consonant-ness of the previous letter (unused for k = 0)
  for (size_t k = 0; k < stem.size(); ++k) {
    char32_t c = stem[k];
    bool cons = is_vowel(c) ? false : (c == 'y' ? (k == 0 ? true : !prev) : true);
    if (k > 0 && !prev && cons) ++m;
    prev = cons;
  }
  return m;
}

bool positive_measure(const Word& stem, const Word&) { return measure(stem) > 0; }
bool measure_gt1(const Word& stem, const Word&) { return measure(stem) > 1; }

bool contains_vowel(const Word& stem) {
  bool prev = true;
  for (size_t k = 0; k < stem.size(); ++k) {
    char32_t c = stem[k];
    bool cons = is_vowel(c) ? false : (c == 'y' ? (k == 0 ? true : !prev) : true);
    if (!cons) return true;
    prev = cons;
  }
  return false;
}

bool ends_double_consonant(const Word& w) {
  return w.size() >= 2 && w[w.size() - 1] == w[w.size() - 2] && is_consonant(w, w.size() - 1);
}

bool ends_cvc(const Word& w) {
  size_t n = w.size();
  if (n >= 3 && is_consonant(w, n - 3) && !is_consonant(w, n - 2) && is_consonant(w, n - 1) &&
      w[n - 1] != 'w' && w[n - 1] != 'x' && w[n - 1] != 'y') {
    return true;
  }
  return n == 2 && !is_consonant(w, 0) && is_consonant(w, 1);  // NLTK extension
}

bool ends_with(const Word& w, const Word& s) {
  return w.size() >= s.size() && w.compare(w.size() - s.size(), s.size(), s) == 0;
}

Word drop(const Word& w, size_t n) { return w.substr(0, w.size() - n); }

// The first rule whose suffix matches decides: applied if its condition holds, else the word is
// returned unchanged (no later rule is tried).
Word apply_rules(const Word& word, const std::vector<Rule>& rules) {
  for (const auto& r : rules) {
    if (r.suffix == U"*d" && ends_double_consonant(word)) {
      Word stem = drop(word, 2);
      if (!r.condition || r.condition(stem, word)) return stem + r.replacement;
      return word;
    }
    if (ends_with(word, r.suffix)) {
      Word stem = drop(word, r.suffix.size());
      if (!r.condition || r.condition(stem, word)) return stem + r.replacement;
      return word;
    }
  }
  return word;
}

Word step1a(const Word& w) {
  if (ends_with(w, U"ies") && w.size() == 4) return drop(w, 3) + U"ie";
  static const std::vector<Rule> rules = {
      {U"sses", U"ss", nullptr}, {U"ies", U"i", nullptr}, {U"ss", U"ss", nullptr}, {U"s", U"", nullptr}};
  return apply_rules(w, rules);
}

Word step1b(const Word& w) {
  if (ends_with(w, U"ied")) return drop(w, 3) + (w.size() == 4 ? U"ie" : U"i");
  if (ends_with(w, U"eed")) {
    Word stem = drop(w, 3);
    return measure(stem) > 0 ? stem + U"ee" : w;
  }
  Word inter;
  bool ok = false;
  for (const Word& suffix : {Word(U"ed"), Word(U"ing")}) {
    if (ends_with(w, suffix)) {
      inter = drop(w, suffix.size());
      if (contains_vowel(inter)) {
        ok = true;
        break;
      }
    }
  }
  if (!ok) return w;
  // at -> ate, bl -> ble, iz -> ize, (*d and not *l/*s/*z) -> single letter, (m=1 and *o) -> +e.
  // The first rule whose suffix matches decides (apply_rules semantics), spelled out here
  // because the *d replacement depends on the word.
  if (ends_with(inter, U"at")) return inter + U"e";
  if (ends_with(inter, U"bl")) return inter + U"e";
  if (ends_with(inter, U"iz")) return inter + U"e";
  if (ends_double_consonant(inter)) {
    char32_t last = inter.back();
    if (last != 'l' && last != 's' && last != 'z') return drop(inter, 1);
    return inter;
  }
  if (measure(inter) == 1 && ends_cvc(inter)) return inter + U"e";
  return inter;
}

Word step1c(const Word& w) {
  static const std::vector<Rule> rules = {
      {U"y", U"i", [](const Word& s, const Word&) { return s.size() > 1 && is_consonant(s, s.size() - 1); }}};
  return apply_rules(w, rules);
}

Word step2(const Word& w) {
  if (ends_with(w, U"alli") && measure(drop(w, 4)) > 0) return step2(drop(w, 4) + U"al");
  const Cond pm = positive_measure;
  static const std::vector<Rule> rules = {
      {U"ational", U"ate", pm}, {U"tional", U"tion", pm}, {U"enci", U"ence", pm},
      {U"anci", U"ance", pm},   {U"izer", U"ize", pm},    {U"bli", U"ble", pm},
      {U"alli", U"al", pm},     {U"entli", U"ent", pm},   {U"eli", U"e", pm},
      {U"ousli", U"ous", pm},   {U"ization", U"ize", pm}, {U"ation", U"ate", pm},
      {U"ator", U"ate", pm},    {U"alism", U"al", pm},    {U"iveness", U"ive", pm},
      {U"fulness", U"ful", pm}, {U"ousness", U"ous", pm}, {U"aliti", U"al", pm},
      {U"iviti", U"ive", pm},   {U"biliti", U"ble", pm},  {U"fulli", U"ful", pm},
      // the 'l' of 'logi' stays with the stem for the measure (geo-, theo-)
      {U"logi", U"log", [](const Word&, const Word& word) { return measure(drop(word, 3)) > 0; }},
  };
  return apply_rules(w, rules);
}

Word step3(const Word& w) {
  const Cond pm = positive_measure;
  static const std::vector<Rule> rules = {{U"icate", U"ic", pm}, {U"ative", U"", pm},
                                          {U"alize", U"al", pm}, {U"iciti", U"ic", pm},
                                          {U"ical", U"ic", pm},  {U"ful", U"", pm},
                                          {U"ness", U"", pm}};
  return apply_rules(w, rules);
}

Word step4(const Word& w) {
  const Cond gt1 = measure_gt1;
  static const std::vector<Rule> rules = {{U"al", U"", gt1},   {U"ance", U"", gt1}, {U"ence", U"", gt1}, {U"er", U"", gt1},
          {U"ic", U"", gt1},   {U"able", U"", gt1}, {U"ible", U"", gt1}, {U"ant", U"", gt1},
          {U"ement", U"", gt1}, {U"ment", U"", gt1}, {U"ent", U"", gt1},
          {U"ion", U"", [](const Word& s, const Word&) { return measure(s) > 1 && (s.back() == 's' || s.back() == 't'); }},
          {U"ou", U"", gt1},   {U"ism", U"", gt1},  {U"ate", U"", gt1},  {U"iti", U"", gt1},
          {U"ous", U"", gt1},  {U"ive", U"", gt1},  {U"ize", U"", gt1}};
  return apply_rules(w, rules);
}

Word step5a(const Word& w) {
  if (ends_with(w, U"e")) {
    Word stem = drop(w, 1);
    int m = measure(stem);
    if (m > 1) return stem;
    if (m == 1 && !ends_cvc(stem)) return stem;
  }
  return w;
}

Word step5b(const Word& w) {
  static const std::vector<Rule> rules = {
      {U"ll", U"l", [](const Word&, const Word& word) { return measure(drop(word, 1)) > 1; }}};
  return apply_rules(w, rules);
}

const std::unordered_map<Word, Word>& pool() {
  static const std::unordered_map<Word, Word> p = {
      {U"sky", U"sky"},         {U"skies", U"sky"},       {U"dying", U"die"},
      {U"lying", U"lie"},       {U"tying", U"tie"},       {U"news", U"news"},
      {U"innings", U"inning"},  {U"inning", U"inning"},   {U"outings", U"outing"},
      {U"outing", U"outing"},   {U"cannings", U"canning"}, {U"canning", U"canning"},
      {U"howe", U"howe"},       {U"proceed", U"proceed"}, {U"exceed", U"exceed"},
      {U"succeed", U"succeed"},
  };
  return p;
}

}  // namespace

std::string porter_stem(const std::string& word) {
  Word original = utf8_decode(word);
  Word w = python_lower(original);
  auto it = pool().find(original);
  if (it != pool().end()) return utf8_encode(it->second);
  if (original.size() <= 2) return utf8_encode(w);
  w = step1a(w);
  w = step1b(w);
  w = step1c(w);
  w = step2(w);
  w = step3(w);
  w = step4(w);
  w = step5a(w);
  w = step5b(w);
  return utf8_encode(w);
}

}  // namespace kvbench::metrics
