// task_params.chat_template "model": the model's own template from tokenizer_config.json beside
// its tokenizer, rendered with [{"role": "user", "content": prompt}] and add_generation_prompt,
// then encoded WITHOUT adding BOS again (kvpress). Here stories260K in a folder with the real
// Llama-2-chat template; the Llama-3 / Qwen3 runs with tokenizer.json are in
// tests/cli/model_chat_template_e2e_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>

#include "models/model_loader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "task_fixtures.hpp"
#include "datasets/jsonl_reader.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/longbench_pipelines.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {
namespace fs = std::filesystem;
using namespace testing;

const std::string kStories = std::string(KVBENCH_SHARED_DIR) + "/models/stories260K/";

// stories260K with tok512 and, unless `chat_template` is empty, a tokenizer_config.json.
std::string model_dir(const ScratchDir& dir, const std::string& chat_template) {
  fs::copy_file(kStories + "stories260K.bin", dir.path() + "/stories260K.bin", fs::copy_options::overwrite_existing);
  fs::copy_file(kStories + "tok512.model", dir.path() + "/tok512.model", fs::copy_options::overwrite_existing);
  nlohmann::json config = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  if (!chat_template.empty()) config["chat_template"] = chat_template;
  dir.write("tokenizer_config.json", config.dump());
  return dir.path();
}

std::string llama2_chat_template() { return read_file(fixture("chat_templates/templates/meta-llama-Llama-2-7b-chat-hf.jinja")); }

std::string strip(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const size_t b = s.find_first_not_of(ws);
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(ws) - b + 1);
}

TEST(ModelChatTemplate, LongBenchWrapsThePromptInTheModelsTemplateWithoutASecondBos) {
  ScratchDir dir("model_chat_lb");
  const std::string model = model_dir(dir, llama2_chat_template());
  nlohmann::json r = run_task({{"task", "longbench/passage_count"}, {"model", model}, {"limit", 1},
                               {"task_params", {{"data_file", fixture("longbench/passage_count.jsonl")},
                                                {"max_length", 4096}, {"max_new_tokens", 2}, {"record_prompts", true},
                                                {"chat_template", "model"}}}});
  const std::string prompt = r["examples"][0]["prompt"];
  // Llama-2-chat: bos_token + '[INST] ' + content.strip() + ' [/INST]'.
  EXPECT_EQ(prompt, "<s>[INST] " + strip(golden("longbench_passage_count_0.txt")) + " [/INST]");
  const models::Tokenizer tok(model + "/tok512.model");
  EXPECT_EQ(r["examples"][0]["prompt_tokens"].get<size_t>(), tok.encode(prompt, false).size());
  EXPECT_EQ(tok.encode(prompt, true).size(), tok.encode(prompt, false).size() + 1);  // would have been one more
  EXPECT_EQ(r["settings"]["resolved"]["chat_template"], "model");
}

TEST(ModelChatTemplate, KvcacheFactoryAndKvpressPipelinesAcceptModelWithOneBos) {
  ScratchDir dir("model_chat_pipelines");
  const std::string model = model_dir(dir, llama2_chat_template());
  const models::Tokenizer tok(model + "/tok512.model");
  // KVCache-Factory: the template wraps every subset, qasper included (pred.py would not).
  nlohmann::json kf = run_task({{"task", "longbench/qasper"}, {"model", model}, {"limit", 1},
                                {"task_params", {{"pipeline", "kvcache_factory"}, {"max_length", 300}, {"max_new_tokens", 2},
                                                 {"record_prompts", true}, {"chat_template", "model"}}}});
  // The middle cut decodes without special tokens (pred.py's skip_special_tokens=True): the BOS
  // the template wrote is gone from the text and added again, once.
  const std::string p = kf["examples"][0]["prompt"];
  ASSERT_TRUE(kf["examples"][0]["truncated"].get<bool>());
  EXPECT_EQ(p.rfind("[INST] ", 0), 0u) << p.substr(0, 80);
  EXPECT_EQ(kf["examples"][0]["prompt_tokens"].get<size_t>(), tok.encode(p, true).size());
  // kvpress: the context is the template's text up to the user message's end; its BOS is the text's.
  nlohmann::json kp = run_task({{"task", "longbench/qasper"}, {"model", model}, {"limit", 1},
                                {"task_params", {{"pipeline", "kvpress"}, {"max_new_tokens", 1}, {"record_prompts", true},
                                                 {"chat_template", "model"}}}});
  // The recorded prompt is what was fed (the context cut to the 512-token window); the text before
  // the cut is "original_prompt".
  ASSERT_TRUE(kp["examples"][0]["truncated"].get<bool>());
  const std::string context = kp["examples"][0]["original_prompt"];
  EXPECT_EQ(context.rfind("<s>[INST] ", 0), 0u) << context.substr(0, 80);
  EXPECT_LT(kp["examples"][0]["prompt"].get<std::string>().size(), context.size());
  const auto records = datasets::read_jsonl(shared_data("longbench/qasper.jsonl"), 1);
  const nlohmann::json prompts = nlohmann::json::parse(read_file(shared_data("longbench_ref/dataset2prompt.json")));
  const KvpressParts parts = longbench::kvpress_parts("qasper", prompts["qasper"], records[0], "model", tok);
  EXPECT_EQ(parts.context, context);
  EXPECT_TRUE(parts.context_has_bos);
  const KvpressIds ids = kvpress_ids(tok, parts, 100000);
  ASSERT_GE(ids.context.size(), 2u);
  EXPECT_EQ(ids.context[0], tok.bos_id());
  EXPECT_NE(ids.context[1], tok.bos_id());  // no second BOS
  EXPECT_NE(parts.question.find(" [/INST]"), std::string::npos) << parts.question;  // the template's end
}

TEST(ModelChatTemplate, MultidocQaAndSummarizationAcceptModel) {
  ScratchDir dir("model_chat_tasks");
  const std::string model = model_dir(dir, llama2_chat_template());
  nlohmann::json qa = run_task({{"task", "multidoc_qa"}, {"model", model}, {"limit", 1},
                                {"task_params", {{"truncation", "middle"}, {"max_new_tokens", 2}, {"record_prompts", true},
                                                 {"chat_template", "model"}}}});
  const std::string p = qa["examples"][0]["prompt"];
  // The recorded prompt of a middle-cut example is the kept tokens decoded: the BOS the
  // template wrote (one token, first) does not show as text.
  ASSERT_TRUE(qa["examples"][0]["truncated"].get<bool>());
  EXPECT_EQ(p.rfind("[INST] Write a high-quality answer", 0), 0u) << p.substr(0, 80);
  EXPECT_EQ(p.substr(p.size() - 8), " [/INST]");
  nlohmann::json xsum = run_task({{"task", "xsum"}, {"model", model}, {"limit", 1},
                                  {"task_params", {{"max_new_tokens", 2}, {"record_prompts", true}, {"chat_template", "model"}}}});
  const std::string s = xsum["examples"][0]["prompt"];
  EXPECT_EQ(s.rfind("<s>[INST] ", 0), 0u) << s.substr(0, 80);
  const models::Tokenizer tok(model + "/tok512.model");
  EXPECT_EQ(xsum["examples"][0]["prompt_tokens"].get<size_t>(), tok.encode(s, false).size());
}

TEST(ModelChatTemplate, AModelWithoutATemplateIsAClearError) {
  ScratchDir no_template("model_chat_none");
  const std::string without = model_dir(no_template, "");
  const std::string e = error_of([&] {
    run_task({{"task", "longbench/passage_count"}, {"model", without}, {"limit", 1},
              {"task_params", {{"data_file", fixture("longbench/passage_count.jsonl")}, {"chat_template", "model"}}}});
  });
  EXPECT_NE(e.find("tokenizer_config.json: chat_template: the model has no chat template"), std::string::npos) << e;
  // stories260K itself has no tokenizer_config.json at all.
  const std::string none = error_of([&] {
    run_task({{"task", "longbench/passage_count"}, {"limit", 1},
              {"task_params", {{"data_file", fixture("longbench/passage_count.jsonl")}, {"chat_template", "model"}}}});
  });
  EXPECT_NE(none.find("chat_template \"model\": no tokenizer_config.json"), std::string::npos) << none;
  EXPECT_THROW(apply_chat_template("model", "x"), std::invalid_argument);  // needs the tokenizer
  EXPECT_TRUE(template_carries_special_tokens("model"));
  EXPECT_FALSE(template_carries_special_tokens("llama3"));
}

}  // namespace
}  // namespace kvbench::tasks
