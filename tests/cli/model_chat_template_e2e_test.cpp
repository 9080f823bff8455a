// End to end with the models' own chat templates: tiny random-weight Llama-3 and Qwen3
// checkpoints (real vocabulary sizes 128256 / 151936, hidden 64, 2 layers, GQA) written here in
// safetensors beside the real tokenizer.json + tokenizer_config.json, run through
// `kvbench run --task longbench/qasper --limit 1` with task_params.chat_template "model". The
// prompt must be the model's own template (its header first) and must be encoded without a
// second BOS. Also `kvbench chat-template` on the same directories.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "cli/run_binary.hpp"
#include "harness/temp_dir.hpp"
#include "tensorio/safetensors.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::testing {
namespace {
namespace fs = std::filesystem;

struct TinySpec {
  std::string model_type;  // llama | qwen3
  std::string tokenizer;   // folder under ../shared/models
  int64_t vocab;
};

// Random weights (std 0.02, as transformers' initializer_range) in the HF layout and names.
void write_checkpoint(const fs::path& dir, const TinySpec& s) {
  const int64_t hidden = 64, inter = 128, layers = 2, heads = 4, kv = 2, hd = 16;
  nlohmann::json config = {{"model_type", s.model_type}, {"hidden_size", hidden}, {"intermediate_size", inter},
                           {"num_hidden_layers", layers}, {"num_attention_heads", heads}, {"num_key_value_heads", kv},
                           {"head_dim", hd}, {"vocab_size", s.vocab}, {"max_position_embeddings", 4096},
                           {"rms_norm_eps", 1e-6}, {"rope_theta", s.model_type == "llama" ? 500000.0 : 1000000.0},
                           {"hidden_act", "silu"}, {"tie_word_embeddings", true}, {"torch_dtype", "float32"}};
  std::ofstream(dir / "config.json") << config.dump(2);
  torch::manual_seed(7);
  std::vector<std::pair<std::string, torch::Tensor>> t;
  auto randn = [](std::vector<int64_t> shape) { return torch::randn(shape) * 0.02; };
  t.emplace_back("model.embed_tokens.weight", randn({s.vocab, hidden}));
  t.emplace_back("model.norm.weight", torch::ones({hidden}));
  for (int64_t l = 0; l < layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.emplace_back(p + "input_layernorm.weight", torch::ones({hidden}));
    t.emplace_back(p + "self_attn.q_proj.weight", randn({heads * hd, hidden}));
    t.emplace_back(p + "self_attn.k_proj.weight", randn({kv * hd, hidden}));
    t.emplace_back(p + "self_attn.v_proj.weight", randn({kv * hd, hidden}));
    t.emplace_back(p + "self_attn.o_proj.weight", randn({hidden, heads * hd}));
    if (s.model_type == "qwen3") {
      t.emplace_back(p + "self_attn.q_norm.weight", torch::ones({hd}));
      t.emplace_back(p + "self_attn.k_norm.weight", torch::ones({hd}));
    }
    t.emplace_back(p + "post_attention_layernorm.weight", torch::ones({hidden}));
    t.emplace_back(p + "mlp.gate_proj.weight", randn({inter, hidden}));
    t.emplace_back(p + "mlp.up_proj.weight", randn({inter, hidden}));
    t.emplace_back(p + "mlp.down_proj.weight", randn({hidden, inter}));
  }
  models::write_safetensors((dir / "model.safetensors").string(), t);
  const fs::path tokenizer = fs::path(KVBENCH_SHARED_DIR) / "models" / s.tokenizer;
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) fs::copy_file(tokenizer / f, dir / f);
}

nlohmann::json only_result(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") return nlohmann::json::parse(std::ifstream(e.path()));
  return nullptr;
}

class ModelChatTemplateEndToEnd : public ::testing::TestWithParam<TinySpec> {};

TEST_P(ModelChatTemplateEndToEnd, LongBenchRunsWithTheModelsOwnTemplate) {
#if !__has_include("tokenizers/hf_tokenizer.hpp")
  GTEST_SKIP() << "needs the tokenizer.json tokenizer (issue #11, the tok branch: tokenizers/hf_tokenizer.hpp), "
                  "which these checkpoints use";
#endif
  const TinySpec& s = GetParam();
  TempDir dir;
  const fs::path model = dir / "model";
  fs::create_directories(model);
  write_checkpoint(model, s);
  const std::string params = R"({"chat_template":"model","max_new_tokens":4,"max_length":300,"record_prompts":true})";
  CommandResult r = run_kvbench("run --model " + model.string() + " --task longbench/qasper --limit 1 --task-params '" +
                                params + "' --quiet --results " + (dir / "results") + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json result = only_result(dir / "results");
  ASSERT_FALSE(result.is_null()) << "no result file";
  const nlohmann::json& example = result["examples"][0];
  const std::string prompt = example["prompt"].get<std::string>();
  const std::string head = s.model_type == "llama" ? "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n"
                                                   : "<|im_start|>user\n";
  const std::string tail = s.model_type == "llama" ? "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
                                                   : "<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(prompt.substr(0, head.size()), head);
  ASSERT_GE(prompt.size(), tail.size());
  EXPECT_EQ(prompt.substr(prompt.size() - tail.size()), tail);
  EXPECT_NE(prompt.find("Answer the question based on the above article"), std::string::npos);
  // Encoded as kvpress does: without adding special tokens again (one BOS, the template's).
  const models::Tokenizer tokenizer(model.string());
  const auto plain = tokenizer.encode(prompt, /*add_special_tokens=*/false);
  EXPECT_EQ(example["prompt_tokens"].get<int64_t>(), static_cast<int64_t>(plain.size()));
  if (s.model_type == "llama") {
    EXPECT_EQ(plain[0], 128000);  // <|begin_of_text|>
    EXPECT_NE(plain[1], 128000);
    EXPECT_EQ(tokenizer.encode(prompt, true).size(), plain.size() + 1);  // what a double BOS would have been
  }
  EXPECT_EQ(result["settings"]["resolved"]["chat_template"], "model");
}

TEST_P(ModelChatTemplateEndToEnd, ChatTemplateCommandRendersTheSameHeader) {
  const TinySpec& s = GetParam();
  TempDir dir;
  const fs::path tokenizer = fs::path(KVBENCH_SHARED_DIR) / "models" / s.tokenizer;
  std::ofstream(dir / "in.jsonl")
      << R"({"id": "a", "messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true})" << "\n"
      << R"({"id": 2, "messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": false, "kwargs": {"enable_thinking": false}})"
      << "\n";
  CommandResult r = run_kvbench("chat-template --tokenizer " + tokenizer.string() + " --input " + (dir / "in.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream lines(r.output);
  std::string line;
  std::getline(lines, line);
  const auto first = nlohmann::json::parse(line);
  EXPECT_EQ(first["id"], "a");
  if (s.model_type == "llama")
    EXPECT_EQ(first["rendered"], "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                                 "<|start_header_id|>assistant<|end_header_id|>\n\n");
  else
    EXPECT_EQ(first["rendered"], "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  std::getline(lines, line);
  EXPECT_EQ(nlohmann::json::parse(line)["id"], 2);
}

// RULER's kvpress pipeline decides as pipeline.py: a tokenizer with a chat template gets it (the
// context rendered up to kvpress's separator, the template's suffix after the question, then the
// answer prefix), without any task parameter.
TEST_P(ModelChatTemplateEndToEnd, RulerKvpressPipelineUsesTheModelsTemplateByDefault) {
  const TinySpec& s = GetParam();
  TempDir dir;
  const fs::path model = dir / "model";
  fs::create_directories(model);
  write_checkpoint(model, s);
  const nlohmann::json row = {{"context", "The grass is green. One of the special magic numbers for x is: 123. "},
                              {"question", "What is the special magic number for x mentioned in the provided text? "},
                              {"answer_prefix", "The special magic number for x mentioned in the provided text is"},
                              {"answer", {"123"}}, {"task", "niah_single_1"}, {"max_new_tokens", 2}};
  std::ofstream(dir / "rows.jsonl") << row.dump() << "\n";
  const std::string params = R"({"pipeline":"kvpress","record_prompts":true,"data_file":")" + (dir / "rows.jsonl") + R"("})";
  CommandResult r = run_kvbench("run --model " + model.string() + " --task ruler/niah_single_1 --task-params '" + params +
                                "' --quiet --results " + (dir / "results") + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json result = only_result(dir / "results");
  ASSERT_FALSE(result.is_null()) << "no result file";
  const std::string head = s.model_type == "llama" ? "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n"
                                                   : "<|im_start|>user\n";
  // pipeline.py's enable_thinking=False: Qwen3's template closes an empty think block.
  const std::string tail = s.model_type == "llama" ? "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
                                                   : "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
  EXPECT_EQ(result["examples"][0]["prompt"].get<std::string>(),
            head + row["context"].get<std::string>() + row["question"].get<std::string>() + tail + row["answer_prefix"].get<std::string>());
  EXPECT_EQ(result["settings"]["resolved"]["chat_template"], "model");
}


INSTANTIATE_TEST_SUITE_P(TinyCheckpoints, ModelChatTemplateEndToEnd,
                         ::testing::Values(TinySpec{"llama", "llama3-tokenizer", 128256},
                                           TinySpec{"qwen3", "qwen3-tokenizer", 151936}),
                         [](const auto& info) { return info.param.model_type == "llama" ? "Llama3" : "Qwen3"; });

}  // namespace
}  // namespace kvbench::testing
