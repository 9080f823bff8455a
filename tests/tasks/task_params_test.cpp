// task_params are checked against each task's declared parameters before a job id exists, and a
// job that scores no example, or whose metrics are not finite, fails instead of reporting a number.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness/grid_spec.hpp"
#include "harness/job_spec.hpp"
#include "harness/table_spec.hpp"
#include "task_fixtures.hpp"
#include "tasks/run_task.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

using testing::error_of;

std::string normalize_error(const std::string& task, const nlohmann::json& params) {
  return error_of([&] { normalize_job_spec({{"task", task}, {"task_params", params}}); });
}

TEST(TaskParams, EveryTaskRejectsAnUnknownKeyListingTheValidOnes) {
  for (const std::string& task : known_task_names()) {
    const std::string error = normalize_error(task, {{"max_tokns", 1}});
    EXPECT_NE(error.find("field 'max_tokns' is not a parameter of task '" + task + "'"), std::string::npos) << error;
    EXPECT_NE(error.find("(valid: "), std::string::npos) << error;
    // Every declared key is accepted by the check (a declaration that lists a key its task never
    // reads would show up in the docs' tables; here: each task declares at least one).
    EXPECT_FALSE(make_task(task)->parameters().empty()) << task;
  }
}

TEST(TaskParams, TheIssuesTyposFail) {
  EXPECT_NE(normalize_error("wikitext", {{"max_tokns", 512}}).find("max_tokens"), std::string::npos);  // listed as valid
  EXPECT_NE(normalize_error("multidoc_qa", {{"max_new_token", 5}}).find("not a parameter"), std::string::npos);
  EXPECT_NE(normalize_error("needle", {{"depth", 50}}).find("depth_percents"), std::string::npos);
  EXPECT_NE(normalize_error("fidelity/needle", {{"depth", 50}}).find("not a parameter"), std::string::npos);
  EXPECT_EQ(normalize_error("needle", {{"depth_percents", {0, 50}}, {"max_new_tokens", 5}}), "(no error)");
}

TEST(TaskParams, WrongTypesAndRangesFail) {
  EXPECT_NE(normalize_error("wikitext", {{"max_tokens", -1}}).find("must be an integer >= 0, got -1"), std::string::npos);
  EXPECT_NE(normalize_error("wikitext", {{"max_tokens", 4.5}}).find("must be an integer"), std::string::npos);
  EXPECT_NE(normalize_error("longbench/qasper", {{"max_new_tokens", 0}}).find(">= 1"), std::string::npos);
  EXPECT_NE(normalize_error("longbench/qasper", {{"pipeline", "pred"}}).find("one of pred_py, kvcache_factory, kvpress"),
            std::string::npos);
  EXPECT_NE(normalize_error("needle", {{"depth_percents", {0, 150}}}).find("<= 100"), std::string::npos);
  EXPECT_NE(normalize_error("needle", {{"record_prompts", "yes"}}).find("true or false"), std::string::npos);
  EXPECT_NE(normalize_error("xsum", {{"top_p", 1.5}}).find("<= 1"), std::string::npos);
  EXPECT_NE(normalize_error("multidoc_qa", {{"truncation", "left"}}).find("one of skip, middle, none"), std::string::npos);
}

TEST(TaskParams, JobFilesGridsAndTablesFailBeforeTheJobIdNamingTheLine) {
  testing::ScratchDir dir("task_params");
  const std::string job = dir.write("job.json", "{\n  \"task\": \"needle\",\n  \"task_params\": {\n    \"max_tokns\": 5\n  }\n}\n");
  const std::string job_error = error_of([&] { harness::load_job_file(job); });
  EXPECT_NE(job_error.find(job + ":4: task_params: field 'max_tokns'"), std::string::npos) << job_error;
  const std::string grid = dir.write(
      "grid.json", "{\n  \"fixed\": {\"task\": \"tinystories\"},\n  \"axes\": {\"policy\": [\"full\"]},\n"
                   "  \"include\": [{\"task\": \"wikitext\", \"task_params\": {\"max_tokens\": -1}}]\n}\n");
  const std::string grid_error = error_of([&] { harness::load_grid(grid); });
  EXPECT_NE(grid_error.find("'max_tokens' of task 'wikitext' must be an integer >= 0"), std::string::npos) << grid_error;
}

// Every shipped table spec runs jobs whose task_params its tasks accept (kvec_needle_heatmap used
// "depth" and "context_length", which the needle task never read).
TEST(TaskParams, EveryTableSpecsJobsAreValid) {
  const auto specs = harness::load_table_specs((testing::tests_dir().parent_path() / "results" / "tables").string());
  ASSERT_GE(specs.size(), 30u);
  int jobs = 0;
  for (const auto& spec : specs)
    for (size_t r = 0; r < spec.rows.size(); ++r)
      for (size_t c = 0; c < spec.columns.size(); ++c) {
        if (spec.is_aggregate_column(c) || !spec.rows[r].curve_file.empty()) continue;
        const nlohmann::json job = harness::cell_job(spec, r, c);
        if (!job.contains("task")) continue;  // checked by the spec reader
        EXPECT_EQ(error_of([&] { normalize_job_spec(job); }), "(no error)") << spec.path << " " << job.dump();
        ++jobs;
      }
  EXPECT_GT(jobs, 100);
}

TEST(ZeroExamples, MeanOverNothingIsNull) {
  EXPECT_TRUE(mean_or_null(0, 0).is_null());
  EXPECT_DOUBLE_EQ(mean_or_null(3, 2).get<double>(), 1.5);
  MeanMetric m;
  EXPECT_TRUE(m.value().is_null());
  m.add(1), m.add(0);
  EXPECT_DOUBLE_EQ(m.value().get<double>(), 0.5);
  EXPECT_EQ(skipped_counters({{"skipped_too_long", 3}, {"skipped_lengths", {128}}, {"examples", 0}}), "skipped_too_long = 3");
}

TEST(NonFiniteMetrics, FailTheJobNamingTheMetric) {
  // A checkpoint whose rope_theta overflows gives NaN; stored, it would be a finished job with
  // null metrics that no grid runs again.
  EXPECT_NO_THROW(require_finite("t", {{"perplexity", 3.5}, {"heatmap", {{"len=8", {1.0, 2.0}}}}, {"note", nullptr}}));
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of([&] { require_finite("tinystories", {{"tokens", 10}, {"mean_nll", nan}}); }),
            "tinystories: metric 'mean_nll' is NaN: the model's outputs are not finite (check the checkpoint and its config)");
  EXPECT_NE(error_of([&] { require_finite("needle", {{"heatmap", {{"len=8", {1.0, inf}}}}}); })
                .find("metric 'heatmap.len=8[1]' is infinite"),
            std::string::npos);
}

TEST(ZeroExamples, MultidocQaWithEveryPromptSkippedFailsTheJob) {
  // 10 documents never fit 512 tokens: the reference skips them all.
  const std::string error = error_of([] { run_task({{"task", "multidoc_qa"}, {"limit", 2}}); });
  EXPECT_NE(error.find("multidoc_qa: no example was scored (skipped_too_long = "), std::string::npos) << error;
}

TEST(ZeroExamples, EmptyMmluTestFileFailsTheJob) {
  testing::ScratchDir root("empty_mmlu");
  root.write("mmlu/dev/anatomy_dev.csv", testing::read_file(testing::shared_data("mmlu/dev/anatomy_dev.csv")));
  root.write("mmlu/test/anatomy_test.csv", "");
  const std::string error = error_of([&] {
    run_task({{"task", "mmlu/anatomy"}, {"data_root", root.path()}, {"task_params", {{"shots", 0}}}});
  });
  EXPECT_NE(error.find("mmlu/test/anatomy_test.csv: no question (the file is empty or holds only a header)"),
            std::string::npos)
      << error;
  root.write("mmlu/test/anatomy_test.csv", "question,choice0,choice1,choice2,choice3,answer\n");
  EXPECT_NE(error_of([&] {
              run_task({{"task", "mmlu/anatomy"}, {"data_root", root.path()}, {"task_params", {{"shots", 0}}}});
            }).find("anatomy_test.csv: no question"),
            std::string::npos);
}

}  // namespace
}  // namespace kvbench::tasks
