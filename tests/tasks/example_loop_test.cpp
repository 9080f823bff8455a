// The per-example engine: the limit, the record, record_prompts, the means, progress, late scoring.
#include <gtest/gtest.h>

#include "tasks/example_loop.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task.hpp"

namespace kvbench::tasks {
namespace {

TaskContext context(int64_t limit, nlohmann::json params = nlohmann::json::object(), bool declares_record_prompts = true) {
  TaskContext ctx;
  ctx.limit = limit;
  ctx.params = std::move(params);
  if (declares_record_prompts) ctx.declared = {record_prompts_param()};
  return ctx;
}

Example scored(const std::string& id, nlohmann::json metrics) {
  Example e;
  e.id = id;
  e.prompt_tokens = 7;
  e.prediction = "p-" + id;
  e.references = {"r-" + id};
  e.metrics = std::move(metrics);
  e.fields = {{"shots", 2}};
  e.prompt = "prompt of " + id;
  e.recorded_with_prompt = {{"question", "q-" + id}};
  return e;
}

TEST(ExampleLoop, TheJobsLimitCutsTheExamplesAndNoMoreAreRecorded) {
  const TaskContext limited = context(2);
  ExampleLoop loop(limited, 5);
  EXPECT_EQ(loop.size(), 2);
  loop.record(scored("a", {{"acc", 1.0}}));
  EXPECT_FALSE(loop.done());
  loop.record(scored("b", {{"acc", 0.0}}));
  EXPECT_TRUE(loop.done());
  EXPECT_THROW(loop.record(scored("c", {{"acc", 1.0}})), std::logic_error);
  const TaskContext all = context(0);
  EXPECT_EQ(ExampleLoop(all, 5).size(), 5);
  const TaskContext beyond = context(9);
  EXPECT_EQ(ExampleLoop(beyond, 5).size(), 5);
}

TEST(ExampleLoop, RecordsTheCommonFieldsAndTheTasksOwn) {
  const TaskContext ctx = context(0);
  ExampleLoop loop(ctx, 1);
  loop.record(scored("a", {{"acc", 1.0}}));
  const TaskOutput out = loop.finish({{"acc", 1.0}});
  ASSERT_EQ(out.examples.size(), 1u);
  const nlohmann::json& e = out.examples[0];
  EXPECT_EQ(e["id"], "a");
  EXPECT_EQ(e["prompt_tokens"], 7);
  EXPECT_EQ(e["prediction"], "p-a");
  EXPECT_EQ(e["references"], nlohmann::json::array({"r-a"}));
  EXPECT_EQ(e["metrics"], nlohmann::json({{"acc", 1.0}}));
  EXPECT_EQ(e["shots"], 2);
  // record_prompts is off by default: no prompt text in the result.
  EXPECT_FALSE(e.contains("prompt"));
  EXPECT_FALSE(e.contains("question"));
  EXPECT_TRUE(out.resolved.is_null());
}

TEST(ExampleLoop, RecordPromptsAddsThePromptFedAndItsCompanions) {
  const TaskContext ctx = context(0, {{"record_prompts", true}});
  ExampleLoop loop(ctx, 1);
  EXPECT_TRUE(loop.record_prompts());
  loop.record(scored("a", {{"acc", 1.0}}));
  const TaskOutput out = loop.finish({}, {{"max_length", 9}});
  EXPECT_EQ(out.examples[0]["prompt"], "prompt of a");
  EXPECT_EQ(out.examples[0]["question"], "q-a");
  EXPECT_EQ(out.resolved, nlohmann::json({{"max_length", 9}}));
}

TEST(ExampleLoop, ATaskThatDoesNotDeclareRecordPromptsRecordsNoPrompt) {
  const TaskContext ctx = context(0, nlohmann::json::object(), /*declares_record_prompts=*/false);
  ExampleLoop loop(ctx, 1);
  EXPECT_FALSE(loop.record_prompts());
  loop.record(scored("a", {{"nll", 2.0}}));
  EXPECT_FALSE(loop.finish({}).examples[0].contains("prompt"));
}

TEST(ExampleLoop, MeansSkipUndefinedScoresAndAreNullWithoutAny) {
  const TaskContext ctx = context(0);
  ExampleLoop loop(ctx, 3);
  loop.record(scored("a", {{"bleu", 0.25}, {"never", nullptr}}));
  loop.record(scored("b", {{"bleu", nullptr}, {"never", nullptr}}));
  loop.record(scored("c", {{"bleu", 0.75}, {"never", nullptr}, {"label", "x"}}));
  EXPECT_DOUBLE_EQ(loop.mean("bleu").get<double>(), 0.5);  // over the two defined, not three
  EXPECT_TRUE(loop.mean("never").is_null());
  EXPECT_TRUE(loop.mean("absent").is_null());
  const nlohmann::json means = loop.means();
  EXPECT_EQ(means.size(), 2u);  // a text-valued field is not averaged
  EXPECT_TRUE(means.at("never").is_null());
}

TEST(ExampleLoop, MeansAddInExampleOrderAsASequentialSum) {
  const TaskContext ctx = context(0);
  const std::vector<double> values = {0.1, 0.2, 0.3, 1e-17, 0.7};
  ExampleLoop loop(ctx, static_cast<int64_t>(values.size()));
  double sum = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    loop.record(scored(std::to_string(i), {{"v", values[i]}}));
    sum += values[i];
  }
  EXPECT_EQ(loop.mean("v").get<double>(), sum / static_cast<double>(values.size()));  // bit for bit
}

TEST(ExampleLoop, ProgressCountsWithinTheJobsSpan) {
  std::vector<std::pair<int64_t, int64_t>> calls;
  TaskContext ctx = context(0);
  ctx.progress = [&](int64_t done, int64_t total) { calls.emplace_back(done, total); };
  ExampleLoop first(ctx, 2, {0, 5});
  first.record(scored("a", {}));
  first.record(scored("b", {}));
  ExampleLoop second(ctx, 3, {2, 5});
  second.record(scored("c", {}));
  ExampleLoop alone(ctx, 4);
  alone.record(scored("d", {}));
  const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 5}, {2, 5}, {3, 5}, {1, 4}};
  EXPECT_EQ(calls, expected);
}

TEST(ExampleLoop, CorpusScoresArriveLaterAndEveryExampleMustHaveThem) {
  const TaskContext ctx = context(0);
  ExampleLoop loop(ctx, 2);
  loop.record(scored("a", nullptr));
  loop.record(scored("b", nullptr));
  loop.score(0, {{"score", 10.0}});
  EXPECT_THROW(loop.score(0, {{"score", 10.0}}), std::logic_error);
  EXPECT_THROW(loop.finish({}), std::logic_error);  // b was never scored
  loop.score(1, {{"score", 20.0}});
  EXPECT_DOUBLE_EQ(loop.mean("score").get<double>(), 15.0);
  EXPECT_EQ(loop.finish({}).examples[1]["metrics"]["score"], 20.0);
}

}  // namespace
}  // namespace kvbench::tasks
