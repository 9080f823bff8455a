// NLTK PorterStemmer (NLTK_EXTENSIONS) on nltk's own documented examples and the special cases.
// The golden rouge_score stemmed token lists (rouge_score_test.cpp) check it on ~20k more words.
#include <gtest/gtest.h>

#include "metrics/porter_stemmer.hpp"

using kvbench::metrics::porter_stem;

TEST(PorterStemmer, NltkDocExamples) {
  const char* words[] = {"caresses", "flies",   "dies",    "mules",       "denied",
                         "died",     "agreed",  "owned",   "humbled",     "sized",
                         "meeting",  "stating", "siezing", "itemization", "sensational",
                         "traditional", "reference", "colonizer", "plotted"};
  const char* stems[] = {"caress", "fli",   "die",  "mule", "deni",   "die",    "agre",
                         "own",    "humbl", "size", "meet", "state",  "siez",   "item",
                         "sensat", "tradit", "refer", "colon", "plot"};
  for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); ++i) {
    EXPECT_EQ(porter_stem(words[i]), stems[i]) << words[i];
  }
}

TEST(PorterStemmer, IrregularPoolAndShortWords) {
  EXPECT_EQ(porter_stem("skies"), "sky");
  EXPECT_EQ(porter_stem("dying"), "die");
  EXPECT_EQ(porter_stem("lying"), "lie");
  EXPECT_EQ(porter_stem("innings"), "inning");
  EXPECT_EQ(porter_stem("news"), "news");
  EXPECT_EQ(porter_stem("proceed"), "proceed");
  EXPECT_EQ(porter_stem("succeeded"), "succeed");
  EXPECT_EQ(porter_stem("is"), "is");  // <= 2 characters: untouched
  EXPECT_EQ(porter_stem("as"), "as");
  EXPECT_EQ(porter_stem("happy"), "happi");
  EXPECT_EQ(porter_stem("enjoy"), "enjoy");
  EXPECT_EQ(porter_stem("generously"), "gener");
  EXPECT_EQ(porter_stem("geology"), "geolog");
  EXPECT_EQ(porter_stem("running"), "run");
  EXPECT_EQ(porter_stem("Running"), "run");  // lowercased first
  EXPECT_EQ(porter_stem(""), "");
}
