#pragma once
// The files RULER's generators read, loaded once per run: the Paul Graham essays haystack, the
// wonderwords lists, NLTK's English Punkt model, SQuAD v2 dev and HotpotQA dev (distractor).
// The repository bundles all but HotpotQA (data/ruler/, PROVENANCE.md there); a missing file is
// one error naming it and where RULER downloads it.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "datasets/punkt.hpp"

namespace kvbench::datasets::ruler {

// sorted(set(f"{adj}-{noun}" for adj in adjs for noun in nouns)) without building its ~7 million
// strings: adjectives are grouped so that only groups whose keys "adj-" prefix one another (and
// so interleave) are materialised and sorted.
class AdjectiveNouns {
 public:
  AdjectiveNouns(const std::vector<std::string>& adjectives, const std::vector<std::string>& nouns);
  std::size_t size() const { return size_; }
  std::string at(std::size_t i) const;

 private:
  struct Group {
    std::size_t first = 0;              // index of its first word in the whole list
    std::string adjective;              // a group of one adjective: adjective-noun for every noun
    std::vector<std::string> combined;  // a group of several: its sorted unique words
  };
  std::vector<std::string> nouns_;  // sorted, unique
  std::vector<Group> groups_;
  std::size_t size_ = 0;
};

// One question of qa.py's read_squad / read_hotpotqa.
struct QaItem {
  std::string query;
  std::vector<std::string> outputs;
  std::vector<std::size_t> context;       // indices into docs
  std::vector<std::size_t> more_context;  // SQuAD: the article's other paragraphs
};
struct QaDataset {
  std::vector<QaItem> questions;
  std::vector<std::string> docs;  // sorted unique documents
};

class RulerData {
 public:
  // `folders` hold the files under their RULER names (scripts/data/synthetic/json/ and the
  // wonderwords / punkt folders), searched in order; `overrides` maps a file name (squad.json,
  // hotpotqa.json, ...) to another path.
  explicit RulerData(std::vector<std::string> folders, std::map<std::string, std::string> overrides = {});

  // re.sub(r"\s+", " ", essay).split(" ") of PaulGrahamEssays.json's "text".
  const std::vector<std::string>& essay_words();
  const PunktSentenceTokenizer& punkt();
  // wonderwords.random_word._get_words_from_text_file(name): the lines, each rstripped.
  const std::vector<std::string>& word_list(const std::string& name);
  const AdjectiveNouns& adjective_nouns();
  const QaDataset& qa(const std::string& dataset);  // "squad" | "hotpotqa"
  const std::vector<std::string>& english_words();  // english_words.json's values (cwe past its word list)

  // The path of a RULER data file (an override, else the first folder holding it); throws naming
  // the file and its official source when it is missing.
  std::string path(const std::string& name) const;

 private:
  std::vector<std::string> folders_;
  std::map<std::string, std::string> overrides_;
  std::unique_ptr<std::vector<std::string>> essay_words_;
  std::unique_ptr<PunktSentenceTokenizer> punkt_;
  std::map<std::string, std::vector<std::string>> word_lists_;
  std::unique_ptr<AdjectiveNouns> adjective_nouns_;
  std::map<std::string, QaDataset> qa_;
  std::unique_ptr<std::vector<std::string>> english_words_;
};

}  // namespace kvbench::datasets::ruler
