// NLTK's Punkt sentence splitter, natively: every case recorded from nltk 3.8's sent_tokenize with
// the English model (scripts/ruler_reference/record_unit_goldens.py), including RULER's essay
// haystack at three sizes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "datasets/data_error.hpp"
#include "datasets/punkt.hpp"
#include "datasets/ruler/ruler_data.hpp"
#include "metrics/unicode.hpp"
#include "temp_file.hpp"

namespace kvbench::datasets {
namespace {

using testing::TempDir;

const std::string kModel = std::string(KVBENCH_TESTS_DIR) + "/../data/ruler/punkt_english";

nlohmann::json cases() {
  std::ifstream in(std::string(KVBENCH_TESTS_DIR) + "/fixtures/ruler/punkt_cases.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

const PunktSentenceTokenizer& english() {
  static const PunktSentenceTokenizer t(PunktParameters::load(kModel));
  return t;
}

TEST(Punkt, SplitsSentencesAsNltk) {
  for (const auto& c : cases()["sentences"])
    EXPECT_EQ(nlohmann::json(english().tokenize(c["text"].get<std::string>())), c["sentences"]) << c["text"];
}

TEST(Punkt, SplitsWordsAsNltk) {
  for (const auto& c : cases()["words"]) {
    std::vector<std::string> words;
    for (const auto& w : PunktSentenceTokenizer::word_tokenize(metrics::utf8_decode(c["text"].get<std::string>())))
      words.push_back(metrics::utf8_encode(w));
    EXPECT_EQ(nlohmann::json(words), c["words"]) << c["text"];
  }
}

TEST(Punkt, SplitsRulersEssayHaystackAsNltk) {
  const nlohmann::json all = cases();
  ruler::RulerData data({std::string(KVBENCH_TESTS_DIR) + "/../data/ruler"});
  const std::vector<std::string>& words = data.essay_words();  // RULER's haystack words
  for (const auto& c : all["essay"]) {
    std::string text;
    for (int i = 0; i < c["num_haystack"].get<int>(); ++i) text += (i ? " " : "") + words[static_cast<std::size_t>(i)];
    const std::vector<std::string> got = english().tokenize(metrics::python_strip(text));
    ASSERT_EQ(got.size(), c["count"].get<std::size_t>()) << c["num_haystack"];
    EXPECT_EQ(nlohmann::json(got), c["sentences"]);
  }
}

// Without the model's abbreviations "Dr." ends a sentence: the parameters are really read.
TEST(Punkt, UsesTheModelsAbbreviations) {
  const PunktSentenceTokenizer bare{PunktParameters{}};
  EXPECT_EQ(bare.tokenize("Dr. Watson came. He sat."), (std::vector<std::string>{"Dr.", "Watson came.", "He sat."}));
  EXPECT_EQ(english().tokenize("Dr. Watson came. He sat."), (std::vector<std::string>{"Dr. Watson came.", "He sat."}));
}

TEST(Punkt, NamesTheFileAndLineOfABadEntry) {
  TempDir dir;
  for (const char* f : {"abbrev_types.txt", "collocations.tab", "sent_starters.txt"}) std::ofstream(dir.path() + "/" + f) << "x\n";
  std::ofstream(dir.path() + "/collocations.tab") << "a\tb\nonly-one\n";
  std::ofstream(dir.path() + "/ortho_context.tab") << "a\t3\n";
  try {
    PunktParameters::load(dir.path());
    FAIL() << "accepted a collocation without its second word";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + "/collocations.tab:2: expected 2 tab-separated field(s), got 1");
  }
  std::ofstream(dir.path() + "/collocations.tab") << "a\tb\n";
  std::ofstream(dir.path() + "/ortho_context.tab") << "a\t3\nb\tmany\n";
  try {
    PunktParameters::load(dir.path());
    FAIL() << "accepted a non-numeric orthographic context";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + "/ortho_context.tab:2: orthographic context 'many' is not a flag set in [0, 127]");
  }
}

}  // namespace
}  // namespace kvbench::datasets
