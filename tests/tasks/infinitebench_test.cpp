// infinitebench/<task>: prompts, ground truths and kvpress's rows against what the official code
// made of the fixture records (tests/fixtures/infinitebench/: prompts.json recorded by running
// InfiniteBench's create_prompt / get_answer / truncate_by_tokens, kvpress_rows.json by running
// kvpress's create_huggingface_dataset.py), then every task end to end on stories260K.
#include <gtest/gtest.h>

#include "datasets/jsonl_reader.hpp"
#include "metrics/infinitebench.hpp"
#include "models/model_loader.hpp"
#include "task_fixtures.hpp"
#include "tasks/infinitebench_prompt.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/run_task.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;

nlohmann::json recorded(const std::string& name) { return nlohmann::json::parse(read_file(fixture("infinitebench/" + name))); }

std::string data_file(const std::string& task) { return fixture("infinitebench/data/" + task + ".jsonl"); }

std::vector<infinitebench::Record> records(const std::string& task) {
  std::vector<infinitebench::Record> out;
  for (const auto& r : datasets::read_jsonl(data_file(task))) out.push_back(infinitebench::read_record(r, task));
  return out;
}

TEST(InfiniteBenchPrompt, EveryFamilyTaskAndRecordAsCreatePromptBuildsIt) {
  const nlohmann::json rec = recorded("prompts.json");
  int compared = 0, refused = 0;
  for (const auto& [family, tasks] : rec["prompts"].items()) {
    for (const auto& [task, prompts] : tasks.items()) {
      const auto rs = records(task);
      ASSERT_EQ(rs.size(), prompts.size()) << task;
      for (size_t i = 0; i < rs.size(); ++i) {
        if (prompts[i].is_object()) {  // the official code raises KeyError: '<field>'
          const std::string key = prompts[i]["error"].get<std::string>().substr(std::string("KeyError: ").size());
          EXPECT_NE(error_of([&] { infinitebench::create_prompt(rs[i], task, family); }).find("KeyError: " + key), std::string::npos) << family << " " << task;
          ++refused;
        } else {
          EXPECT_EQ(infinitebench::create_prompt(rs[i], task, family), prompts[i].get<std::string>()) << family << " " << task << " " << i;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared + refused, 4 * 30);
  EXPECT_EQ(refused, 15);
  for (const auto& [alias, family] : rec["model_aliases"].items())  // yi and chatglm3 use yarn-mistral's templates
    EXPECT_EQ(infinitebench::create_prompt(records("passkey")[0], "passkey", alias), rec["prompts"]["yarn-mistral"]["passkey"][0]);
}

TEST(InfiniteBenchPrompt, GroundTruthIsGetAnswers) {
  const nlohmann::json rec = recorded("prompts.json");
  for (const auto& [task, answers] : rec["answers"].items()) {
    const auto rs = records(task);
    for (size_t i = 0; i < rs.size(); ++i) EXPECT_EQ(infinitebench::ground_truth(rs[i], task), answers[i]) << task << " " << i;
  }
}

TEST(InfiniteBenchPrompt, KvpressRowsAreCreateHuggingfaceDatasets) {
  const nlohmann::json rec = recorded("kvpress_rows.json");
  for (const auto& [task, rows] : rec["rows"].items()) {
    const auto rs = records(task);
    ASSERT_EQ(rs.size(), rows.size());
    for (size_t i = 0; i < rs.size(); ++i) {
      const infinitebench::KvpressRow row = infinitebench::kvpress_row(rs[i], task);
      EXPECT_EQ(row.context, rows[i]["context"].get<std::string>()) << task << " " << i;
      EXPECT_EQ(row.question, rows[i]["question"].get<std::string>()) << task << " " << i;
      EXPECT_EQ(row.answer_prefix, rows[i]["answer_prefix"].get<std::string>()) << task;
      EXPECT_EQ(nlohmann::json(row.answer), rows[i]["answer"]) << task << " " << i;
      EXPECT_EQ(row.max_new_tokens, rows[i]["max_new_tokens"].get<int64_t>()) << task;
    }
  }
}

// truncate_by_tokens with stories260K's sentencepiece model (BOS added, as the HF Llama tokenizer
// the official script loads): head and tail, always decoded back.
TEST(InfiniteBenchPrompt, TruncationIsTruncateByTokens) {
  const models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  const nlohmann::json rec = recorded("prompts.json");
  int compared = 0;
  for (const auto& t : rec["truncation_text"]) {
    if (t["tokenizer"] != "sp_bos") continue;
    const std::string prompt = rec["prompts"][t["prompt"][0].get<std::string>()][t["prompt"][1].get<std::string>()][t["prompt"][2].get<int>()];
    const TruncatedText cut = truncate_middle_infinitebench(tok, prompt, t["max_tokens"].get<int64_t>());
    EXPECT_EQ(cut.text, t["output"].get<std::string>()) << t["prompt"].dump() << " " << t["max_tokens"];
    EXPECT_EQ(cut.original_tokens, t["n_tokens_before"].get<int64_t>());
    ++compared;
  }
  EXPECT_GE(compared, 12);
}

TEST(InfiniteBenchPrompt, BadRecordsAreNamedByFileLineAndField) {
  ScratchDir dir("ib_bad");
  const std::string path = dir.path() + "/passkey.jsonl";
  std::ofstream(path) << R"({"id": 0, "context": "x", "input": "What is the pass key?", "answer": ["1"], "options": [], "length": 3})" << "\n";
  const std::string err = error_of([&] { run_task({{"task", "infinitebench/passkey"}, {"task_params", {{"data_file", path}}}}); });
  EXPECT_NE(err.find(path + ":1: field 'length': not a field of InfiniteBench's files"), std::string::npos) << err;
  std::ofstream(path) << R"({"id": 0, "context": "x", "input": "q", "answer": ["Z"], "options": ["A1", "B1", "C1", "D1"]})" << "\n";
  const std::string choice = error_of([&] { run_task({{"task", "infinitebench/code_debug"}, {"task_params", {{"data_file", path}}}}); });
  EXPECT_NE(choice.find(path + ":1: field 'answer': infinitebench: the answer 'Z' is not one of the options"), std::string::npos) << choice;
  const std::string missing = error_of([] { run_task({{"task", "infinitebench/passkey"}}); });
  EXPECT_NE(missing.find("xinrongzhang2022/InfiniteBench"), std::string::npos) << missing;
}

// Every task on stories260K: the prompt fed is the official one cut to the model's 512 tokens, the
// score get_score_one's on the prediction.
TEST(InfiniteBenchTask, EveryTaskEndToEndOnStories260K) {
  const models::Tokenizer tok(models::load_model("stories260K").tokenizer_path);
  for (const std::string& task : metrics::infinitebench_tasks()) {
    const nlohmann::json r = run_task({{"task", "infinitebench/" + task}, {"limit", 1},
                                       {"task_params", {{"data_file", data_file(task)}, {"record_prompts", true}, {"max_new_tokens", 6}}}});
    ASSERT_EQ(r["examples"].size(), 1u) << task;
    const nlohmann::json& e = r["examples"][0];
    const auto rec = records(task)[0];
    const TruncatedText want = truncate_middle_infinitebench(tok, infinitebench::create_prompt(rec, task, "yarn-mistral"), 512);
    EXPECT_EQ(e["prompt"].get<std::string>(), want.text) << task;
    EXPECT_EQ(e["truncated"].get<bool>(), want.truncated) << task;
    EXPECT_EQ(e["metrics"]["score"].get<double>(),
              metrics::infinitebench_score_one(task, e["prediction"].get<std::string>(), infinitebench::ground_truth(rec, task), "yarn-mistral"))
        << task;
    EXPECT_EQ(r["metrics"]["score"], e["metrics"]["score"]);
  }
}

// kvpress's protocol: records 0 and 1 of longbook_qa_eng share their book, so three questions take
// two prefills, each answer what a job of that record alone gives.
TEST(InfiniteBenchTask, KvpressAnswersTheQuestionsOfOneBookFromOnePrefill) {
  auto job = [](const std::string& file, int64_t limit) {
    return run_task({{"task", "infinitebench/longbook_qa_eng"}, {"policy", "snapkv"}, {"budget", "64"}, {"limit", limit},
                     {"task_params", {{"data_file", file}, {"pipeline", "kvpress"}, {"max_new_tokens", 5}, {"max_context_length", 300}, {"record_prompts", true}}}});
  };
  const nlohmann::json all = job(data_file("longbook_qa_eng"), 0);
  EXPECT_EQ(all["metrics"]["prefills"], 2);
  ASSERT_EQ(all["examples"].size(), 3u);
  const nlohmann::json rows = recorded("kvpress_rows.json")["rows"]["longbook_qa_eng"];
  ScratchDir dir("ib_once");
  const auto lines = datasets::read_jsonl(data_file("longbook_qa_eng"));
  for (size_t i = 0; i < 3; ++i) {
    const std::string one = dir.path() + "/r" + std::to_string(i) + ".jsonl";
    std::ofstream(one) << lines[i].value.dump() << "\n";
    const nlohmann::json alone = job(one, 0);
    EXPECT_EQ(all["examples"][i]["prediction"], alone["examples"][0]["prediction"]) << i;
    EXPECT_EQ(alone["metrics"]["prefills"], 1);
    const std::string prompt = alone["examples"][0]["prompt"];
    EXPECT_NE(prompt.find(rows[i]["question"].get<std::string>() + "\nAnswer:"), std::string::npos) << prompt;
  }
}

}  // namespace
}  // namespace kvbench::tasks
