// ruler/<task> end to end on stories260K: the prompt each job feeds is the official script's
// sample (tests/fixtures/ruler/stories260K/<max_seq_length>/, recorded with RULER's prepare.py and
// stories260K's tokenizer) plus its answer prefix, the references its outputs, and the score
// RULER's metric over the prediction. Only fwe fits the model's 512 tokens: RULER's smallest
// haystacks (5 noise sentences, 500 essay words, 10 documents) need more with a 512-piece
// vocabulary, so the others run at the shortest length RULER generates for it, past the trained
// context (a warning; the pipeline, not the model's answers, is under test).
#include <gtest/gtest.h>

#include <map>

#include "metrics/ruler_metrics.hpp"
#include "task_fixtures.hpp"
#include "models/model_loader.hpp"
#include "tasks/run_task.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;

// The shortest max_seq_length at which RULER's script generates each task with stories260K's tokenizer.
const std::map<std::string, int> kLength = {
    {"niah_single_1", 1024},   {"niah_single_2", 4096},   {"niah_single_3", 4096},   {"niah_multikey_1", 4096},
    {"niah_multikey_2", 1024}, {"niah_multikey_3", 1024}, {"niah_multivalue", 4096}, {"niah_multiquery", 4096},
    {"cwe", 2048},             {"fwe", 511},              {"qa_1", 4096},            {"qa_2", 8192}};

nlohmann::json first_recorded(const std::string& file) {
  const std::string text = read_file(fixture("ruler/" + file));
  return nlohmann::json::parse(text.substr(0, text.find('\n')));
}

nlohmann::json qa_files(const std::string& task) {
  if (task == "qa_1") return {{"squad_file", fixture("ruler/squad_fixture.json")}};
  if (task == "qa_2") return {{"hotpotqa_file", fixture("ruler/hotpotqa_fixture.json")}};
  return nlohmann::json::object();
}

class RulerTaskEndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(RulerTaskEndToEnd, FeedsTheOfficialSampleAndScoresWithRulersMetric) {
  const std::string task = GetParam();
  const int length = kLength.at(task);
  const nlohmann::json expected =
      first_recorded("stories260K/" + std::to_string(length) + "/" + (task.rfind("qa", 0) == 0 ? task + "_fixture" : task) + ".jsonl");
  nlohmann::json params = qa_files(task);
  params["record_prompts"] = true;
  params["max_seq_length"] = length;
  const nlohmann::json r = run_task({{"task", "ruler/" + task}, {"limit", 1}, {"task_params", params}});
  ASSERT_EQ(r["examples"].size(), 1u);
  const nlohmann::json& e = r["examples"][0];
  EXPECT_EQ(e["prompt"].get<std::string>(), expected["input"].get<std::string>() + expected["answer_prefix"].get<std::string>());
  EXPECT_EQ(e["references"], expected["outputs"]);
  const bool part = task.rfind("qa", 0) == 0;
  const std::string pred = metrics::ruler_postprocess(e["prediction"].get<std::string>(), metrics::RulerPostprocess::ruler);
  const auto refs = expected["outputs"].get<std::vector<std::string>>();
  const double v = part ? metrics::ruler_string_match_part(pred, refs) : metrics::ruler_string_match_all(pred, refs);
  EXPECT_EQ(e["metrics"][part ? "string_match_part" : "string_match_all"].get<double>(), v);
  EXPECT_EQ(r["metrics"]["string_match"].get<double>(), metrics::ruler_task_score({v}));
  EXPECT_EQ(r["settings"]["resolved"]["max_seq_length"], length) << r["settings"].dump();
}

INSTANTIATE_TEST_SUITE_P(Stories260K, RulerTaskEndToEnd,
                         ::testing::Values("niah_single_1", "niah_single_2", "niah_single_3", "niah_multikey_1",
                                           "niah_multikey_2", "niah_multikey_3", "niah_multivalue", "niah_multiquery",
                                           "cwe", "fwe", "qa_1", "qa_2"));

// RULER's vt prepends an in-context example made to fit 500 tokens; with stories260K's tokenizer
// nothing fits it, where the official script retries forever. The max_seq_length default (the
// model's context less its BOS) shows in the message. A vt file generated for Llama-3 runs.
TEST(RulerTask, VariableTrackingThatCannotFitIsAnErrorNotAHang) {
  const std::string err = error_of([] { run_task({{"task", "ruler/vt"}, {"limit", 1}}); });
  EXPECT_NE(err.find("RULER vt: no sample fits max_seq_length 500 even with the smallest haystack (5) after 1000 draws"), std::string::npos) << err;
  const nlohmann::json expected = first_recorded("llama3/1024/vt.jsonl");
  const nlohmann::json r = run_task({{"task", "ruler/vt"}, {"limit", 1},
                                     {"task_params", {{"data_file", fixture("ruler/llama3/1024/vt.jsonl")}, {"record_prompts", true}}}});
  EXPECT_EQ(r["examples"][0]["prompt"].get<std::string>(), expected["input"].get<std::string>() + expected["answer_prefix"].get<std::string>());
  EXPECT_EQ(r["examples"][0]["references"], expected["outputs"]);
}

// A user's pre-generated files run unchanged: RULER's manifest, and kvpress's rows (all tasks in
// one file, each with its own max_new_tokens).
TEST(RulerTask, ReadsRulersManifestAndKvpressRows) {
  const std::string manifest = fixture("ruler/stories260K/1024/niah_single_1.jsonl");
  const nlohmann::json expected = first_recorded("stories260K/1024/niah_single_1.jsonl");
  const nlohmann::json a = run_task({{"task", "ruler/niah_single_1"}, {"limit", 1}, {"task_params", {{"data_file", manifest}, {"record_prompts", true}}}});
  EXPECT_EQ(a["examples"][0]["prompt"].get<std::string>(), expected["input"].get<std::string>() + expected["answer_prefix"].get<std::string>());

  ScratchDir dir("ruler_rows");
  const std::string input = expected["input"];
  const size_t q = input.rfind("What is the special magic");
  const nlohmann::json row = {{"context", input.substr(0, q)}, {"question", input.substr(q)}, {"answer_prefix", expected["answer_prefix"]},
                              {"answer", expected["outputs"]}, {"task", "niah_single_1"}, {"max_new_tokens", 3}};
  nlohmann::json other = row;
  other["task"] = "vt";
  const std::string rows = dir.path() + "/ruler.jsonl";
  std::ofstream(rows) << other.dump() << "\n" << row.dump() << "\n";
  const nlohmann::json b = run_task({{"task", "ruler/niah_single_1"}, {"task_params", {{"data_file", rows}, {"record_prompts", true}}}});
  ASSERT_EQ(b["examples"].size(), 1u);  // the vt row is another task's
  EXPECT_EQ(b["examples"][0]["prompt"], a["examples"][0]["prompt"]);
  EXPECT_EQ(b["examples"][0]["prediction"].get<std::string>(),
            a["examples"][0]["prediction"].get<std::string>().substr(0, b["examples"][0]["prediction"].get<std::string>().size()));
  EXPECT_LT(b["examples"][0]["prediction"].get<std::string>().size(), a["examples"][0]["prediction"].get<std::string>().size());

  nlohmann::json bad = row;
  bad["contexts"] = "typo";
  std::ofstream(rows) << bad.dump() << "\n";
  const std::string err = error_of([&] { run_task({{"task", "ruler/niah_single_1"}, {"task_params", {{"data_file", rows}}}}); });
  EXPECT_NE(err.find(rows + ":1: field 'contexts': not a field of kvpress's RULER dataset"), std::string::npos) << err;
}

TEST(RulerTask, ParametersThatDoNothingAreRefused) {
  EXPECT_NE(error_of([] { run_task({{"task", "ruler/niah_single_1"}, {"task_params", {{"squad_file", "x.json"}}}}); })
                .find("squad_file is read by qa_1 only"),
            std::string::npos);
  EXPECT_NE(error_of([] { run_task({{"task", "ruler/cwe"}, {"task_params", {{"data_file", "x.jsonl"}, {"num_samples", 3}}}}); })
                .find("num_samples shapes generated samples"),
            std::string::npos);
}

// kvpress's protocol: the sample split as kvpress's create_huggingface_dataset.py splits RULER's
// input (the question starts at "What is the special magic", the answer prefix at "The special
// magic", so the space between them ends the question), then pipeline.py's assembly without a chat
// template: BOS + context compressed, question + "\n" + answer prefix after it. query_aware moves
// the question into the compressed part: the same text, cut elsewhere.
TEST(RulerTask, KvpressPipelineSplitsTheSampleAsKvpressDoes) {
  const nlohmann::json expected = first_recorded("stories260K/1024/niah_single_1.jsonl");
  const std::string answer_prefix = expected["answer_prefix"];
  ASSERT_EQ(answer_prefix.substr(0, 1), " ");
  const std::string kvpress_prompt = expected["input"].get<std::string>() + " \n" + answer_prefix.substr(1);
  nlohmann::json params = {{"max_seq_length", 1024}, {"record_prompts", true}, {"pipeline", "kvpress"}};
  const nlohmann::json r = run_task({{"task", "ruler/niah_single_1"}, {"limit", 1}, {"policy", "knorm"}, {"budget", "256"}, {"task_params", params}});
  EXPECT_EQ(r["examples"][0]["prompt"].get<std::string>(), kvpress_prompt);
  EXPECT_EQ(r["metrics"]["prefills"], 1);
  EXPECT_EQ(r["settings"]["resolved"]["postprocess"], "kvpress");
  EXPECT_EQ(r["settings"]["resolved"]["chat_template"], "none");  // stories260K's tokenizer has no template
  params["query_aware"] = true;
  const nlohmann::json q = run_task({{"task", "ruler/niah_single_1"}, {"limit", 1}, {"policy", "knorm"}, {"budget", "256"}, {"task_params", params}});
  EXPECT_EQ(q["examples"][0]["prompt"].get<std::string>(), kvpress_prompt);
  EXPECT_NE(error_of([] { run_task({{"task", "ruler/fwe"}, {"task_params", {{"query_aware", true}}}}); }).find("kvpress pipeline only"),
            std::string::npos);
}

// FinchPress, as kvpress's evaluate.py runs it (query-aware only): the delimiter sits between the
// context and the question in the prompt's text; the two are tokenised apart as the tokenizer splits
// at a special token, and the delimiter is removed: BOS + context, then the question, fed as one
// prompt, then "\n" + answer prefix. Without query_aware the policy refuses.
TEST(RulerTask, FinchGetsTheQuestionOfAQueryAwarePrompt) {
  const nlohmann::json expected = first_recorded("stories260K/1024/niah_single_1.jsonl");
  const std::string input = expected["input"], answer_prefix = expected["answer_prefix"];
  const size_t q = input.rfind("What is the special magic");
  ASSERT_NE(q, std::string::npos);
  nlohmann::json params = {{"max_seq_length", 1024}, {"record_prompts", true}, {"pipeline", "kvpress"}, {"query_aware", true}};
  const nlohmann::json job = {{"task", "ruler/niah_single_1"}, {"limit", 1}, {"policy", "kvpress:finch"}, {"budget", "ratio:0.5"}, {"task_params", params}};
  const nlohmann::json r = run_task(job);
  const std::string question = input.substr(q) + " ";  // kvpress's split: the space before the answer prefix ends it
  EXPECT_EQ(r["examples"][0]["prompt"].get<std::string>(), input.substr(0, q) + "<|finch_sep|>" + question + "\n" + answer_prefix.substr(1));
  const models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  const size_t fed = tok.encode(input.substr(0, q), true).size() + tok.encode(question, false).size() + tok.encode("\n" + answer_prefix.substr(1), false).size();
  EXPECT_EQ(r["examples"][0]["prompt_tokens"].get<size_t>(), fed);
  EXPECT_NE(fed, tok.encode(input + " ", true).size() + tok.encode("\n" + answer_prefix.substr(1), false).size())
      << "the split must show in the tokens for this test to mean much";
  nlohmann::json unaware = job;
  unaware["task_params"]["query_aware"] = false;
  EXPECT_NE(error_of([&] { run_task(unaware); }).find("query_aware: true"), std::string::npos);
}

// kvpress's compress-once protocol: the rows that share a context are answered from one prefill
// (grouped, in order of first appearance), each answer what a job with that row alone gives: with
// the full cache and with a compressing policy. Under the decode protocol (eviction while
// answering) every question prefills its context again.
TEST(RulerTask, KvpressAnswersEveryQuestionOfAContextFromOnePrefill) {
  const nlohmann::json expected = first_recorded("stories260K/1024/niah_single_1.jsonl");
  const std::string input = expected["input"];
  const size_t q = input.rfind("What is the special magic");
  const std::string context = input.substr(0, q), other_context = input.substr(input.find(". ") + 2, q - input.find(". ") - 2);
  auto row = [&](const std::string& c, const std::string& question) {
    return nlohmann::json{{"context", c}, {"question", question}, {"answer_prefix", expected["answer_prefix"]},
                          {"answer", expected["outputs"]}, {"task", "niah_single_1"}, {"max_new_tokens", 6}};
  };
  const std::vector<nlohmann::json> rows{row(context, input.substr(q)), row(other_context, input.substr(q)),
                                         row(context, "What is the special magic number for zebra mentioned in the provided text?")};
  ScratchDir dir("ruler_once");
  auto write = [&](const std::string& name, const std::vector<nlohmann::json>& lines) {
    std::ofstream out(dir.path() + "/" + name);
    for (const auto& l : lines) out << l.dump() << "\n";
    return dir.path() + "/" + name;
  };
  const std::string all = write("all.jsonl", rows);
  for (const auto& [policy, protocol] : std::vector<std::pair<std::string, std::string>>{
           {"full", "oneshot"}, {"snapkv", "oneshot"}, {"h2o", "decode"}}) {
    auto job = [&](const std::string& file) {
      return run_task({{"task", "ruler/niah_single_1"}, {"policy", policy}, {"budget", "64"}, {"protocol", protocol},
                       {"task_params", {{"data_file", file}, {"pipeline", "kvpress"}}}});
    };
    const nlohmann::json r = job(all);
    EXPECT_EQ(r["metrics"]["prefills"], protocol == "oneshot" ? 2 : 3) << policy;
    ASSERT_EQ(r["examples"].size(), 3u);
    const std::vector<size_t> run_order{0, 2, 1};  // the two questions on `context` together
    for (size_t i = 0; i < 3; ++i) {
      const nlohmann::json alone = job(write("row" + std::to_string(i) + ".jsonl", {rows[run_order[i]]}));
      EXPECT_EQ(r["examples"][i]["prediction"], alone["examples"][0]["prediction"]) << policy << " row " << run_order[i];
      EXPECT_EQ(r["examples"][i]["id"], std::to_string(run_order[i]));
    }
  }
}

// ruler/all: the chosen tasks in order, each example tagged with its task, `average` the mean of
// their string_match; a file without the task of each row is refused there.
TEST(RulerTask, AllRunsTheChosenTasksAndAveragesTheirScores) {
  const nlohmann::json r = run_task({{"task", "ruler/all"}, {"limit", 1},
                                     {"task_params", {{"max_seq_length", 1024}, {"tasks", {"niah_multikey_3", "fwe"}}}}});
  ASSERT_EQ(r["examples"].size(), 2u);
  EXPECT_EQ(r["examples"][0]["task"], "niah_multikey_3");
  EXPECT_EQ(r["examples"][1]["task"], "fwe");
  const double a = r["metrics"]["niah_multikey_3"]["string_match"], b = r["metrics"]["fwe"]["string_match"];
  EXPECT_EQ(r["metrics"]["average"].get<double>(), (a + b) / 2);
  const std::string manifest = fixture("ruler/stories260K/1024/niah_single_1.jsonl");
  EXPECT_NE(error_of([&] { run_task({{"task", "ruler/all"}, {"task_params", {{"data_file", manifest}, {"tasks", {"niah_single_1"}}}}}); })
                .find("ruler/all: a RULER manifest holds one task"),
            std::string::npos);
}

}  // namespace
}  // namespace kvbench::tasks
