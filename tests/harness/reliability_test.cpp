// Regression tests for issue #14 in the harness: hostile specs, damaged results, duplicates,
// stale claims, parameter ranges.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <utime.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/grid_runner.hpp"
#include "harness/grid_spec.hpp"
#include "harness/job_spec.hpp"
#include "harness/result_file.hpp"
#include "harness/results_index.hpp"
#include "harness/results_store.hpp"
#include "harness/temp_dir.hpp"
#include "policies/budget.hpp"
#include "tasks/run_task.hpp"
#include "error_text.hpp"

namespace kvbench::harness {
namespace {
namespace fs = std::filesystem;

using kvbench::testing::error_of;
using kvbench::testing::contains;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const nlohmann::json kJob = {{"task", "tinystories"}, {"policy", "kvec"}, {"budget", "64"}, {"limit", 1}};

TEST(HostileSpecs, DeeplyNestedGridIsAClearErrorNotASegfault) {
  testing::TempDir dir;
  const std::string path = write(dir / "deep.json", "{\"axes\": " + std::string(75000, '[') + std::string(75000, ']') + "}");
  const std::string msg = error_of([&] { load_grid(path); });
  EXPECT_TRUE(contains(msg, path + ":1: invalid JSON: nested deeper than 256 levels")) << msg.substr(0, 300);
  EXPECT_THROW(load_job_file(path), std::invalid_argument);
}

TEST(HostileSpecs, DuplicateTaskKeyIsAnError) {
  testing::TempDir dir;
  const std::string path =
      write(dir / "job.json", "{\n  \"task\": \"tinystories\",\n  \"budget\": \"64\",\n  \"task\": \"wikitext\"\n}\n");
  const std::string msg = error_of([&] { load_job_file(path); });
  EXPECT_TRUE(contains(msg, path + ":4: invalid JSON: duplicate key \"task\"")) << msg;
}

TEST(HostileSpecs, NumberBeyondADoubleNamesTheFile) {
  testing::TempDir dir;
  const std::string path = write(dir / "job.json", "{\"task\": \"tinystories\",\n \"seed\": 1e400}");
  const std::string msg = error_of([&] { load_job_file(path); });
  EXPECT_TRUE(contains(msg, path + ":2: invalid JSON: ")) << msg;
  EXPECT_FALSE(contains(msg, "[json.exception")) << msg;
}

TEST(HostileSpecs, GridNameMustBeOnePlainPathComponent) {
  for (const std::string& bad : std::vector<std::string>{"../../x", "a/b", "", ".hidden", "x y", std::string(101, 'a')}) {
    nlohmann::json grid = {{"name", bad}, {"include", {kJob}}};
    EXPECT_TRUE(contains(error_of([&] { expand_grid_cells(grid, "g.json"); }), "field 'name'")) << bad;
  }
  nlohmann::json good = {{"name", "nightly-2.v1_x"}, {"include", {kJob}}};
  EXPECT_EQ(expand_grid_cells(good, "g.json").size(), 1u);
}

TEST(HostileSpecs, AbsurdGridIsRefusedBeforeItIsBuilt) {
  nlohmann::json values = nlohmann::json::array();
  for (int i = 0; i < 1000; ++i) values.push_back(i);
  // 1000^3 = 10^9 cells: refused at once, not built until bad_alloc.
  nlohmann::json grid = {{"fixed", kJob}, {"axes", {{"seed", values}, {"block", values}, {"limit", values}}}};
  grid["fixed"].erase("limit");
  const std::string msg = error_of([&] { expand_grid_cells(grid, "huge.json"); });
  EXPECT_TRUE(contains(msg, "huge.json: the axes multiply to more than 100000 jobs")) << msg;
  // The limit can be raised (and lowered) on purpose.
  ::setenv("KVBENCH_MAX_GRID_JOBS", "10", 1);
  nlohmann::json small = {{"fixed", kJob}, {"axes", {{"seed", {0, 1, 2, 3}}, {"budget", {"8", "16", "32"}}}}};
  small["fixed"].erase("budget");
  EXPECT_TRUE(contains(error_of([&] { expand_grid_cells(small, "s.json"); }), "more than 10 jobs"));
  ::setenv("KVBENCH_MAX_GRID_JOBS", "12", 1);
  EXPECT_EQ(expand_grid_cells(small, "s.json").size(), 12u);
  ::unsetenv("KVBENCH_MAX_GRID_JOBS");
}

TEST(HostileSpecs, NonsenseValuesAreRejectedUpFront) {
  auto with = [](const nlohmann::json& extra) {
    nlohmann::json spec = kJob;
    for (auto it = extra.begin(); it != extra.end(); ++it) spec[it.key()] = it.value();
    return error_of([&] { tasks::normalize_job_spec(spec); });
  };
  EXPECT_TRUE(contains(with({{"policy_params", {{"beta", -1.0}}}}), "field 'beta' of policy 'kvec' must be"));
  EXPECT_TRUE(contains(with({{"policy_params", {{"beta", 1.5}}}}), "<= 1"));
  EXPECT_EQ(with({{"policy_params", {{"beta", 0.5}}}}), "(no error)");
  EXPECT_TRUE(contains(with({{"budget", ""}}), "budget is empty"));
  EXPECT_TRUE(contains(with({{"device", "tpu"}}), "device must be cpu, cuda or cuda:N, got 'tpu'"));
  EXPECT_TRUE(contains(with({{"device", ""}}), "device must be cpu, cuda or cuda:N, got ''"));
  EXPECT_TRUE(contains(with({{"dtype", "float16"}}), "float16 runs on CUDA only"));
  EXPECT_EQ(with({{"device", "cuda:0"}, {"dtype", "float16"}}), "(no error)");  // valid without a GPU present
  EXPECT_THROW(policies::Budget::parse(""), std::invalid_argument);
}

nlohmann::json result_of(const std::string& id, double value) {
  return {{"id", id}, {"spec", tasks::normalize_job_spec(kJob)}, {"metrics", {{"perplexity", value}}},
          {"examples", nlohmann::json::array()}};
}

TEST(DamagedResults, ATruncatedResultIsNotDoneAndIsReported) {
  testing::TempDir dir;
  ResultsStore store(dir.path());
  store.write_result(result_of("abc", 2.0));
  ASSERT_TRUE(store.has_result("abc"));
  const std::string full = read(store.result_path("abc"));
  write(store.result_path("abc"), full.substr(0, full.size() / 2));  // a disk-full or kill -9 leftover
  EXPECT_FALSE(store.has_result("abc"));
  EXPECT_TRUE(contains(result_file_problem(store.result_path("abc"), "abc"), "invalid JSON")) << result_file_problem(store.result_path("abc"), "abc");
  EXPECT_EQ(result_file_problem(store.result_path("nothing"), "nothing"), "no result file");
  // A result of another job under this name is not this job's result either.
  write(store.result_path("abc"), result_of("other", 1.0).dump());
  EXPECT_TRUE(contains(result_file_problem(store.result_path("abc"), "abc"), "its id is other, not abc"));
}

TEST(DamagedResults, TheSameResultUnderTwoNamesCountsOnce) {
  testing::TempDir dir;
  fs::create_directories(dir / "copy");
  write(dir / "abc.json", result_of("abc", 2.0).dump());
  write(dir / "copy/renamed.json", result_of("abc", 2.0).dump());
  write(dir / "def.json", result_of("def", 3.0).dump());
  const ResultsIndex index = ResultsIndex::load(dir.path());
  EXPECT_EQ(index.records().size(), 2u);
  bool warned = false;
  for (const auto& w : index.warnings()) warned |= contains(w, "the same result as") && contains(w, "(job abc)");
  EXPECT_TRUE(warned);
  // The same job with other numbers: which one is right? An error naming both files.
  write(dir / "copy/renamed.json", result_of("abc", 2.5).dump());
  const std::string msg = error_of([&] { ResultsIndex::load(dir.path()); });
  EXPECT_TRUE(contains(msg, "conflicting results of one job")) << msg;
  EXPECT_TRUE(contains(msg, dir / "abc.json") && contains(msg, dir / "copy/renamed.json")) << msg;
}

TEST(StaleClaims, TheGridRemovesTheClaimOfAFinishedJob) {
  testing::TempDir dir;
  ResultsStore store(dir.path());
  const Job job = make_job(kJob);
  nlohmann::json result = result_of(job.id, 2.0);
  result["spec"] = job.spec;
  store.write_result(result);
  // A holder killed between writing its result and releasing: its claim (unlocked) remains.
  write(store.claim_path(job.id), "{\"pid\": 999999, \"host\": \"h\", \"since\": \"t\"}\n");
  // And an empty claim (killed between open and write), old enough to be stale.
  const Job other = make_job({{"task", "tinystories"}, {"policy", "kvec"}, {"budget", "65"}, {"limit", 1}});
  nlohmann::json other_result = result_of(other.id, 2.0);
  other_result["spec"] = other.spec;
  store.write_result(other_result);
  write(store.claim_path(other.id), "");
  struct utimbuf old_times {std::time(nullptr) - 3600, std::time(nullptr) - 3600};
  ::utime(store.claim_path(other.id).c_str(), &old_times);

  GridRunSummary summary = run_grid_jobs({job, other}, store, PoolOptions{}, /*quiet=*/true);
  EXPECT_EQ(summary.already_done, 2);
  EXPECT_FALSE(fs::exists(store.claim_path(job.id)));
  EXPECT_FALSE(fs::exists(store.claim_path(other.id)));
}

TEST(StaleClaims, ALiveClaimBesideAResultIsLeftAlone) {
  testing::TempDir dir;
  ResultsStore store(dir.path());
  const Job job = make_job(kJob);
  nlohmann::json result = result_of(job.id, 2.0);
  result["spec"] = job.spec;
  store.write_result(result);
  std::optional<JobClaim> live = store.try_claim(job.id);  // held (flock) by this process
  ASSERT_TRUE(live.has_value());
  run_grid_jobs({job}, store, PoolOptions{}, /*quiet=*/true);
  EXPECT_TRUE(fs::exists(store.claim_path(job.id)));
}

}  // namespace
}  // namespace kvbench::harness
