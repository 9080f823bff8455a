// LongBench: pred.py prompts (golden), middle truncation and max lengths, chat templates, samsum's
// stop rule, eval.py scoring end to end on stories260K, malformed data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "datasets/jsonl_reader.hpp"
#include "metrics/longbench_metrics.hpp"
#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "tokenizers/tokenizer.hpp"
#include "task_fixtures.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/longbench.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/run_task.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;

const models::Tokenizer& tokenizer() {
  static const models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  return tok;
}

nlohmann::json passage_count(nlohmann::json params, int64_t limit = 1) {
  params["data_file"] = fixture("longbench/passage_count.jsonl");
  return run_task({{"task", "longbench/passage_count"}, {"limit", limit}, {"task_params", params}});
}

TEST(LongBenchPrompt, MatchesPredPyGolden) {
  nlohmann::json r = passage_count({{"max_length", 4096}, {"max_new_tokens", 2}, {"record_prompts", true}});
  EXPECT_EQ(r["examples"][0]["prompt"].get<std::string>(), golden("longbench_passage_count_0.txt"));
  EXPECT_FALSE(r["examples"][0]["truncated"].get<bool>());
  r = passage_count({{"max_length", 4096}, {"max_new_tokens", 2}, {"record_prompts", true}, {"chat_template", "llama2"}});
  EXPECT_EQ(r["examples"][0]["prompt"].get<std::string>(), golden("longbench_passage_count_0_llama2.txt"));
}

TEST(LongBenchPrompt, ExcludedSubsetsGetNoChatTemplate) {
  nlohmann::json r = run_task({{"task", "longbench/trec"}, {"limit", 1},
                               {"task_params", {{"chat_template", "llama2"}, {"max_new_tokens", 2}, {"record_prompts", true}}}});
  const std::string p = r["examples"][0]["prompt"];
  EXPECT_EQ(p.rfind("Please determine the type of the question below.", 0), 0u);
  EXPECT_EQ(p.find("[INST]"), std::string::npos);
  EXPECT_EQ(r["settings"]["resolved"]["chat_template"], "none (excluded subset)");
  for (const char* s : {"trec", "triviaqa", "samsum", "lcc", "repobench-p"}) EXPECT_FALSE(longbench::uses_chat_template(s)) << s;
  for (const char* s : {"qasper", "passage_count", "gov_report"}) EXPECT_TRUE(longbench::uses_chat_template(s)) << s;
}

TEST(LongBenchPrompt, FormatFollowsPythonStrFormat) {
  datasets::JsonRecord r{"x.jsonl", 7, {{"context", "C {x}"}, {"input", "I"}, {"n", 3}}};
  EXPECT_EQ(longbench::format_prompt("a {context} {{b}} {input}", r), "a C {x} {b} I");
  EXPECT_EQ(error_of([&] { longbench::format_prompt("{missing}", r); }), "x.jsonl:7: field 'missing': missing");
  EXPECT_EQ(error_of([&] { longbench::format_prompt("{n}", r); }), "x.jsonl:7: field 'n': expected a string, got number 3");
  EXPECT_NE(error_of([&] { longbench::format_prompt("a { b", r); }).find("single '{'"), std::string::npos);
}

// pred.py on a known example: qasper line 1 with stories260K's tokenizer.
TEST(LongBenchTruncation, MiddleOfTheTokenisedPromptAsPredPy) {
  const auto records = datasets::read_jsonl(shared_data("longbench/qasper.jsonl"), 1);
  const std::string tmpl = nlohmann::json::parse(read_file(shared_data("longbench_ref/dataset2prompt.json")))["qasper"];
  const std::string full = longbench::format_prompt(tmpl, records[0]);
  const std::vector<int> ids = tokenizer().encode(full, true);
  ASSERT_GT(ids.size(), 2000u);
  const int64_t max_length = 512 - 128;  // the default for a 512-token model and qasper's 128 new tokens
  longbench::PreparedPrompt p = longbench::prepare_prompt(tokenizer(), "qasper", tmpl, records[0], max_length, "none");
  EXPECT_TRUE(p.truncated);
  EXPECT_EQ(p.original_tokens, static_cast<int64_t>(ids.size()));
  // half = int(max_length / 2) tokens from each end, BOS (a special token) skipped in decode.
  const std::string head = tokenizer().decode({ids.begin(), ids.begin() + 192});
  const std::string tail = tokenizer().decode({ids.end() - 192, ids.end()});
  EXPECT_EQ(p.text, head + tail);
  EXPECT_EQ(p.text.rfind("You are given a scientific article and a question.", 0), 0u);
  const std::string end = "Question: How is the ground truth for fake news established?\n\nAnswer:";
  EXPECT_EQ(p.text.substr(p.text.size() - end.size()), end);
  // Re-tokenised, as pred.py does: within a couple of tokens of max_length.
  const auto re = tokenizer().encode(p.text, true);
  EXPECT_LE(std::abs(static_cast<int64_t>(re.size()) - max_length), 2);
  // An odd max_length keeps 2 * (max_length / 2) tokens.
  TruncatedText odd = truncate_middle(tokenizer(), full, 101);
  EXPECT_EQ(odd.text, tokenizer().decode({ids.begin(), ids.begin() + 50}) + tokenizer().decode({ids.end() - 50, ids.end()}));
  // A prompt that fits is unchanged.
  EXPECT_EQ(truncate_middle(tokenizer(), "short", 64).text, "short");
}

TEST(LongBenchTruncation, MaxLengthsFollowTheReference) {
  // Default: context - dataset2maxlen - chat template tokens.
  EXPECT_EQ(longbench::default_max_length(tokenizer(), 512, 64, "none", "trec"), 448);
  const int64_t inst = static_cast<int64_t>(tokenizer().encode("[INST][/INST]", false).size());
  EXPECT_EQ(longbench::default_max_length(tokenizer(), 512, 128, "llama2", "qasper"), 384 - inst);
  EXPECT_EQ(longbench::default_max_length(tokenizer(), 512, 64, "llama2", "trec"), 448);  // excluded: no template
  EXPECT_NE(error_of([] { longbench::default_max_length(tokenizer(), 512, 512, "none", "gov_report"); }).find("no room"),
            std::string::npos);
  // The recorded settings of a run: max_new_tokens from dataset2maxlen, max_length from model2maxlen.
  nlohmann::json r = run_task({{"task", "longbench/trec"}, {"limit", 1}});
  EXPECT_EQ(r["settings"]["resolved"]["max_new_tokens"], 64);
  EXPECT_EQ(r["settings"]["resolved"]["max_length"], 448);
  EXPECT_LE(r["examples"][0]["prompt_tokens"].get<int64_t>(), 448 + 2);
  EXPECT_TRUE(r["examples"][0]["truncated"].get<bool>());
  r = passage_count({{"max_length_model", "llama2-7b-chat-4k"}, {"max_new_tokens", 1}});
  EXPECT_EQ(r["settings"]["resolved"]["max_length"], 3500);
  EXPECT_EQ(r["settings"]["resolved"]["max_new_tokens"], 1);
}

TEST(ChatTemplates, ExactStrings) {
  EXPECT_EQ(apply_chat_template("none", "Hi"), "Hi");
  EXPECT_EQ(apply_chat_template("llama2", "Hi"), "[INST]Hi[/INST]");
  EXPECT_EQ(apply_chat_template("mistral", "Hi"), "[INST] Hi [/INST]");
  EXPECT_EQ(apply_chat_template("llama3", " Hi\n"),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(apply_chat_template("qwen", "Hi"),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(apply_chat_template("vicuna", "Hi"),
            "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, detailed, "
            "and polite answers to the user's questions. USER: Hi ASSISTANT:");
  EXPECT_THROW(apply_chat_template("chatml2", "Hi"), std::invalid_argument);
}

// Every English subset end to end on stories260K: one example each, eval.py's metric and rounding.
TEST(LongBenchRun, AllSubsetsEndToEnd) {
  std::vector<std::string> subsets = longbench::english_subsets();
  subsets.erase(std::find(subsets.begin(), subsets.end(), "passage_count"));  // no staged sample
  nlohmann::json r = run_task({{"task", "longbench/all"}, {"limit", 1},
                               {"task_params", {{"subsets", subsets}, {"max_new_tokens", 4}}}});
  ASSERT_EQ(r["examples"].size(), subsets.size());
  double sum = 0;
  for (size_t i = 0; i < subsets.size(); ++i) {
    const auto& e = r["examples"][i];
    const std::string s = subsets[i];
    EXPECT_EQ(e["subset"], s);
    std::vector<std::string> answers = e["references"];
    const auto& m = r["metrics"][s];
    EXPECT_EQ(m["metric"], metrics::lb_metric_for_dataset(s));
    // The subset score is eval.py's scorer over its predictions.
    const auto rec = datasets::read_jsonl(shared_data("longbench/" + s + ".jsonl"), 1)[0];
    std::vector<std::string> classes = rec.value["all_classes"].is_null() ? std::vector<std::string>{}
                                                                          : rec.string_list_field("all_classes");
    auto agg = metrics::lb_scorer(s, {e["prediction"].get<std::string>()}, {answers}, classes);
    EXPECT_DOUBLE_EQ(m["score"].get<double>(), agg.score) << s;
    EXPECT_DOUBLE_EQ(e["metrics"]["score"].get<double>(), agg.per_example[0]) << s;
    EXPECT_LE(e["prompt_tokens"].get<int64_t>() + 4, 512 + 2) << s;  // truncated to fit the 512 context
    sum += agg.score;
  }
  EXPECT_NEAR(r["metrics"]["average"].get<double>(), sum / subsets.size(), 1e-12);
  EXPECT_TRUE(r["metrics"].contains("category_code"));
  EXPECT_FALSE(r["metrics"].contains("category_synthetic"));  // passage_count did not run
}

TEST(LongBenchRun, PassageCountFixtureIsScoredByCountScore) {
  nlohmann::json r = passage_count({{"max_new_tokens", 3}}, 2);
  ASSERT_EQ(r["examples"].size(), 2u);
  std::vector<std::string> preds;
  std::vector<std::vector<std::string>> answers;
  for (const auto& e : r["examples"]) {
    preds.push_back(e["prediction"]);
    answers.push_back(e["references"]);
  }
  EXPECT_EQ(answers[0], std::vector<std::string>{"3"});
  EXPECT_EQ(r["metrics"]["metric"], "count_score");
  EXPECT_DOUBLE_EQ(r["metrics"]["score"].get<double>(), metrics::lb_scorer("passage_count", preds, answers, {}).score);
}

TEST(LongBenchRun, SamsumStopsAtNewlineAfterAtLeastOneToken) {
  nlohmann::json r = run_task({{"task", "longbench/samsum"}, {"limit", 2}, {"task_params", {{"max_new_tokens", 40}}}});
  for (const auto& e : r["examples"]) {
    const std::string p = e["prediction"];
    EXPECT_EQ(p.find('\n'), std::string::npos) << p;
  }
  EXPECT_EQ(r["settings"]["resolved"]["decoding"]["min_new_tokens"], 1);
  EXPECT_EQ(r["settings"]["resolved"]["decoding"]["stop_token_ids"].size(), 1u);
}

// The generation change behind samsum's rule: extra stop ids, masked until min_new_tokens exist.
TEST(LongBenchRun, StopTokensAreMaskedUntilMinNewTokens) {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model(loaded.config, loaded.weights);
  TaskContext ctx;
  ctx.model = &model;
  ctx.tokenizer = &tokenizer();
  const std::vector<int64_t> prompt = encode_prompt(ctx, "Once upon a time, there was a little girl");
  DecodingSettings free_run;
  free_run.max_new_tokens = 3;
  const Completion greedy = complete(ctx, prompt, free_run);
  ASSERT_EQ(greedy.tokens.size(), 3u);
  DecodingSettings stop = free_run;
  stop.stop_token_ids = {greedy.tokens[0]};
  EXPECT_TRUE(complete(ctx, prompt, stop).tokens.empty());  // the first greedy token stops at once
  stop.min_new_tokens = 1;
  const Completion masked = complete(ctx, prompt, stop);
  ASSERT_FALSE(masked.tokens.empty());
  EXPECT_NE(masked.tokens[0], greedy.tokens[0]);  // masked: the runner-up is taken
}

TEST(LongBenchRun, LongBenchEBucketsByLength) {
  nlohmann::json r = passage_count({{"max_new_tokens", 2}, {"longbench_e", true}}, 2);
  // Both fixture records are far below 4k words: all in the first bucket, the others empty (NaN in eval.py).
  EXPECT_DOUBLE_EQ(r["metrics"]["0-4k"].get<double>(), r["metrics"]["score"].get<double>());
  EXPECT_TRUE(r["metrics"]["4-8k"].is_null());
  EXPECT_TRUE(r["metrics"]["8k+"].is_null());
}

TEST(LongBenchData, MalformedRecordsNameFileAndLine) {
  ScratchDir dir("longbench_bad");
  const std::string good = read_file(fixture("longbench/passage_count.jsonl"));
  const std::string first = good.substr(0, good.find('\n') + 1);
  const std::string broken = dir.write("broken.jsonl", first + "{\"input\": \"\", \"context\": \n");
  EXPECT_EQ(error_of([&] {
              run_task({{"task", "longbench/passage_count"}, {"task_params", {{"data_file", broken}, {"max_new_tokens", 1}}}});
            }).rfind(broken + ":2: invalid JSON", 0),
            0u);
  nlohmann::json rec = nlohmann::json::parse(first);
  rec.erase("answers");
  const std::string missing = dir.write("missing.jsonl", "\n" + rec.dump() + "\n");
  EXPECT_EQ(error_of([&] {
              run_task({{"task", "longbench/passage_count"}, {"task_params", {{"data_file", missing}, {"max_new_tokens", 1}}}});
            }),
            missing + ":2: field 'answers': missing");

  // An empty answers list would score 0.0 silently; it stops before any generation.
  rec = nlohmann::json::parse(first);
  rec["answers"] = nlohmann::json::array();
  const std::string empty = dir.write("empty.jsonl", first + rec.dump() + "\n");
  EXPECT_EQ(error_of([&] {
              run_task({{"task", "longbench/passage_count"}, {"task_params", {{"data_file", empty}, {"max_new_tokens", 1}}}});
            }),
            empty + ":2: field 'answers': empty list (a record needs at least one answer to be scored)");
  // Classification needs its classes: trec with "all_classes": [] or null.
  for (const nlohmann::json& classes : {nlohmann::json::array(), nlohmann::json()}) {
    rec = nlohmann::json::parse(first);
    rec["all_classes"] = classes;
    const std::string trec = dir.write("trec.jsonl", rec.dump() + "\n");
    EXPECT_EQ(error_of([&] {
                run_task({{"task", "longbench/trec"}, {"task_params", {{"data_file", trec}, {"max_new_tokens", 1}}}});
              }),
              trec + ":1: field 'all_classes': must be a non-empty list of strings (classification_score matches the "
                     "prediction against the classes)")
        << classes.dump();
  }
}

TEST(LongBenchRegistry, ListsTheSixteenEnglishSubsetsAndAll) {
  const auto names = known_task_names();
  for (const auto& s : longbench::english_subsets())
    EXPECT_NE(std::find(names.begin(), names.end(), "longbench/" + s), names.end()) << s;
  EXPECT_NE(std::find(names.begin(), names.end(), "longbench/all"), names.end());
  EXPECT_NE(error_of([] { make_task("longbench/dureader"); }).find("Chinese subsets are not supported"), std::string::npos);
  EXPECT_EQ(longbench::english_subsets().size(), 16u);
  // The job id covers the data and the reference configuration the prompts come from.
  const nlohmann::json c = job_checksums({{"task", "longbench/qasper"}});
  EXPECT_EQ(c["dataset"].get<std::string>().size(), 64u);
  EXPECT_NE(c["dataset"], job_checksums({{"task", "longbench/trec"}})["dataset"]);
  EXPECT_NE(job_checksums({{"task", "mmlu/stem"}})["dataset"], job_checksums({{"task", "mmlu/anatomy"}})["dataset"]);
}

}  // namespace
}  // namespace kvbench::tasks
