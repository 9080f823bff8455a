// longbench_v2 end to end on stories260K over real LongBench-v2 items (contexts cut, see
// data/longbench_v2/PROVENANCE.md): the prompt fed is pred.py's (recorded by running it,
// scripts/longbench_v2_reference/record.py), the answer extract_answer's, the accuracies result.py's.
#include <gtest/gtest.h>

#include "metrics/longbench_v2.hpp"
#include "models/model_loader.hpp"
#include "task_fixtures.hpp"
#include "tasks/longbench_v2_prompt.hpp"
#include "tasks/run_task.hpp"
#include "tokenizers/tokenizer.hpp"

#include <map>

namespace kvbench::tasks {
namespace {

using namespace testing;

nlohmann::json recorded_reference() { return nlohmann::json::parse(read_file(fixture("longbench_v2/reference_cases.json"))); }
std::string bundled_template(const std::string& name) { return read_file(std::string(KVBENCH_TESTS_DIR) + "/../data/longbench_v2/prompts/" + name + ".txt"); }

// The chained replacement, markers inside values included.
TEST(LongBenchV2Prompt, ReplacesAsPredPysChain) {
  const nlohmann::json c = recorded_reference()["prompts"]["synthetic_placeholder_case"];
  const nlohmann::json& item = c["item"];
  EXPECT_EQ(longbench_v2_prompt(bundled_template("0shot"), item, item["context"], "x"), c["0shot"].get<std::string>());
  EXPECT_EQ(longbench_v2_prompt(bundled_template("0shot_no_context"), item, item["context"], "x"), c["no_context"].get<std::string>());
}

// The fixture's items that pred.py's prompts were recorded for, in a data.json of their own.
std::string recorded_items_file(const ScratchDir& dir) {
  const nlohmann::json all = nlohmann::json::parse(read_file(fixture("longbench_v2/data_fixture.json")));
  nlohmann::json chosen = nlohmann::json::array();
  const nlohmann::json ref = recorded_reference();
  for (const auto& r : ref["prompts"]["items"])
    for (const auto& item : all)
      if (item["_id"] == r["_id"]) chosen.push_back(item);
  return dir.write("data.json", chosen.dump(1));
}

nlohmann::json run_longbench_v2(const nlohmann::json& params, int64_t limit = 2) {
  ScratchDir dir("longbench_v2");
  nlohmann::json p = params;
  p["data_file"] = recorded_items_file(dir);
  p["chat_template"] = "none";
  p["temperature"] = 0.0;
  p["max_length"] = 1000000;  // pred.py's recording cut nothing either
  p["record_prompts"] = true;
  return run_task({{"task", "longbench_v2"}, {"limit", limit}, {"task_params", p}});
}

TEST(LongBenchV2Task, FeedsPredPysPromptsAndScoresAsResultPy) {
  const nlohmann::json ref = recorded_reference()["prompts"]["items"];
  const nlohmann::json r = run_longbench_v2(nlohmann::json::object());
  ASSERT_EQ(r["examples"].size(), 2u);
  std::vector<metrics::LongBenchV2Judged> judged;
  for (std::size_t i = 0; i < 2; ++i) {
    const nlohmann::json& e = r["examples"][i];
    EXPECT_EQ(e["id"], ref[i]["_id"]);
    EXPECT_EQ(e["prompt"].get<std::string>(), ref[i]["modes"]["0shot"]["prompt"].get<std::string>());
    const std::optional<char> pred = metrics::longbench_v2_extract_answer(e["prediction"].get<std::string>());
    EXPECT_EQ(e["pred"], pred ? nlohmann::json(std::string(1, *pred)) : nlohmann::json(nullptr));
    if (e.contains("dropped")) continue;
    judged.push_back({e["difficulty"], e["length"], pred && std::string(1, *pred) == e["references"][0], !pred});
  }
  const metrics::LongBenchV2Accuracy a = metrics::longbench_v2_accuracy(judged, false);
  EXPECT_EQ(r["metrics"]["overall"], a.overall ? nlohmann::json(*a.overall) : nlohmann::json(nullptr));
}

// cot: the first answer (up to 1024 tokens) becomes $COT$ of the cot_ans template, whose prompt
// is the one fed last; no_context drops the document.
TEST(LongBenchV2Task, CotFeedsItsFirstAnswerBackAndNoContextDropsTheDocument) {
  const nlohmann::json ref = recorded_reference()["prompts"]["items"][0]["modes"];
  const nlohmann::json c = run_longbench_v2({{"cot", true}, {"cot_max_new_tokens", 8}}, 1);
  const nlohmann::json& e = c["examples"][0];
  if (!e.contains("response_cot")) GTEST_SKIP() << "the model's first answer was empty: pred.py drops the question";
  std::string expected = ref["cot"]["cot_ans_prompt"];
  const std::string recorded_reply = ref["cot"]["cot_reply"];
  expected.replace(expected.find(recorded_reply), recorded_reply.size(), e["response_cot"].get<std::string>());
  EXPECT_EQ(e["prompt"].get<std::string>(), expected);
  const nlohmann::json n = run_longbench_v2({{"no_context", true}}, 1);
  EXPECT_EQ(n["examples"][0]["prompt"].get<std::string>(), ref["no_context"]["prompt"].get<std::string>());
  EXPECT_NE(error_of([] { run_longbench_v2({{"cot", true}, {"no_context", true}}); }).find("choose one"), std::string::npos);
}

// kvpress's pipeline: the item as kvpress's 0shot row (recorded by running its
// create_huggingface_dataset.py: scripts/longbench_v2_reference/record_kvpress.py), the context
// (BOS + context, stories260K has no template) compressed once, question + "\n" after it, 16 new
// tokens, calculate_metrics.py's score and means. (With a 512-piece vocabulary the question and its
// four choices take more than the model's 512 tokens: the context is given 200.)
TEST(LongBenchV2Task, KvpressPipelineFeedsKvpresssRowsAndScoresAsItsCalculateMetrics) {
  const nlohmann::json rows = nlohmann::json::parse(read_file(fixture("longbench_v2/kvpress_reference.json")))["rows"];
  const models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  const nlohmann::json r = run_task({{"task", "longbench_v2"}, {"limit", 4}, {"policy", "snapkv"}, {"budget", "ratio:0.5"},
                                     {"task_params", {{"pipeline", "kvpress"}, {"data_file", fixture("longbench_v2/data_fixture.json")},
                                                      {"max_context_length", 200}, {"record_prompts", true}}}});
  ASSERT_EQ(r["examples"].size(), 4u);
  std::map<std::string, std::pair<double, int>> by;
  for (std::size_t i = 0; i < 4; ++i) {
    const nlohmann::json& e = r["examples"][i];
    EXPECT_EQ(e["id"], rows[i]["_id"]);
    const std::string question = rows[i]["question"].get<std::string>() + "\n";
    const std::vector<int> ids = tok.encode(rows[i]["context"].get<std::string>(), true);
    const int64_t kept = std::min<int64_t>(static_cast<int64_t>(ids.size()), 200);  // the question alone outgrows stories260K's 512 tokens
    EXPECT_EQ(e["prompt"].get<std::string>(), tok.decode(std::vector<int>(ids.begin(), ids.begin() + kept)) + question) << i;
    const double correct = metrics::longbench_v2_kvpress_correct(e["prediction"], e["references"][0]) ? 1.0 : 0.0;
    EXPECT_EQ(e["metrics"]["correct"].get<double>(), correct);
    for (const std::string key : {std::string("average"), e["difficulty"].get<std::string>(), e["length"].get<std::string>()})
      by[key].first += correct, ++by[key].second;
  }
  for (const auto& [key, sum_count] : by) EXPECT_DOUBLE_EQ(r["metrics"][key].get<double>(), sum_count.first / sum_count.second) << key;
  EXPECT_EQ(r["metrics"]["prefills"], 4);
  EXPECT_EQ(r["settings"]["resolved"]["max_new_tokens"], 16);
  EXPECT_NE(error_of([] { run_task({{"task", "longbench_v2"}, {"task_params", {{"pipeline", "kvpress"}, {"cot", true}}}}); }).find("cot is pred.py's"),
            std::string::npos);
}

}  // namespace
}  // namespace kvbench::tasks
