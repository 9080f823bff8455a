// models::encode_prefix (issue #31, H7: `perplexity --max-tokens 200` tokenized a 50 MB text
// whole): its ids are the first ids of the whole text's, for every tokenizer format kvbench reads
// (sentencepiece, tokenizer.json of Llama-3 and Qwen3, GPT-2's vocab.json + merges.txt), on real
// texts and on a hostile one (runs of spaces, tabs, newlines, punctuation, digits, CJK without
// spaces, special-token strings), and only a prefix of the text reaches the tokenizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/perplexity.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::models {
namespace {

const std::string kShared = KVBENCH_SHARED_DIR;
const std::string kTinyStories = kShared + "/data/tinystories/TinyStories-valid.head.txt";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every construct where a cut could change the ids if it were taken at the wrong place.
std::string hostile_text() {
  std::string out;
  const char* pieces[] = {"Hello  world", "\t\ttabs\tand  spaces ", "line\n\n\nbreaks\r\n", "wait!!! what?? ",
                          "12345 678.9 0x1F ", "naïve café ", "東京タワーは高い ", "emoji 🙂🙂 ", "it's they'll ",
                          "<|endoftext|> <s> </s> <|im_start|>", "a  b   c    d     ", "(((nested))) ",
                          "end.\n"};
  for (int i = 0; i < 60; ++i)
    for (const char* p : pieces) out += p;
  return out;
}

struct Case {
  std::string tokenizer;  // under ../shared/models
};

class PrefixTokens : public ::testing::TestWithParam<Case> {};

TEST_P(PrefixTokens, AreTheFirstTokensOfTheWholeText) {
  const Tokenizer tok(kShared + "/models/" + GetParam().tokenizer);
  const std::string wikitext = read(kShared + "/data/wikitext/wiki.test.raw");
  std::string one_line = read(kTinyStories);
  for (char& c : one_line)
    if (c == '\n') c = ' ';
  const std::vector<std::pair<std::string, std::string>> texts{
      {"tinystories", read(kTinyStories)},
      {"tinystories one line", one_line},
      {"wikitext", wikitext.substr(0, wikitext.find('\n', 200000))},  // whole lines: whole characters
      {"hostile", hostile_text()}};
  for (const auto& [name, text] : texts) {
    ASSERT_GT(text.size(), 10000u) << name;
    for (bool special : {true, false}) {
      const std::vector<int> whole = tok.encode(text, special);
      for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{17}, int64_t{200}, int64_t{1001}, int64_t{4096},
                        static_cast<int64_t>(whole.size()) - 1, static_cast<int64_t>(whole.size()) + 5}) {
        const std::vector<int> expected(whole.begin(), whole.begin() + std::min<int64_t>(n, whole.size()));
        EXPECT_EQ(encode_prefix(tok, text, n, special), expected) << name << ", " << n << " tokens, special " << special;
      }
    }
  }
}

// Why the margin is only for a post-processor's trailing ids: a cut before a space that follows a
// non-space is a boundary of every tokenizer's pieces, so the ids of the text up to any such cut
// are exactly the whole text's first ids (tested at every 7th cut of a hostile text and of a story).
TEST_P(PrefixTokens, ACutBeforeASpaceIsAPieceBoundary) {
  const Tokenizer tok(kShared + "/models/" + GetParam().tokenizer);
  for (std::string text : {hostile_text(), read(kTinyStories)}) {
    text = text.substr(0, text.find(' ', 4000));  // at a space: whole characters
    const std::vector<int> whole = tok.encode(text, false);
    int cuts = 0;
    for (size_t i = 1; i < text.size(); ++i) {
      if (text[i] != ' ' || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n' || text[i - 1] == '\r')
        continue;
      if (cuts++ % 7 != 0) continue;
      const std::vector<int> head = tok.encode(text.substr(0, i), false);
      ASSERT_LE(head.size(), whole.size()) << i;
      EXPECT_TRUE(std::equal(head.begin(), head.end(), whole.begin())) << "cut at byte " << i << ": " << text.substr(0, i);
    }
    EXPECT_GT(cuts, 100);
  }
}

// The tail of the text never reaches the tokenizer: here it is not UTF-8, which every tokenizer
// refuses, yet a prefix well before it is tokenized.
TEST_P(PrefixTokens, OnlyAPrefixIsTokenized) {
  const Tokenizer tok(kShared + "/models/" + GetParam().tokenizer);
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "the cat sat on the mat ";
  const std::string tail = text + "\xff\xfe";
  EXPECT_THROW(tok.encode(tail, true), std::exception);
  EXPECT_EQ(encode_prefix(tok, tail, 100, true), encode_prefix(tok, text, 100, true));
  EXPECT_EQ(encode_prefix(tok, tail, 100, true).size(), 100u);
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, PrefixTokens,
                         ::testing::Values(Case{"stories260K/tok512.model"}, Case{"llama2-tokenizer/tokenizer.model"},
                                           Case{"llama3-tokenizer/tokenizer.json"}, Case{"qwen3-tokenizer/tokenizer.json"},
                                           Case{"gpt2-tokenizer"}),
                         [](const auto& info) {
                           const std::string& t = info.param.tokenizer;
                           return t.rfind("stories", 0) == 0 ? std::string("Stories260K")
                                  : t.rfind("llama2", 0) == 0 ? std::string("Llama2")
                                  : t.rfind("llama3", 0) == 0 ? std::string("Llama3")
                                  : t.rfind("qwen3", 0) == 0  ? std::string("Qwen3")
                                                              : std::string("Gpt2");
                         });

}  // namespace
}  // namespace kvbench::models
