// SCBench: the prompts and scores of its official code (recorded by running microsoft/MInference's
// scbench/eval_utils.py and compute_scores.py on fixture files in its released record format:
// scripts/scbench_reference/record.py), and the cache carried across turns on stories260K — the
// shared context is prefilled once, a later turn feeds only its own prompt, and every answer equals
// the one a fresh prefill of the same history gives.
#include <gtest/gtest.h>

#include "metrics/scbench.hpp"
#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "task_fixtures.hpp"
#include "tasks/run_task.hpp"
#include "tasks/scbench_prompts.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;
using nlohmann::json;

json scbench_recorded() { return json::parse(read_file(fixture("scbench/recorded.json"))); }

const scbench::ScbenchSet& set_named(const std::string& name) {
  for (const auto& s : scbench::sets())
    if (s.name == name) return s;
  throw std::invalid_argument(name);
}

std::vector<scbench::Record> records_of(const std::string& task) {
  std::vector<scbench::Record> out;
  for (const auto& r : datasets::read_jsonl(fixture("scbench/" + task + ".jsonl"))) out.push_back(scbench::read_record(r, set_named(task), 5));
  return out;
}

TEST(ScbenchPrompts, EqualTheOfficialCodesWithAndWithoutAChatTemplate) {
  const json rec = scbench_recorded();
  const auto llama3 = models::ModelChatTemplate::for_tokenizer(std::string(KVBENCH_SHARED_DIR) + "/models/llama3-tokenizer");
  int compared = 0;
  for (const auto& [task, per_record] : rec["prompts"].items()) {
    const auto& set = set_named(task);
    const std::vector<scbench::Record> records = records_of(task);
    ASSERT_EQ(records.size(), per_record.size()) << task;
    for (size_t i = 0; i < records.size(); ++i) {
      for (const auto& [key, chat] : {std::pair<std::string, const models::ModelChatTemplate*>{"plain", nullptr}, {"chat", llama3.get()}}) {
        const json& want = per_record[i][key];
        EXPECT_EQ(json(scbench::turn_prompts(set, records[i], true, chat)), want["gold"]) << task << " " << key << " gold";
        EXPECT_EQ(json(scbench::turn_prompts(set, records[i], false, chat)), want["model"]) << task << " " << key << " model";
        EXPECT_EQ(json(scbench::request_prompts(set, records[i], chat)), want["multi_request"]) << task << " " << key << " scdq";
        compared += 3;
      }
      json labels = json::array();
      for (const auto& t : records[i].turns) labels.push_back(scbench::label_of(set, t));
      EXPECT_EQ(labels, per_record[i]["ground_truth"]) << task;
    }
  }
  EXPECT_EQ(compared, 78);  // 13 records of the 12 tasks × 2 templates × 3 prompt kinds
}

TEST(ScbenchScorers, EqualTheOfficialCode) {
  const json rec = scbench_recorded();
  for (const json& c : rec["scores"])
    EXPECT_DOUBLE_EQ(metrics::scbench_score_one(c["scorer"], c["prediction"], c["label"]), c["score"].get<double>())
        << c["scorer"] << " on '" << c["prediction"].get<std::string>() << "' vs " << c["label"].dump();
  EXPECT_EQ(rec["scores"].size(), 27u);
}

// RepoQA's needle matching (repo_qa_utils.py without tree-sitter, nltk 3.8's method4 BLEU): the
// block taken from the answer, the most similar function and its similarity, the verdict.
TEST(ScbenchScorers, RepoqaMatchesTheAnswerToTheRepositorysFunctionsAsTheOfficialCode) {
  const json rec = scbench_recorded()["repoqa"];
  std::vector<metrics::RepoqaNeedle> needles;
  for (const json& n : rec["needles"]) needles.push_back({n["name"], n["needle"]});
  for (const json& c : rec["cases"]) {
    const std::string output = c["output"];
    EXPECT_EQ(metrics::repoqa_sanitize(output), c["sanitized"]) << output;
    const metrics::RepoqaVerdict v = metrics::repoqa_evaluate(output, c["gold"], needles);
    EXPECT_EQ(v.best_name, c["best"].is_null() ? "" : c["best"].get<std::string>()) << output;
    EXPECT_DOUBLE_EQ(v.best_similarity, c["similarity"].get<double>()) << output;
    EXPECT_EQ(v.pass, c["best_match"].get<bool>() && c["similarity"].get<double>() >= 0.8) << output;
  }
  EXPECT_EQ(rec["cases"].size(), 16u);
}

// The fence's word and whitespace are Python's Unicode \w and \s: expected values from python3's
// re.findall(r"^```(?:\w+)?\s*\n(.*?)(?=^```)```", s.strip(), re.DOTALL | re.MULTILINE)[0].
TEST(ScbenchScorers, RepoqaFencesReadUnicodeWordsAndSpacesAsPython) {
  const std::pair<const char*, const char*> cases[] = {
      {"```\u00e9\ncode \u00e9\n```", "code \u00e9\n"},              // é is \w
      {"```\u2192\ncode\n```\n```py\nsecond\n```", ""},              // → is not: the next fence opens
      {"```py\u3000\nwide space\n```", "wide space\n"},                // ideographic space is \s
      {"```\u65e5\u672c\nx = 1\n```", "x = 1\n"},
      {"```\u00a0\nnbsp\n```", "nbsp\n"}};
  for (const auto& [output, block] : cases) EXPECT_EQ(metrics::repoqa_sanitize(output), block) << output;
}

// stories260K, greedy, `limit` new tokens, stopping at EOS: what a fresh prefill of `ids` answers.
struct Fresh {
  models::LoadedModel loaded = models::load_model("stories260K");
  models::Transformer model{loaded.config, loaded.weights};
  models::Tokenizer tokenizer{loaded.tokenizer_path};
  std::vector<int64_t> encode(const std::string& text, bool special) {
    std::vector<int> ids = tokenizer.encode(text, special);
    return {ids.begin(), ids.end()};
  }
  std::vector<int64_t> answer(const std::vector<int64_t>& ids, int64_t limit) {
    models::InferenceSession session(model, nullptr, {});
    torch::Tensor logits = session.prefill(ids);
    std::vector<int64_t> out;
    for (int64_t i = 0; i < limit; ++i) {
      const int64_t next = logits.reshape({-1}).argmax().item<int64_t>();
      if (next == tokenizer.eos_id()) break;
      out.push_back(next);
      logits = session.step(next);
    }
    return out;
  }
  std::string text(const std::vector<int64_t>& ids) { return tokenizer.decode({ids.begin(), ids.end()}); }
};

json run_kv(const json& params) {
  json p = {{"data_file", fixture("scbench/scbench_kv.jsonl")}, {"chat_template", "none"}, {"max_new_tokens", 6}, {"record_prompts", true}};
  p.update(params);
  return run_task({{"task", "scbench/scbench_kv"}, {"limit", 1}, {"task_params", p}});
}

TEST(ScbenchTask, TheCacheIsCarriedAcrossTurnsWithTheGoldHistory) {
  const json r = run_kv(json::object());
  const std::vector<scbench::Record> records = records_of("scbench_kv");
  const std::vector<std::string> prompts = scbench::turn_prompts(set_named("scbench_kv"), records[0], true, nullptr);
  ASSERT_EQ(r["examples"].size(), 3u);
  Fresh fresh;
  std::vector<int64_t> history;
  for (size_t t = 0; t < 3; ++t) {
    const json& e = r["examples"][t];
    const std::vector<int64_t> ids = fresh.encode(prompts[t], t == 0);
    EXPECT_EQ(e["prompt"], prompts[t]);
    EXPECT_EQ(e["prompt_tokens"], static_cast<int64_t>(ids.size())) << "turn " << t << " feeds its own prompt only";
    if (t > 0) EXPECT_EQ(e["prefilled_tokens"], r["examples"][0]["prompt_tokens"]) << "the context is prefilled once";
    history.insert(history.end(), ids.begin(), ids.end());
    // The cache holds the prompts so far and no earlier answer: a fresh prefill of them answers alike.
    EXPECT_EQ(e["prediction"], fresh.text(fresh.answer(history, 6))) << "turn " << t;
  }
  EXPECT_EQ(r["metrics"]["turns"], 3);
  EXPECT_TRUE(r["metrics"].contains("turn_3"));
}

TEST(ScbenchTask, TheModelsOwnHistoryKeepsEachAnswerAndEos) {
  const json r = run_kv({{"history", "model"}});
  const std::vector<std::string> prompts = scbench::turn_prompts(set_named("scbench_kv"), records_of("scbench_kv")[0], false, nullptr);
  Fresh fresh;
  std::vector<int64_t> history;
  for (size_t t = 0; t < 3; ++t) {
    const std::vector<int64_t> ids = fresh.encode(prompts[t], t == 0);
    history.insert(history.end(), ids.begin(), ids.end());
    const std::vector<int64_t> answer = fresh.answer(history, 6);
    EXPECT_EQ(r["examples"][t]["prediction"], fresh.text(answer)) << "turn " << t;
    history.insert(history.end(), answer.begin(), answer.end());
    history.push_back(fresh.tokenizer.eos_id());
  }
}

TEST(ScbenchTask, MultiRequestAnswersEachQuestionAfterTheSharedContext) {
  const json r = run_kv({{"mode", "multi_request"}});
  const std::vector<std::string> prompts = scbench::request_prompts(set_named("scbench_kv"), records_of("scbench_kv")[0], nullptr);
  Fresh fresh;
  const std::vector<int64_t> context = fresh.encode(prompts[0], true);
  for (size_t t = 0; t < 3; ++t) {
    std::vector<int64_t> ids = context;
    const std::vector<int64_t> q = fresh.encode(prompts[t + 1], false);
    ids.insert(ids.end(), q.begin(), q.end());
    EXPECT_EQ(r["examples"][t]["prediction"], fresh.text(fresh.answer(ids, 6))) << "question " << t;
  }
}

// A policy compresses each turn's prompt; the gold history drops the answers again, which needs a
// cache the policy did not evict from while answering (oneshot); under decode one error says so.
TEST(ScbenchTask, CompressingPoliciesAndTheGoldHistory) {
  auto run = [](const std::string& protocol) {
    return run_task({{"task", "scbench/scbench_kv"}, {"limit", 1}, {"policy", "snapkv"}, {"budget", "24"}, {"protocol", protocol},
                     {"task_params", {{"data_file", fixture("scbench/scbench_kv.jsonl")}, {"chat_template", "none"}, {"max_new_tokens", 4}}}});
  };
  const json r = run("oneshot");
  for (const json& e : r["examples"]) EXPECT_LE(e["cache_peak"].get<int64_t>(), 24 + 4) << "each prompt compressed to the budget, then the answer";
  try {
    run("decode");
    ADD_FAILURE() << "dropped answers the policy evicted from";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gold history"), std::string::npos) << e.what();
  }
}

TEST(ScbenchTask, ScoresPerTurnAndPerSubTask) {
  const json r = run_task({{"task", "scbench/scbench_summary_with_needles"},
                           {"task_params", {{"data_file", fixture("scbench/scbench_summary_with_needles.jsonl")}, {"chat_template", "none"}, {"max_new_tokens", 4}}}});
  EXPECT_TRUE(r["metrics"]["scbench_summary"].contains("turn_1"));
  EXPECT_TRUE(r["metrics"]["scbench_summary"].contains("turn_3"));
  EXPECT_TRUE(r["metrics"]["scbench_passkey"].contains("turn_2"));
  EXPECT_EQ(r["examples"][1]["task"], "scbench_passkey");
  const json repoqa = run_task({{"task", "scbench/scbench_repoqa_and_kv"},
                                {"task_params", {{"data_file", fixture("scbench/scbench_repoqa_and_kv.jsonl")}, {"chat_template", "none"}, {"max_new_tokens", 8}}}});
  EXPECT_TRUE(repoqa["metrics"]["scbench_repoqa"].contains("turn_3"));
  EXPECT_TRUE(repoqa["examples"][0]["metrics"].contains("best_similarity")) << "scored against the repository's functions";
  const json choice = run_task({{"task", "scbench/scbench_choice_eng"},
                                {"task_params", {{"data_file", fixture("scbench/scbench_choice_eng.jsonl")}, {"chat_template", "none"}, {"max_new_tokens", 3}}}});
  EXPECT_EQ(choice["examples"][0]["ground_truth"], (json{"red", "B"}));
  // Without the file, one error names the dataset.
  try {
    run_task({{"task", "scbench/scbench_kv"}, {"data_root", "/nonexistent"}, {"task_params", {{"chat_template", "none"}}}});
    ADD_FAILURE() << "ran without data";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("microsoft/SCBench"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvbench::tasks
