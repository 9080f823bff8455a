// `kvbench tokenize`: the CLI contract other tools rely on, on the real binary.
#include "cli/run_binary.hpp"
#include "tokenizers/tokenizer_test_support.hpp"

namespace kvbench::testing {
namespace {

std::vector<nlohmann::json> json_lines(const std::string& output) {
  std::vector<nlohmann::json> out;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(TokenizeCli, JsonlInputGivesTheReferenceIdsForEveryLine) {
  const nlohmann::json golden = read_json(kShared + "/golden/tokenizers/llama3.json");
  ScratchDir dir;
  std::string input;
  std::vector<nlohmann::json> expected;
  for (size_t i = 0; i < golden.at("cases").size(); i += 7) {
    const auto& c = golden.at("cases")[i];
    input += nlohmann::json{{"id", c.at("id")}, {"text", c.at("text")}}.dump() + "\n";
    expected.push_back(c);
  }
  input += "\n";  // blank lines are skipped
  const std::string path = dir.write("in.jsonl", input);
  const CommandResult r = run_kvbench("tokenize --tokenizer " + kShared + "/models/llama3-tokenizer --input " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto lines = json_lines(r.output);
  ASSERT_EQ(lines.size(), expected.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].size(), 4u);
    EXPECT_EQ(lines[i].at("id"), expected[i].at("id"));
    EXPECT_EQ(lines[i].at("ids"), expected[i].at("ids"));
    EXPECT_EQ(lines[i].at("ids_with_special_tokens"), expected[i].at("ids_with_special_tokens"));
    EXPECT_EQ(lines[i].at("decoded"), expected[i].at("decoded"));
  }
}

TEST(TokenizeCli, OneTextWithSpecialTokensKeptInDecoded) {
  const CommandResult r = run_kvbench("tokenize --tokenizer " + kShared +
                                      "/models/qwen3-tokenizer/tokenizer.json --text '<|im_start|>user\nhi<|im_end|>'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto lines = json_lines(r.output);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].at("ids").front(), 151644);
  EXPECT_EQ(lines[0].at("ids").back(), 151645);
  EXPECT_EQ(lines[0].at("ids"), lines[0].at("ids_with_special_tokens"));  // Qwen3 adds nothing
  EXPECT_EQ(lines[0].at("decoded"), "<|im_start|>user\nhi<|im_end|>");
}

TEST(TokenizeCli, SentencepieceModelWorksToo) {
  const CommandResult r = run_kvbench("tokenize --tokenizer " + kShared + "/models/stories260K/tok512.model --text 'Once upon a time'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto line = json_lines(r.output).at(0);
  EXPECT_EQ(line.at("ids_with_special_tokens").front(), 1);  // BOS
  EXPECT_EQ(line.at("ids_with_special_tokens").size(), line.at("ids").size() + 1);
  EXPECT_EQ(line.at("decoded"), "Once upon a time");
}

TEST(TokenizeCli, BadLinesNameFileLineAndField) {
  ScratchDir dir;
  const std::string tok = " --tokenizer " + kShared + "/models/gpt2-tokenizer";
  auto error_for = [&](const std::string& content) {
    const std::string path = dir.write("bad.jsonl", content);
    const CommandResult r = run_kvbench("tokenize" + tok + " --input " + path + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    return r.output;
  };
  std::string out = error_for("{\"id\": 1, \"text\": \"ok\"}\n{\"id\": 2}\n");
  EXPECT_NE(out.find("bad.jsonl:2: field 'text'"), std::string::npos) << out;
  out = error_for("{\"id\": 1, \"text\": 5}\n");
  EXPECT_NE(out.find("bad.jsonl:1: field 'text': expected a string"), std::string::npos) << out;
  out = error_for("{\"id\": [1], \"text\": \"x\"}\n");
  EXPECT_NE(out.find("bad.jsonl:1: field 'id'"), std::string::npos) << out;
  out = error_for("{\"id\": 1, \"text\": \"x\", \"txet\": \"y\"}\n");
  EXPECT_NE(out.find("bad.jsonl:1: field 'txet': unknown key"), std::string::npos) << out;
  out = error_for("{\"id\": 1, \"text\": \"x\"\n");
  EXPECT_NE(out.find("bad.jsonl:1:"), std::string::npos) << out;
  const CommandResult both = run_kvbench("tokenize" + tok + " 2>&1");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.output.find("exactly one of --input and --text"), std::string::npos) << both.output;
}

}  // namespace
}  // namespace kvbench::testing
