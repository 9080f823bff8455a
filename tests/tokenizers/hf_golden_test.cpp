// Llama-3's and Qwen3's tokenizer.json reproduce Hugging Face tokenizers exactly: every case of
// ../shared/golden/tokenizers (ids, ids with special tokens, the three decodings), more edge cases
// and seeded random strings recorded by scripts/make_tokenizer_goldens.js, and raw id lists whose
// decoding splits multi-byte characters.
#include "tokenizers/tokenizer_test_support.hpp"

#include <algorithm>

namespace kvbench::testing {
namespace {

class HfGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(HfGolden, SharedGoldenCasesMatchExactly) {
  const nlohmann::json golden = read_json(kShared + "/golden/tokenizers/" + GetParam() + ".json");
  const models::Tokenizer& tok = real_tokenizer(GetParam());
  ASSERT_GE(golden.at("cases").size(), 90u);
  for (const auto& c : golden.at("cases")) expect_case(tok, c);
}

TEST_P(HfGolden, ExtraEdgeAndRandomCasesMatchExactly) {
  const nlohmann::json extra = read_json(kFixtures + "/extra_cases.json").at(GetParam());
  const models::Tokenizer& tok = real_tokenizer(GetParam());
  ASSERT_GE(extra.at("cases").size(), 150u);
  for (const auto& c : extra.at("cases")) expect_case(tok, c);
}

TEST_P(HfGolden, DecodingSplitCharactersMatchesLossyUtf8) {
  const nlohmann::json extra = read_json(kFixtures + "/extra_cases.json").at(GetParam());
  const models::Tokenizer& tok = real_tokenizer(GetParam());
  bool saw_replacement = false;
  for (const auto& d : extra.at("decodes")) {
    const auto ids = d.at("ids").get<std::vector<int>>();
    EXPECT_EQ(tok.decode(ids, false), d.at("decoded").get<std::string>()) << d.at("ids").dump();
    EXPECT_EQ(tok.decode(ids, true), d.at("decoded_skip_special").get<std::string>()) << d.at("ids").dump();
    saw_replacement |= d.at("decoded").get<std::string>().find("\xEF\xBF\xBD") != std::string::npos;
  }
  EXPECT_TRUE(saw_replacement) << "the cases must include incomplete UTF-8";
}

// A special token added for one encode (kvpress's FinchPress delimiter) splits the text as the
// library splits it after tokenizer.add_special_tokens(), takes the next free id, and leaves the
// tokenizer unchanged (scripts/make_added_special_goldens.js).
TEST_P(HfGolden, AddedSpecialTokenSplitsAsTheLibraryDoes) {
  const nlohmann::json recorded = read_json(kFixtures + "/added_special_token.json");
  const nlohmann::json& golden = recorded.at("tokenizers").at(GetParam() + "-tokenizer");
  const std::string token = recorded.at("token");
  const models::Tokenizer& tok = real_tokenizer(GetParam());
  EXPECT_EQ(golden.at("token_id").get<int>(), tok.vocab_size());
  ASSERT_GE(golden.at("cases").size(), 6u);
  for (const auto& c : golden.at("cases")) {
    const std::string text = c.at("text");
    EXPECT_EQ(tok.encode(text, false, {token}), c.at("ids").get<std::vector<int>>()) << text;
  }
  EXPECT_FALSE(tok.token_to_id(token).has_value());
  const std::vector<int> plain = tok.encode("a" + token + "b", false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), tok.vocab_size()), 0) << "without the token the text stays text";
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, HfGolden, ::testing::Values("llama3", "qwen3"));

TEST(HfTokenizer, Llama3SpecialTokensComeFromItsConfig) {
  const models::Tokenizer& tok = real_tokenizer("llama3");
  EXPECT_EQ(tok.format(), "tokenizer.json");
  EXPECT_EQ(tok.vocab_size(), 128256);
  EXPECT_EQ(tok.bos_id(), 128000);  // <|begin_of_text|>
  EXPECT_EQ(tok.eos_id(), 128009);  // <|eot_id|>, tokenizer_config.json's eos_token
  EXPECT_EQ(tok.stop_ids(), std::vector<int>({128009}));
  EXPECT_EQ(tok.piece(128009), "<|eot_id|>");
  EXPECT_EQ(tok.piece(9906), "Hello");
  EXPECT_EQ(tok.encode("Hello", true).front(), 128000);
  EXPECT_TRUE(tok.config().chat_template.has_value());
}

TEST(HfTokenizer, Qwen3HasNoBosAndAddsNoSpecialTokens) {
  const models::Tokenizer& tok = real_tokenizer("qwen3");
  EXPECT_EQ(tok.vocab_size(), 151669);
  EXPECT_EQ(tok.bos_id(), -1);
  EXPECT_EQ(tok.eos_id(), 151645);  // <|im_end|>
  EXPECT_EQ(tok.encode("Hello world", true), tok.encode("Hello world", false));
  // NFC before splitting: a decomposed é encodes as the composed one.
  EXPECT_EQ(tok.encode("caf\x65\xCC\x81", false), tok.encode("caf\xC3\xA9", false));
}

TEST(HfTokenizer, InvalidUtf8InputIsAnErrorNotGarbage) {
  try {
    real_tokenizer("llama3").encode("ok \xC3( bad", false);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8 at byte 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::testing
