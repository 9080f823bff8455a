// Hostile tokenizer files and inputs (a downloaded model directory is untrusted): a pattern that
// backtracks catastrophically, a huge added vocabulary, a flood of combining marks, special-token
// ids outside the vocabulary, invalid UTF-8 and a device named as the tokenizer. Each is a clear
// error naming the file and the field, or linear work, never a hang or a silently wrong result.
#include <functional>

#include "error_text.hpp"
#include "tokenizers/small_tokenizer.hpp"

namespace kvbench::testing {
namespace {

std::string repeat(const std::string& unit, size_t times) {
  std::string out;
  out.reserve(unit.size() * times);
  for (size_t i = 0; i < times; ++i) out += unit;
  return out;
}

// The small tokenizer with its Split pattern replaced.
nlohmann::json with_split_pattern(const std::string& pattern) {
  nlohmann::json j = small_tokenizer();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = pattern;
  return j;
}

// What encoding `text` says (its error). How long it takes is bench_tokenizer's to measure: a
// unit test only proves the answer (a runaway search would never reach it).
std::string encode_error(const nlohmann::json& tokenizer, const std::string& text) {
  ScratchDir dir;
  const models::Tokenizer tok(dir.write("tokenizer.json", tokenizer.dump()));
  return error_of([&] { tok.encode(text, false); });
}

const std::string kSplitField = "tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: ";

// H1: every single match stayed under Oniguruma's per-match retry limit, and the search ran on for
// minutes (46 KB). One budget per text now spans all its matches.
TEST(HostileTokenizer, CatastrophicBacktrackingStopsWithAnErrorNamingThePattern) {
  const std::string error = encode_error(with_split_pattern("(a+)+$"), repeat(std::string(22, 'a') + "!", 2000));
  EXPECT_TRUE(contains(error, kSplitField)) << error;
  EXPECT_TRUE(contains(error, "pattern \"(a+)+$\"")) << error;
  EXPECT_TRUE(contains(error, "backtracking")) << error;
}

// Each search finds a match (the "." alternative) after an exponential attempt: no single search
// is over any limit, only their sum.
TEST(HostileTokenizer, TheBudgetSpansEveryMatchOfOneText) {
  const std::string error = encode_error(with_split_pattern("(a+)+b|."), repeat(std::string(20, 'a') + "!", 2000));
  EXPECT_TRUE(contains(error, kSplitField + "pattern \"(a+)+b|.\"")) << error;
}

// U1: Oniguruma's own per-match limit said only "regex search failed: retry-limit-in-match over".
TEST(HostileTokenizer, TheRetryLimitErrorNamesTheFileTheFieldAndThePattern) {
  const nlohmann::json tokenizer = with_split_pattern("(\\w+\\s?)*$");
  const std::string pattern = "pattern \"(\\\\w+\\\\s?)*$\"";  // as JSON writes it
  // A short text: the text's budget runs out before the per-match limit.
  std::string error = encode_error(tokenizer, std::string(30, 'a') + "!");
  EXPECT_TRUE(contains(error, kSplitField + pattern)) << error;
  // A long one: the budget outlasts Oniguruma's per-match limit, whose error is named the same way.
  error = encode_error(tokenizer, std::string(20000, 'a') + "!");
  EXPECT_TRUE(contains(error, kSplitField + pattern + ": regex search failed: retry-limit-in-match over")) << error;
}

// Real patterns on long texts stay far inside the budget.
TEST(HostileTokenizer, LongOrdinaryTextsStayInsideTheBudget) {
  const std::string text =
      repeat("Hello,   world!\n\n 12345 \t naïve café — ok?   ", 4000) + std::string(20000, ' ') + "x";
  for (const char* name : {"llama3", "qwen3"}) EXPECT_FALSE(real_tokenizer(name).encode(text, false).empty()) << name;
}

// H2: each added token looked for its id among all earlier ones (quadratic in their number): over a
// minute for 200,000. What is left is mostly reading the 37 MB of JSON.
TEST(HostileTokenizer, ManyAddedTokensLoadAndMatch) {
  nlohmann::json j = read_json(kShared + "/models/llama3-tokenizer/tokenizer.json");
  constexpr int kExtra = 200000;
  for (int i = 0; i < kExtra; ++i)
    j["added_tokens"].push_back({{"id", 0}, {"content", "<|extra_" + std::to_string(i) + "|>"}, {"single_word", false},
                                 {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}});
  ScratchDir dir;
  const std::string path = dir.write("tokenizer.json", j.dump());
  j = nullptr;
  std::unique_ptr<models::Tokenizer> tok;
  tok = std::make_unique<models::Tokenizer>(path);  // the growth with N: bench_tokenizer BM_LoadManyAddedTokens
  EXPECT_EQ(tok->encode("hi", false), real_tokenizer("llama3").encode("hi", false));
  // Ids follow the vocabulary (128,256 tokens) in file order, whatever the file says.
  EXPECT_EQ(tok->encode("a<|extra_0|>b<|extra_199999|>", false),
            std::vector<int>({64, 128256, 65, 128256 + kExtra - 1}));
  EXPECT_EQ(tok->vocab_size(), 128256 + kExtra);
}

// H3: utf8proc orders a run of combining marks by swapping neighbours (quadratic); 150,000 marks
// took minutes. The result is still NFC: á, the ccc-220 marks, then the ccc-230 ones but the first.
TEST(HostileTokenizer, LongRunsOfCombiningMarksNormalize) {
  const std::string acute = "\xCC\x81", grave_below = "\xCC\x96";  // U+0301 (ccc 230), U+0316 (ccc 220)
  const std::string text = "a" + repeat(acute + grave_below, 75000);
  const std::string nfc = "\xC3\xA1" + repeat(grave_below, 75000) + repeat(acute, 74999);
  const models::Tokenizer& tok = real_tokenizer("qwen3");
  std::vector<int> ids;
  ids = tok.encode(text, false);  // the growth with N: bench_tokenizer BM_NormalizeCombiningMarks
  EXPECT_EQ(tok.decode(ids), nfc);
}

// The same normalizer on short mixed runs: marks out of order are sorted, starters stay put.
TEST(HostileTokenizer, CanonicalOrderingIsUnchangedOnShortRuns) {
  const models::Tokenizer& tok = real_tokenizer("qwen3");
  // U+0316 sorts before U+0301, which then composes with the e.
  EXPECT_EQ(tok.decode(tok.encode("e\xCC\x81\xCC\x96 x", false)), "\xC3\xA9\xCC\x96 x");
  EXPECT_EQ(tok.decode(tok.encode("e\xCC\x96\xCC\x81", false)), "\xC3\xA9\xCC\x96");
  // Hangul L + V + T compose to one syllable.
  EXPECT_EQ(tok.decode(tok.encode("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", false)), "\xEA\xB0\x81");
}

nlohmann::json template_with(const nlohmann::json& special) {
  return {{"type", "TemplateProcessing"},
          {"single",
           {{{"SpecialToken", {{"id", "<|end|>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
          {"pair", nlohmann::json::array()},
          {"special_tokens", {{"<|end|>", special}}}};
}

// U2: the id reached the embedding at run time ("libtorch: index out of range in self").
TEST(HostileTokenizer, PostProcessorIdsOutsideTheVocabularyAreRefusedAtLoad) {
  nlohmann::json j = small_tokenizer();
  j["post_processor"] = template_with({{"id", "<|end|>"}, {"ids", {999999999}}, {"tokens", {"<|end|>"}}});
  expect_error(load_error(j), "post_processor.special_tokens.<|end|>.ids[0]", "999999999 is not a token");
  // Inside a Sequence, and an id in range that no token holds.
  const nlohmann::json unheld = template_with({{"id", "<|end|>"}, {"ids", {300}}, {"tokens", {"<|end|>"}}});
  j["post_processor"] = {{"type", "Sequence"}, {"processors", {{{"type", "ByteLevel"}}, unheld}}};
  expect_error(load_error(j), "post_processor.processors[1].special_tokens.<|end|>.ids[0]", "300 is not a token");
  // The added token's own id is fine.
  j["post_processor"] = template_with({{"id", "<|end|>"}, {"ids", {259}}, {"tokens", {"<|end|>"}}});
  EXPECT_EQ(load_error(j), "no error");
}

// W5: Hugging Face refuses both; kvbench accepted them (and dropped unknown characters silently).
TEST(HostileTokenizer, PostProcessorIdsAndTokensOfDifferentLengthsAreRefused) {
  nlohmann::json j = small_tokenizer();
  j["post_processor"] = template_with({{"id", "<|end|>"}, {"ids", {259}}, {"tokens", {"<|end|>", "x"}}});
  expect_error(load_error(j), "post_processor.special_tokens.<|end|>", "1 ids and 2 tokens");
}

TEST(HostileTokenizer, AnUnkTokenOutsideTheVocabularyIsRefused) {
  nlohmann::json j = small_tokenizer();
  j["model"]["unk_token"] = "<unk>";
  expect_error(load_error(j), "model.unk_token", "\"<unk>\" is not in model.vocab");
  j["model"]["unk_token"] = "he";  // a token of the vocabulary
  EXPECT_EQ(load_error(j), "no error");
}

// W6: sentencepiece mapped the bytes to U+FFFD and scored a number; tokenizer.json refused.
TEST(HostileTokenizer, InvalidUtf8IsRefusedTheSameWayByEveryFormat) {
  const std::string text = "x\xff\xc3\x28";
  const std::string expected = "tokenizer input: not valid UTF-8 at byte 1";
  EXPECT_EQ(error_of([&] { real_tokenizer("llama3").encode(text, true); }), expected);
  const models::Tokenizer spm(kShared + "/models/stories260K/tok512.model");
  EXPECT_EQ(error_of([&] { spm.encode(text, true); }), expected);
  const models::Tokenizer gpt2(kShared + "/models/gpt2-tokenizer");
  EXPECT_EQ(error_of([&] { gpt2.encode(text, true); }), expected);
}

// U6: an existing character device was "not found".
TEST(HostileTokenizer, ADeviceIsNotARegularFile) {
  const std::string error = error_of([] { models::Tokenizer tok("/dev/zero"); });
  EXPECT_EQ(error, "/dev/zero: the tokenizer must be a regular file or a directory, this is a character device");
}

}  // namespace
}  // namespace kvbench::testing
