// Which file a path means (tokenizer.json before tokenizer.model; vocab.json + merges.txt; a file
// named directly), BOS/EOS and the chat template from tokenizer_config.json, and the stop ids of
// generation_config.json; HF model directories pick their tokenizer the same way.
#include "tokenizers/generation_config.hpp"
#include "tokenizers/model_error.hpp"
#include "models/model_loader.hpp"
#include "tokenizers/tokenizer_config.hpp"
#include "tokenizers/tokenizer_test_support.hpp"

namespace kvbench::testing {
namespace {

namespace fs = std::filesystem;
const std::string kLlama3 = kShared + "/models/llama3-tokenizer";
const std::string kTok512 = kShared + "/models/stories260K/tok512.model";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const models::ModelLoadError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TokenizerSelection, TokenizerJsonWinsOverTokenizerModel) {
  ScratchDir dir;
  fs::copy_file(kLlama3 + "/tokenizer.json", dir.file("tokenizer.json"));
  fs::copy_file(kTok512, dir.file("tokenizer.model"));
  EXPECT_EQ(models::resolve_tokenizer_file(dir.path().string()), dir.file("tokenizer.json"));
  EXPECT_EQ(models::Tokenizer(dir.path().string()).format(), "tokenizer.json");
  // Named directly, either file is read.
  EXPECT_EQ(models::Tokenizer(dir.file("tokenizer.model")).format(), "sentencepiece");
  fs::remove(dir.file("tokenizer.json"));
  models::Tokenizer sp(dir.path().string());
  EXPECT_EQ(sp.format(), "sentencepiece");
  EXPECT_EQ(sp.vocab_size(), 512);
  EXPECT_EQ(sp.stop_ids(), std::vector<int>({2}));
}

TEST(TokenizerSelection, ConfigAndGenerationConfigBesideTheTokenizer) {
  ScratchDir dir;
  fs::copy_file(kLlama3 + "/tokenizer.json", dir.file("tokenizer.json"));
  // Without tokenizer_config.json a tokenizer.json names no BOS/EOS.
  models::Tokenizer bare(dir.path().string());
  EXPECT_EQ(bare.bos_id(), -1);
  EXPECT_EQ(bare.eos_id(), -1);
  EXPECT_TRUE(bare.stop_ids().empty());
  dir.write("tokenizer_config.json",
            R"({"bos_token": {"content": "<|begin_of_text|>", "lstrip": false}, "eos_token": "<|end_of_text|>",
                "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]})");
  dir.write("generation_config.json", R"({"bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009]})");
  models::Tokenizer tok(dir.path().string());
  EXPECT_EQ(tok.bos_id(), 128000);
  EXPECT_EQ(tok.eos_id(), 128001);
  EXPECT_EQ(tok.stop_ids(), std::vector<int>({128001, 128008, 128009}));
  EXPECT_EQ(tok.config().chat_template.value(), "D");
  dir.write("generation_config.json", R"({"eos_token_id": 128009})");
  EXPECT_EQ(models::Tokenizer(dir.path().string()).stop_ids(), std::vector<int>({128001, 128009}));
}

TEST(TokenizerConfig, RealConfigsAreRead) {
  const models::TokenizerConfig llama = models::read_tokenizer_config(kLlama3 + "/tokenizer_config.json");
  EXPECT_EQ(llama.bos_token.value(), "<|begin_of_text|>");
  EXPECT_EQ(llama.eos_token.value(), "<|eot_id|>");
  EXPECT_NE(llama.chat_template.value().find("<|start_header_id|>"), std::string::npos);
  EXPECT_FALSE(llama.add_bos_token.has_value());
  const models::TokenizerConfig qwen = models::read_tokenizer_config(kShared + "/models/qwen3-tokenizer/tokenizer_config.json");
  EXPECT_FALSE(qwen.bos_token.has_value());
  EXPECT_EQ(qwen.eos_token.value(), "<|im_end|>");
  EXPECT_EQ(qwen.add_bos_token, std::optional<bool>(false));
  EXPECT_NE(qwen.chat_template.value().find("enable_thinking"), std::string::npos);
}

TEST(TokenizerConfig, ChatTemplateFileBesideTheConfig) {
  ScratchDir dir;
  dir.write("tokenizer_config.json", R"({"eos_token": "</s>"})");
  EXPECT_FALSE(models::read_tokenizer_config(dir.file("tokenizer_config.json")).chat_template.has_value());
  dir.write("chat_template.jinja", "{{ messages[0]['content'] }}");
  EXPECT_EQ(models::read_tokenizer_config(dir.file("tokenizer_config.json")).chat_template.value(), "{{ messages[0]['content'] }}");
  // Both there: transformers reads chat_template.jinja over the config's field.
  dir.write("tokenizer_config.json", R"({"eos_token": "</s>", "chat_template": "{{ 'from the config' }}"})");
  EXPECT_EQ(models::read_tokenizer_config(dir.file("tokenizer_config.json")).chat_template.value(), "{{ messages[0]['content'] }}");
}

TEST(TokenizerConfig, BadFieldsAreNamed) {
  ScratchDir dir;
  auto error = [&](const std::string& text) {
    dir.write("tokenizer_config.json", text);
    return error_of([&] { models::read_tokenizer_config(dir.file("tokenizer_config.json")); });
  };
  EXPECT_NE(error(R"({"eos_token": 7})").find("tokenizer_config.json: eos_token: must be a string"), std::string::npos);
  EXPECT_NE(error(R"({"bos_token": {"lstrip": true}})").find("bos_token: must be a string or an object"), std::string::npos);
  EXPECT_NE(error(R"({"chat_template": [{"name": "tool_use", "template": "x"}]})").find("chat_template: a list of templates without one named \"default\""),
            std::string::npos);
  EXPECT_NE(error(R"({"chat_template": [{"name": "default"}]})").find("chat_template[0]: must be"), std::string::npos);
  EXPECT_NE(error(R"({"add_bos_token": "yes"})").find("add_bos_token: must be true or false"), std::string::npos);
  EXPECT_NE(error(R"({"eos_token": "<|eot_id|>",)").find("tokenizer_config.json:1: invalid JSON"), std::string::npos);
  // A token the tokenizer does not have.
  fs::copy_file(kLlama3 + "/tokenizer.json", dir.file("tokenizer.json"));
  dir.write("tokenizer_config.json", R"({"eos_token": "<|no_such_token|>"})");
  const std::string e = error_of([&] { models::Tokenizer tok(dir.path().string()); });
  EXPECT_NE(e.find("tokenizer_config.json: eos_token: \"<|no_such_token|>\" is not a token"), std::string::npos) << e;
  dir.write("tokenizer_config.json", "{}");
  dir.write("generation_config.json", R"({"eos_token_id": [1, "two"]})");
  const std::string g = error_of([&] { models::Tokenizer tok(dir.path().string()); });
  EXPECT_NE(g.find("generation_config.json: eos_token_id: must be a non-negative integer"), std::string::npos) << g;
}

TEST(TokenizerSelection, HfModelDirectoryPrefersTokenizerJson) {
  ScratchDir dir;
  dir.write("config.json", "{}");
  dir.write("model.safetensors", "");
  fs::copy_file(kLlama3 + "/tokenizer.json", dir.file("tokenizer.json"));
  fs::copy_file(kTok512, dir.file("tokenizer.model"));
  EXPECT_EQ(models::locate_model(dir.path().string()).tokenizer_path, dir.file("tokenizer.json"));
  // --tokenizer may name a directory: its file is used.
  EXPECT_EQ(models::locate_model(dir.path().string(), kShared + "/models/qwen3-tokenizer").tokenizer_path,
            kShared + "/models/qwen3-tokenizer/tokenizer.json");
  fs::remove(dir.file("tokenizer.json"));
  EXPECT_EQ(models::locate_model(dir.path().string()).tokenizer_path, dir.file("tokenizer.model"));
}

}  // namespace
}  // namespace kvbench::testing
