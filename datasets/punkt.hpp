#pragma once
// NLTK's Punkt sentence splitter (nltk.tokenize.sent_tokenize, PunktSentenceTokenizer.tokenize with
// realign_boundaries) over trained parameters in NLTK's punkt_tab layout, so a RULER haystack is
// cut into the same sentences as its scripts cut it. Positions are code points, as in Python.
// Follows nltk 3.8's tokenizer (the period-context matching of its ReDoS fix, the two annotation
// passes, the boundary realignment); the parameters are the English model nltk_data distributes.
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kvbench::datasets {

struct PunktParameters {
  std::unordered_set<std::u32string> abbrev_types;
  std::set<std::pair<std::u32string, std::u32string>> collocations;
  std::unordered_set<std::u32string> sent_starters;
  std::unordered_map<std::u32string, int> ortho_context;  // absent: 0

  // A punkt_tab language folder: abbrev_types.txt, collocations.tab, sent_starters.txt,
  // ortho_context.tab (one entry a line, tab-separated fields). Throws DataError naming the file
  // and line of a malformed entry.
  static PunktParameters load(const std::string& folder);
};

class PunktSentenceTokenizer {
 public:
  explicit PunktSentenceTokenizer(PunktParameters params) : params_(std::move(params)) {}
  // sent_tokenize(text): the sentences, as slices of the text.
  std::vector<std::string> tokenize(const std::string& text) const;
  // The (start, end) code-point spans of those sentences.
  std::vector<std::pair<std::size_t, std::size_t>> span_tokenize(const std::u32string& text) const;

  // PunktLanguageVars.word_tokenize: the word tokens of one line (periods stay attached).
  static std::vector<std::u32string> word_tokenize(const std::u32string& line);

 private:
  bool text_contains_sentbreak(const std::u32string& context) const;
  PunktParameters params_;
};

}  // namespace kvbench::datasets
