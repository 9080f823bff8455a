// GPT-2's vocab.json + merges.txt, and tokenizer.json pipelines around GPT-2's BPE model that use
// the options the real files do not (NFD/NFKC/NFKD, every Split behaviour, invert, literal
// patterns, Metaspace and the sentencepiece-style Prepend/Replace/Fuse/Strip steps,
// add_prefix_space, ignore_merges, templates, added-token lstrip/rstrip/single_word/
// normalized): each against Hugging Face tokenizers' own output (tests/fixtures/tokenizers).
#include "tokenizers/hf_tokenizer.hpp"
#include "tokenizers/tokenizer_test_support.hpp"

namespace kvbench::testing {
namespace {

const std::string kGpt2 = kShared + "/models/gpt2-tokenizer";

nlohmann::json gpt2_merges_as_strings() {
  nlohmann::json merges = nlohmann::json::array();
  std::ifstream in(kGpt2 + "/merges.txt");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
  return merges;
}

TEST(Gpt2Files, VocabAndMergesMatchGpt2TokenizerFast) {
  const nlohmann::json fixture = read_json(kFixtures + "/gpt2_pipelines.json");
  const nlohmann::json& gpt2 = fixture.at("variants").at(0);
  ASSERT_EQ(gpt2.at("name"), "gpt2");
  for (const std::string& path : {kGpt2, kGpt2 + "/vocab.json", kGpt2 + "/merges.txt"}) {
    models::Tokenizer tok(path);
    EXPECT_EQ(tok.format(), "vocab.json+merges.txt");
    EXPECT_EQ(tok.vocab_size(), 50257);
    EXPECT_EQ(tok.eos_id(), 50256);
    EXPECT_EQ(tok.bos_id(), 50256);
    EXPECT_EQ(tok.piece(262), "\xC4\xA0the");  // "Ġthe"
    for (const auto& c : gpt2.at("cases")) expect_case(tok, c);
  }
}

TEST(Gpt2Files, PipelineVariantsMatchHuggingFace) {
  const nlohmann::json fixture = read_json(kFixtures + "/gpt2_pipelines.json");
  const nlohmann::json vocab = read_json(kGpt2 + "/vocab.json");
  const nlohmann::json merges = gpt2_merges_as_strings();
  ASSERT_GE(fixture.at("variants").size(), 15u);
  ScratchDir dir;
  int checked = 0;
  for (const auto& variant : fixture.at("variants")) {
    nlohmann::json json = variant.at("tokenizer_json_without_vocab_and_merges");
    json["model"]["vocab"] = vocab;
    json["model"]["vocab"].update(variant.at("extra_vocab"));  // e.g. <0x00>..<0xFF> for byte_fallback
    json["model"]["merges"] = merges;
    const std::string name = variant.at("name");
    std::filesystem::create_directories(dir.path() / name);
    dir.write(name + "/tokenizer.json", json.dump());
    models::Tokenizer tok(dir.file(name));
    SCOPED_TRACE(name);
    for (const auto& c : variant.at("cases")) {
      expect_case(tok, c);
      ++checked;
    }
  }
  EXPECT_GE(checked, 750);
}

TEST(Gpt2Files, MergesAsPairsEqualMergesAsStrings) {
  nlohmann::json json = read_json(kFixtures + "/gpt2_pipelines.json").at("variants").at(0).at("tokenizer_json_without_vocab_and_merges");
  json["model"]["vocab"] = read_json(kGpt2 + "/vocab.json");
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& m : gpt2_merges_as_strings()) {
    const std::string s = m;
    pairs.push_back({s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1)});
  }
  json["model"]["merges"] = pairs;
  ScratchDir dir;
  models::Tokenizer as_pairs(dir.write("tokenizer.json", json.dump()));
  models::Tokenizer as_files(kGpt2);
  const std::string text = "Merges written as [\"a\", \"b\"] pairs (tokenizers >= 0.20) rank the same.";
  EXPECT_EQ(as_pairs.encode(text, false), as_files.encode(text, false));
  EXPECT_GT(as_pairs.encode(text, false).size(), 10u);
}

// Ranks decide, not order of appearance in the word: the lowest-ranked pair merges first, and on
// equal ranks the leftmost.
TEST(BpeModel, LowestRankMergesFirstThenLeftmost) {
  const models::BpeModel::Vocab vocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"aa", 5}};
  auto fail = [](size_t, const std::string& what) -> void { throw std::runtime_error(what); };
  models::BpeModel bc_first(vocab, {{"b", "c"}, {"a", "b"}}, {}, fail);
  models::BpeModel ab_first(vocab, {{"a", "b"}, {"b", "c"}}, {}, fail);
  models::BpeModel pairs(vocab, {{"a", "a"}}, {}, fail);
  std::vector<int> out;
  bc_first.tokenize("abc", out);
  EXPECT_EQ(out, std::vector<int>({0, 4}));
  out.clear();
  ab_first.tokenize("abc", out);
  EXPECT_EQ(out, std::vector<int>({3, 2}));
  out.clear();
  pairs.tokenize("aaa", out);  // leftmost pair first: "aa" + "a", not "a" + "aa"
  EXPECT_EQ(out, std::vector<int>({5, 0}));
}

}  // namespace
}  // namespace kvbench::testing
