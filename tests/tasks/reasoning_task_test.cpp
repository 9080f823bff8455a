// The reasoning tasks end to end on stories260K over the bundled files: the prompt fed is the one
// R-KV's run_math.py builds (recorded by importing it: scripts/reasoning_reference/
// record_rkv_prompts.py), the length limit its dataset2max_length capped at the model's context,
// the grade the named grader's, n samples seeded seed .. seed + n - 1, and a policy that compresses
// while generating keeps the example's cache at its budget.
#include <gtest/gtest.h>

#include <sstream>

#include "metrics/answer_graders.hpp"
#include "metrics/qwen_math_equal.hpp"
#include "error_text.hpp"
#include "task_fixtures.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;
using nlohmann::json;

json rkv_prompts() { return json::parse(read_file(fixture("reasoning/rkv_prompts.json"))); }

json run_reasoning(const std::string& task, const json& params, int64_t limit, const json& extra = json::object()) {
  json spec = {{"task", task}, {"limit", limit}, {"task_params", params}};
  spec.update(extra);
  return run_task(spec);
}

// The bundled record `index` of data/reasoning/<set>/test.jsonl.
json bundled_record(const std::string& set, size_t index) {
  std::istringstream lines(read_file(std::string(KVBENCH_TESTS_DIR) + "/../data/reasoning/" + set + "/test.jsonl"));
  std::string line;
  for (size_t i = 0; i <= index; ++i) std::getline(lines, line);
  return json::parse(line);
}

// R-KV grades MATH-500 against the answer of the record's worked solution and AIME 2024 against
// its answer field, both with Qwen2.5-Math's math_equal (metrics/qwen_math_equal.hpp).
TEST(ReasoningTask, FeedsRkvsPromptsAndGradesAsRkv) {
  const json recorded = rkv_prompts();
  for (const auto& [task, set] : {std::pair<std::string, std::string>{"math500", "math"}, {"aime24", "aime24"}}) {
    const json r = run_reasoning(task, {{"record_prompts", true}}, 2);
    ASSERT_EQ(r["examples"].size(), 2u) << task;
    const bool solution = task == "math500";
    for (size_t i = 0; i < 2; ++i) {
      const json& e = r["examples"][i];
      EXPECT_EQ(e["prompt"], recorded["sets"][set]["prompts"][i]["prompt"]) << task << " example " << i;
      const json record = bundled_record(task, i);
      const std::string graded_gold = solution ? record["solution"].get<std::string>() : e["gold"].get<std::string>();
      const metrics::qwen_math::Verdict expected = metrics::qwen_math::grade(e["prediction"], graded_gold, solution);
      EXPECT_EQ(e["correct"], expected.correct) << task;
      EXPECT_EQ(e["extracted"], expected.pred ? json(*expected.pred) : json(nullptr)) << task;
      if (solution) EXPECT_EQ(e["gold_read"], expected.gt) << "the solution's boxed answer, normalised";
      else EXPECT_FALSE(e.contains("gold_read"));
      EXPECT_EQ(e["metrics"]["pass@1"], expected.correct ? 1.0 : 0.0);
      // R-KV's max_length (8192, 16384) capped at stories260K's 512-token context; it never says EOS this soon.
      EXPECT_EQ(e["prompt_tokens"].get<int64_t>() + e["generated_tokens"].get<int64_t>(), 512) << task;
      EXPECT_EQ(e["effective_compression"], 1.0) << "Full keeps every token fed";
    }
    EXPECT_EQ(r["metrics"]["grader"], solution ? "qwen_math.solution" : "qwen_math.answer");
  }
  EXPECT_EQ(recorded["sets"]["aime24"]["max_length"], 16384);
  // A grader that reads a worked solution on a set without one is refused.
  EXPECT_TRUE(kvbench::testing::contains(kvbench::testing::error_of([] { run_reasoning("aime24", {{"grader", "qwen_math.solution"}}, 1); }),
                                         "reads a worked solution"));
}

// GSM8K's gold is the number after "####" in the worked solution; R-KV grades it with math_equal;
// lm-eval's gsm8k.flexible is a named alternative.
TEST(ReasoningTask, Gsm8kGradesTheNumberAfterTheHashes) {
  for (const std::string grader : {"qwen_math.answer", "gsm8k.flexible"}) {
    const json params = grader == "qwen_math.answer" ? json{{"max_length", 300}} : json{{"max_length", 300}, {"grader", grader}};
    const json r = run_reasoning("gsm8k", params, 1);
    const json& e = r["examples"][0];
    EXPECT_EQ(e["gold"], "18") << "Janet's ducks";
    EXPECT_EQ(r["metrics"]["grader"], grader);
    const metrics::AnswerGrade expected = metrics::answer_grader(grader).grade(e["prediction"], "18", {});
    EXPECT_EQ(e["correct"], expected.correct);
    EXPECT_EQ(e["extracted"], expected.extracted ? json(*expected.extracted) : json(nullptr));
  }
}

// aime25 follows kvpress's sampled AIME25 run: the question alone (as one user message of the
// model's chat template, which stories260K has none of), temperature 0.6, top-p 0.95, top-k 20,
// graded by kvpress's boxed{ split.
TEST(ReasoningTask, Aime25RunsKvpresssSampledProtocol) {
  ScratchDir dir("aime25");
  const std::string file = dir.write("aime25.jsonl", "{\"question\": \"Find the sum of all integer bases b > 9.\", \"answer\": \"70\"}\n");
  const json r = run_reasoning("aime25", {{"data_file", file}, {"chat_template", "none"}, {"record_prompts", true}}, 1);
  const json& e = r["examples"][0];
  EXPECT_EQ(e["prompt"], "Find the sum of all integer bases b > 9.");
  EXPECT_EQ(r["metrics"]["grader"], "kvpress.boxed");
  EXPECT_EQ(r["settings"]["resolved"]["sampling"], (json{{"decoding", "sampling"}, {"temperature", 0.6}, {"top_k", 20}, {"top_p", 0.95}, {"min_p", 0.0}, {"repetition_penalty", 1.0}}));
  EXPECT_EQ(e["prompt_tokens"].get<int64_t>() + e["generated_tokens"].get<int64_t>() <= 512, true) << "32,000 new tokens, within the context";
  const metrics::AnswerGrade expected = metrics::answer_grader("kvpress.boxed").grade(e["prediction"], "70", {});
  EXPECT_EQ(e["correct"], expected.correct);
}

// gpqa_diamond feeds lm-eval's gpqa_diamond_cot_zeroshot prompts: every record's four choices
// preprocessed and shuffled as the harness's process_docs after random.seed(0) (recorded by
// running it: scripts/reasoning_reference/record_gpqa_prompts.py over the fixture CSV, which has the
// official file's column names), the gold the correct choice's letter, graded by gpqa.flexible with
// the choices. A limit takes the first records without changing their shuffles.
TEST(ReasoningTask, GpqaDiamondShufflesTheChoicesAsLmEval) {
  const json recorded = json::parse(read_file(fixture("reasoning/gpqa_prompts.json")));
  const std::string file = fixture("reasoning/gpqa_diamond_fixture.csv");
  const json r = run_reasoning("gpqa_diamond", {{"data_file", file}, {"record_prompts", true}, {"max_new_tokens", 24}}, 0);
  ASSERT_EQ(r["examples"].size(), recorded["cases"].size());
  for (size_t i = 0; i < recorded["cases"].size(); ++i) {
    const json& e = r["examples"][i];
    const json& want = recorded["cases"][i];
    EXPECT_EQ(e["id"], want["id"]);
    EXPECT_EQ(e["prompt"], want["prompt"]) << "record " << i;
    EXPECT_EQ(e["gold"], want["answer"]) << "record " << i;
    const metrics::AnswerGrade expected =
        metrics::answer_grader("gpqa.flexible").grade(e["prediction"], want["answer"], want["choices"].get<std::vector<std::string>>());
    EXPECT_EQ(e["correct"], expected.correct);
    EXPECT_LE(e["generated_tokens"].get<int64_t>(), 24);
  }
  EXPECT_EQ(r["metrics"]["grader"], "gpqa.flexible");
  const json last_two = run_reasoning("gpqa_diamond", {{"data_file", file}, {"record_prompts", true}, {"max_new_tokens", 1}}, 2);
  EXPECT_EQ(last_two["examples"][1]["prompt"], recorded["cases"][1]["prompt"]);
  // Without the gated file, one error names it and how to give it.
  try {
    run_reasoning("gpqa_diamond", json::object(), 1);
    ADD_FAILURE() << "ran without data";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("Idavidrein/gpqa"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("task_params.data_file"), std::string::npos) << e.what();
  }
}

TEST(ReasoningTask, SamplesAreSeededAndPassAtOneIsTheirMean) {
  const json params = {{"n", 3}, {"temperature", 0.6}, {"top_p", 0.95}, {"max_length", 320}, {"grader", "gsm8k.flexible"}};
  const json a = run_reasoning("math500", params, 1), b = run_reasoning("math500", params, 1);
  const json& samples = a["examples"][0]["samples"];
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(a["examples"][0]["samples"], b["examples"][0]["samples"]) << "same seed, same samples";
  EXPECT_NE(samples[0]["text"], samples[1]["text"]) << "sample j uses seed + j";
  double correct = 0;
  for (const json& s : samples) correct += s["correct"].get<bool>() ? 1 : 0;
  EXPECT_EQ(a["examples"][0]["metrics"]["pass@1"], correct / 3);
  EXPECT_EQ(a["examples"][0]["prediction"], samples[0]["text"]);
}

TEST(ReasoningTask, ACompressingPolicyHoldsTheExamplesCacheAtItsBudget) {
  const json r = run_reasoning("math500", {{"max_length", 480}}, 1, {{"policy", "streaming_llm"}, {"budget", "64"}, {"protocol", "decode"}});
  const json& e = r["examples"][0];
  EXPECT_EQ(e["cache_peak"], 64);
  const double fed = e["prompt_tokens"].get<double>() + e["generated_tokens"].get<double>() - 1;
  EXPECT_DOUBLE_EQ(e["effective_compression"].get<double>(), 64 / fed);
}

// kvpress's decoding-time wrappers and R-KV bound the cache of a long trace: at most the budget
// plus the steps between two compressions.
TEST(ReasoningTask, DecodeTimePressesAndRkvBoundTheTrace) {
  const json prefill_decoding = {{"prefilling_press", "kvpress:snapkv"}, {"decoding_press", "kvpress:decoding_knorm"},
                                 {"decoding_params", {{"compression_interval", 16}}}};
  for (const auto& [policy, params] : {std::pair<std::string, json>{"kvpress:prefill_decoding", prefill_decoding},
                                       {"kvpress:decoding_knorm", {{"compression_interval", 16}}},
                                       {"rkv", {{"divide_length", 16}}}}) {
    const json r = run_reasoning("math500", {{"max_length", 480}}, 1, {{"policy", policy}, {"policy_params", params}, {"budget", "64"}, {"protocol", "decode"}});
    const json& e = r["examples"][0];
    EXPECT_GT(e["generated_tokens"].get<int64_t>(), 100) << policy;
    // kvpress:decoding_* never compresses the prompt (261 tokens here): its bound starts there.
    const int64_t prompt_kept = policy == "kvpress:decoding_knorm" ? e["prompt_tokens"].get<int64_t>() : 64;
    EXPECT_LE(e["cache_peak"].get<int64_t>(), prompt_kept + 15) << policy;
  }
}

TEST(ReasoningTask, ErrorsNameWhatIsWrong) {
  ScratchDir dir("reasoning");
  const std::string no_question = dir.write("q.jsonl", "{\"problem\": \"1+1?\", \"answer\": \"2\"}\n");
  auto error_of = [](const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of([&] { run_reasoning("aime24", {{"data_file", no_question}}, 1); }).find("q.jsonl:1: field 'question'"), std::string::npos);
  const std::string no_hashes = dir.write("g.jsonl", "{\"question\": \"1+1?\", \"answer\": \"2\"}\n");
  EXPECT_NE(error_of([&] { run_reasoning("gsm8k", {{"data_file", no_hashes}}, 1); }).find("g.jsonl:1: field 'answer': has no '####'"), std::string::npos);
  EXPECT_NE(error_of([&] { run_reasoning("math500", {{"n", 2}}, 1); }).find("need a temperature > 0"), std::string::npos);
  EXPECT_NE(error_of([&] { run_reasoning("math500", {{"grader", "gpqa.flexible"}}, 1); }).find("reads multiple-choice options"), std::string::npos);
  EXPECT_NE(error_of([&] { run_reasoning("math500", {{"max_length", 10}}, 1); }).find("leave nothing of max_length 10"), std::string::npos);
}

}  // namespace
}  // namespace kvbench::tasks
