// sentencepiece round trips on real TinyStories text with stories260K's tok512 and Llama-2's 32k
// tokenizer, BOS/EOS ids, byte fallback, and a missing tokenizer file.
#include <gtest/gtest.h>

#include "datasets/text_reader.hpp"
#include "tokenizers/model_error.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::models {
namespace {

const std::string kShared = KVBENCH_SHARED_DIR;

std::vector<std::string> stories() {
  return datasets::read_tinystories(kShared + "/data/tinystories/TinyStories-valid.head.txt");
}

void expect_round_trips(const Tokenizer& tok, int expected_vocab) {
  EXPECT_EQ(tok.vocab_size(), expected_vocab);
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.eos_id(), 2);
  const auto all = stories();
  ASSERT_GE(all.size(), 100u);
  int64_t tokens = 0;
  for (const auto& story : all) {
    std::vector<int> ids = tok.encode(story, /*add_bos=*/true);
    ASSERT_EQ(ids.front(), tok.bos_id());
    EXPECT_EQ(tok.decode(ids), story);
    EXPECT_EQ(tok.encode(story, false), std::vector<int>(ids.begin() + 1, ids.end()));
    tokens += static_cast<int64_t>(ids.size());
  }
  EXPECT_GT(tokens, 10000);
}

TEST(Tokenizer, Tok512RoundTripsTinyStories) { expect_round_trips(Tokenizer(kShared + "/models/stories260K/tok512.model"), 512); }

TEST(Tokenizer, Llama2RoundTripsTinyStories) {
  Tokenizer tok(kShared + "/models/llama2-tokenizer/tokenizer.model");
  expect_round_trips(tok, 32000);
  // Llama-2's 32k vocabulary is far finer-grained than tok512's: fewer tokens per story.
  Tokenizer small(kShared + "/models/stories260K/tok512.model");
  const std::string story = stories().front();
  EXPECT_LT(tok.encode(story, false).size(), small.encode(story, false).size());
}

TEST(Tokenizer, ByteFallbackRoundTripsTextOutsideTheVocabulary) {
  Tokenizer tok(kShared + "/models/stories260K/tok512.model");
  const std::string text = "Roxy ate 寿司 and said \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80!";
  std::vector<int> ids = tok.encode(text, false);
  EXPECT_EQ(tok.decode(ids), text);
  bool saw_byte = false;
  for (int id : ids) saw_byte |= tok.piece(id).rfind("<0x", 0) == 0;
  EXPECT_TRUE(saw_byte) << "CJK and emoji are not in tok512: they must fall back to byte pieces";
}

// A chat template writes "<s>" and "</s>" as text; transformers' LlamaTokenizer (legacy) splits the
// text there and encodes each piece on its own. The ids between are python3-sentencepiece's.
TEST(Tokenizer, SpecialTokenStringsInTheTextBecomeTheirIdsAsInTransformers) {
  Tokenizer tok(kShared + "/models/stories260K/tok512.model");
  const std::vector<int> inst = {410, 508, 442, 458, 437, 434, 509, 320, 417, 383, 410, 508, 492, 442, 458, 437, 434, 509};
  const std::vector<int> once = {403, 407, 261, 378};
  std::vector<int> expected = {1};
  expected.insert(expected.end(), inst.begin(), inst.end());
  expected.push_back(2);
  expected.insert(expected.end(), once.begin(), once.end());
  EXPECT_EQ(tok.encode("<s>[INST] Hi there [/INST]</s>Once upon a time", false), expected);
  EXPECT_EQ(tok.encode("[INST] Hi there [/INST]", false), inst);
  expected.insert(expected.begin(), 1);
  EXPECT_EQ(tok.encode("<s>[INST] Hi there [/INST]</s>Once upon a time", true), expected);
  EXPECT_EQ(tok.encode("<s>", false), std::vector<int>{1});
  EXPECT_EQ(tok.encode("", false), std::vector<int>{});
}

TEST(Tokenizer, MissingFileIsOneClearError) {
  try {
    Tokenizer tok("/nonexistent/dir/tokenizer.model");
    FAIL() << "no error";
  } catch (const ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/tokenizer.model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::models
