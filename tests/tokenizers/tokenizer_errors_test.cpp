// Bad tokenizer files: each is one ModelLoadError naming the file and the field, never a crash and
// never a silently different tokenizer.
#include "tokenizers/small_tokenizer.hpp"

namespace kvbench::testing {
namespace {

TEST(TokenizerErrors, TheSmallTokenizerItselfWorks) {
  ScratchDir dir;
  models::Tokenizer tok(dir.write("tokenizer.json", small_tokenizer().dump()));
  EXPECT_EQ(tok.encode("hello<|end|>", false), std::vector<int>({258, tok.token_to_id("o").value(), 259}));
  EXPECT_EQ(tok.decode(tok.encode("hello 42<|end|>", false)), "hello 42<|end|>");
}

TEST(TokenizerErrors, UnknownModelType) {
  nlohmann::json j = small_tokenizer();
  j["model"]["type"] = "Unigram";
  expect_error(load_error(j), "model.type", "unknown \"Unigram\"");
}

TEST(TokenizerErrors, UnknownPreTokenizer) {
  nlohmann::json j = small_tokenizer();
  j["pre_tokenizer"]["pretokenizers"][1]["type"] = "Foo";
  expect_error(load_error(j), "pre_tokenizer.pretokenizers[1].type", "unknown \"Foo\"");
}

TEST(TokenizerErrors, UnknownNormalizer) {
  nlohmann::json j = small_tokenizer();
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase2"}}}}};
  expect_error(load_error(j), "normalizer.normalizers[1].type", "unknown \"Lowercase2\"");
}

TEST(TokenizerErrors, UnknownDecoderAndPostProcessor) {
  nlohmann::json j = small_tokenizer();
  j["decoder"] = {{"type", "WordPiece"}};
  expect_error(load_error(j), "decoder.type", "unknown \"WordPiece\"");
  j = small_tokenizer();
  j["post_processor"] = {{"type", "BertProcessing"}};
  expect_error(load_error(j), "post_processor.type", "unknown \"BertProcessing\"");
}

TEST(TokenizerErrors, InvalidRegex) {
  nlohmann::json j = small_tokenizer();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}+";
  expect_error(load_error(j), "pre_tokenizer.pretokenizers[0].pattern.Regex", "invalid regex");
}

TEST(TokenizerErrors, MergeNamingAnUnknownToken) {
  nlohmann::json j = small_tokenizer();
  j["model"]["merges"][2] = "he zz";
  expect_error(load_error(j), "model.merges[2]", "unknown token \"zz\"");
  j["model"]["merges"][2] = {"he", "l"};  // "hel" is not in the vocabulary
  expect_error(load_error(j), "model.merges[2]", "\"hel\" is not in the vocabulary");
  j["model"]["merges"][2] = "h e l";
  expect_error(load_error(j), "model.merges[2]", "two tokens separated by one space");
}

TEST(TokenizerErrors, TruncatedJson) {
  const std::string whole = small_tokenizer().dump();
  const std::string error = load_error(whole.substr(0, whole.size() / 2));
  EXPECT_NE(error.find("tokenizer.json:1: invalid JSON"), std::string::npos) << error;
}

// tokenizer.json goes through kvbench's one JSON reader: a number beyond a double (which
// nlohmann throws as out_of_range, once uncaught) and a repeated key are load errors naming the line.
TEST(TokenizerErrors, OverflowingNumbersAndRepeatedKeysAreLoadErrors) {
  std::string error = load_error(std::string("{\"version\": 1e99999}"));
  EXPECT_NE(error.find("tokenizer.json:1: invalid JSON: number overflow parsing '1e99999'"), std::string::npos) << error;
  error = load_error(std::string("{\"version\": \"1.0\",\n \"version\": \"2.0\"}"));
  EXPECT_NE(error.find("tokenizer.json:2: invalid JSON: duplicate key \"version\""), std::string::npos) << error;
}

TEST(TokenizerErrors, UnknownFieldsAndWrongTypesAreNamed) {
  nlohmann::json j = small_tokenizer();
  j["model"]["continuing_subword_suffix"] = "##";
  expect_error(load_error(j), "model.continuing_subword_suffix", "unknown field");
  j = small_tokenizer();
  j["added_tokens"][0]["special"] = "yes";
  expect_error(load_error(j), "added_tokens[0].special", "must be true or false");
  j = small_tokenizer();
  j["model"]["vocab"]["he"] = -3;
  expect_error(load_error(j), "model.vocab.he", "non-negative integer id");
  j = small_tokenizer();
  j["model"]["dropout"] = 0.1;
  expect_error(load_error(j), "model.dropout", "not supported");
  j = small_tokenizer();
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways";
  expect_error(load_error(j), "pre_tokenizer.pretokenizers[0].behavior", "unknown \"Sideways\"");
  j = small_tokenizer();
  j.erase("model");
  expect_error(load_error(j), "model", "missing field");
}

// Decoding an id that two tokens claim would return one of them, silently.
TEST(TokenizerErrors, TwoTokensOnOneIdAreNamed) {
  nlohmann::json j = small_tokenizer();
  j["model"]["vocab"]["hello"] = 257;  // "ll" holds 257
  expect_error(load_error(j), "model.vocab", "id 257 is held by both \"hello\" and \"ll\"");
}

// An empty vocabulary tokenized every text to [] without a word.
TEST(TokenizerErrors, EmptyVocabIsRefused) {
  nlohmann::json j = small_tokenizer();
  j["model"]["vocab"] = nlohmann::json::object();
  j["model"]["merges"] = nlohmann::json::array();
  j.erase("added_tokens");
  expect_error(load_error(j), "model.vocab", "is empty");
}

// Real tokenizers restate vocab entries in added_tokens with the same content and id: that is fine.
TEST(TokenizerErrors, AddedTokenRestatingAVocabEntryLoads) {
  nlohmann::json j = small_tokenizer();
  j["added_tokens"].push_back({{"id", 256}, {"content", "he"}, {"single_word", false}, {"lstrip", false},
                               {"rstrip", false}, {"normalized", true}, {"special", false}});
  EXPECT_EQ(load_error(j), "no error");
}

TEST(TokenizerErrors, Gpt2VocabWithTwoTokensOnOneIdIsNamed) {
  ScratchDir dir;
  dir.write("vocab.json", R"({"a": 0, "b": 1, "ab": 1})");
  dir.write("merges.txt", "#version: 0.2\na b\n");
  try {
    models::Tokenizer tok(dir.path().string());
    FAIL() << "no error";
  } catch (const models::ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("vocab.json: id 1 is held by both \"ab\" and \"b\""), std::string::npos)
        << e.what();
  }
}

TEST(TokenizerErrors, Gpt2MergesFileLineIsNamed) {
  ScratchDir dir;
  std::filesystem::copy_file(kShared + "/models/gpt2-tokenizer/vocab.json", dir.file("vocab.json"));
  dir.write("merges.txt", "#version: 0.2\n\xC4\xA0 t\nh e\nqqqqqq zz\n");
  try {
    models::Tokenizer tok(dir.path().string());
    FAIL() << "no error";
  } catch (const models::ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("merges.txt:4: unknown token \"qqqqqq\""), std::string::npos) << e.what();
  }
}

TEST(TokenizerErrors, NoTokenizerInADirectory) {
  ScratchDir dir;
  try {
    models::Tokenizer tok(dir.path().string());
    FAIL() << "no error";
  } catch (const models::ModelLoadError& e) {
    EXPECT_NE(std::string(e.what()).find("no tokenizer in this directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::testing
