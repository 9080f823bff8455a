// `kvbench run` and `kvbench grid` end to end: identical results for identical jobs, finished
// cells never re-run, kill -9 resumes with only the missing cells, and concurrent workers or
// grids never run one job twice.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "harness/harness_fixture.hpp"
#include "harness/job_runner.hpp"

namespace kvbench::testing {
namespace {

const std::string kRunArgs =
    "run --task tinystories --task-params '{\"mode\":\"stream\",\"max_tokens\":48,\"curve\":false}' "
    "--protocol stream --policy kvec --budget 16 --limit 1 --quiet";

nlohmann::json only_result(const std::string& dir) {
  auto ids = result_ids(dir);
  if (ids.size() != 1) return nullptr;
  return nlohmann::json::parse(std::ifstream(fs::path(dir) / (*ids.begin() + ".json")));
}

TEST(KvbenchRun, TheSameJobTwiceGivesIdenticalResultsApartFromTimings) {
  TempDir dir;
  ASSERT_EQ(run_kvbench(kRunArgs + " --results " + (dir / "a")).exit_code, 0);
  ASSERT_EQ(run_kvbench(kRunArgs + " --results " + (dir / "b")).exit_code, 0);
  nlohmann::json a = only_result(dir / "a"), b = only_result(dir / "b");
  ASSERT_FALSE(a.is_null());
  ASSERT_FALSE(b.is_null());
  // The documented schema.
  for (const char* key : {"task", "model", "policy", "budget", "metrics", "examples", "timings", "memory", "id", "spec",
                          "checksums", "versions", "environment", "finished_at"})
    EXPECT_TRUE(a.contains(key)) << key;
  EXPECT_EQ(a["checksums"]["model"].get<std::string>().size(), 64u);
  EXPECT_EQ(a["checksums"]["dataset"].get<std::string>().size(), 64u);
  EXPECT_FALSE(a["versions"]["libtorch"].get<std::string>().empty());
  for (const char* key : {"host", "cpu", "threads", "device"}) EXPECT_TRUE(a["environment"].contains(key)) << key;
  EXPECT_EQ(a["spec"]["policy"], "kvec");
  EXPECT_EQ(a["spec"]["budget"], "16");
  EXPECT_EQ(result_ids(dir / "a"), std::set<std::string>{a["id"].get<std::string>()});
  EXPECT_GT(a["metrics"]["tokens"].get<int64_t>(), 40);
  // Byte-identical once the timing fields are removed.
  EXPECT_EQ(harness::without_timing_fields(a).dump(), harness::without_timing_fields(b).dump());
  // --no-store --json prints the same result and writes nothing.
  CommandResult printed = run_kvbench(kRunArgs + " --json --no-store --results " + (dir / "c"));
  ASSERT_EQ(printed.exit_code, 0);
  EXPECT_EQ(harness::without_timing_fields(nlohmann::json::parse(printed.output)).dump(),
            harness::without_timing_fields(a).dump());
  EXPECT_TRUE(result_ids(dir / "c").empty());
}

TEST(KvbenchRun, AStoredResultIsReusedUnlessForced) {
  TempDir dir;
  ASSERT_EQ(run_kvbench(kRunArgs + " --results " + dir.path()).exit_code, 0);
  CommandResult again = run_kvbench(kRunArgs + " --results " + dir.path());
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_NE(again.output.find("perplexity"), std::string::npos) << again.output;
  EXPECT_EQ(finished_counts(dir.path()).begin()->second, 1);
  ASSERT_EQ(run_kvbench(kRunArgs + " --force --results " + dir.path()).exit_code, 0);
  EXPECT_EQ(finished_counts(dir.path()).begin()->second, 2);
  // A job file gives the same job (same id, reused).
  TempDir spec_dir;
  const std::string spec = write_json(spec_dir / "job.json", only_result(dir.path())["spec"]);
  CommandResult from_file = run_kvbench("run --job " + spec + " --json --results " + dir.path());
  ASSERT_EQ(from_file.exit_code, 0) << from_file.output;
  EXPECT_EQ(nlohmann::json::parse(from_file.output)["id"], only_result(dir.path())["id"]);
  EXPECT_EQ(finished_counts(dir.path()).begin()->second, 2);
}

TEST(KvbenchGrid, KilledMidwayResumesWithOnlyTheMissingCells) {
  TempDir dir;
  const std::string grid = write_json(dir / "grid.json", small_grid({"8", "12", "16"}, 96));
  const std::string results = dir / "runs";
  const pid_t pid = spawn_kvbench({"grid", grid, "--results", results, "--quiet"});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (result_ids(results).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGKILL);
  ASSERT_EQ(wait_exit_code(pid), -SIGKILL);
  const std::set<std::string> before = result_ids(results);
  ASSERT_GE(before.size(), 1u);
  ASSERT_LT(before.size(), 6u) << "the grid finished before it could be killed; make its jobs longer";
  const std::map<std::string, int> counts_before = finished_counts(results);

  CommandResult rerun = run_kvbench("grid " + grid + " --results " + results + " --quiet 2>&1");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  const std::set<std::string> after = result_ids(results);
  EXPECT_EQ(after.size(), 6u);
  // The re-run ran exactly the cells that had no result.
  std::map<std::string, int> counts_after = finished_counts(results);
  auto count_in = [](const std::map<std::string, int>& counts, const std::string& id) {
    return counts.count(id) ? counts.at(id) : 0;
  };
  for (const auto& id : after) {
    const int ran_now = count_in(counts_after, id) - count_in(counts_before, id);
    EXPECT_EQ(ran_now, before.count(id) ? 0 : 1) << id;
  }
  EXPECT_TRUE(files_ending(results, ".tmp").empty());
  EXPECT_TRUE(files_ending(results, ".claim").empty());
  for (const auto& id : after)
    EXPECT_NO_THROW(nlohmann::json::parse(std::ifstream(fs::path(results) / (id + ".json")))) << id;

  // A finished grid runs nothing.
  CommandResult third = run_kvbench("grid " + grid + " --results " + results + " 2>&1");
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_NE(third.output.find("6 already done, 0 ran"), std::string::npos) << third.output;
  EXPECT_EQ(finished_counts(results), counts_after);
  CommandResult listed = run_kvbench("grid " + grid + " --results " + results + " --dry-run");
  EXPECT_NE(listed.output.find("6 jobs, 6 done, 0 running, 0 to run"), std::string::npos) << listed.output;
}

TEST(KvbenchGrid, ConcurrentWorkersAndGridsNeverRunAJobTwice) {
  TempDir dir;
  // Jobs long enough that the second process starts before the first has claimed them all (at 48
  // tokens a faster decode let one process finish the grid alone).
  const std::string grid = write_json(dir / "grid.json", small_grid({"8", "12", "16", "20"}, 160));
  const std::string results = dir / "runs";
  // Two grids at once on one directory, one with two worker processes, one running in-process.
  const pid_t a = spawn_kvbench({"grid", grid, "--results", results, "--workers", "2", "--threads", "1"}, dir / "a.log");
  const pid_t b = spawn_kvbench({"grid", grid, "--results", results}, dir / "b.log");
  ASSERT_EQ(wait_exit_code(a), 0) << std::ifstream(dir / "a.log").rdbuf();
  ASSERT_EQ(wait_exit_code(b), 0) << std::ifstream(dir / "b.log").rdbuf();
  std::map<std::string, int> counts = finished_counts(results);
  EXPECT_EQ(counts.size(), 8u);
  for (const auto& [id, n] : counts) EXPECT_EQ(n, 1) << id << " ran " << n << " times";
  EXPECT_EQ(result_ids(results).size(), 8u);
  // The run log names more than one process: the work was shared.
  std::set<int64_t> pids;
  std::ifstream log(fs::path(results) / "runs.log");
  for (std::string line; std::getline(log, line);) pids.insert(nlohmann::json::parse(line)["pid"].get<int64_t>());
  EXPECT_GE(pids.size(), 2u);
  // Each grid's summary accounts for all 8 jobs: ran + finished by the other process.
  for (const char* log_name : {"a.log", "b.log"}) {
    std::stringstream text;
    text << std::ifstream(dir / log_name).rdbuf();
    std::smatch m;
    const std::string out = text.str();
    ASSERT_TRUE(std::regex_search(out, m, std::regex(R"((\d+) jobs: (\d+) already done, (\d+) ran, (\d+) finished by other)")))
        << out;
    EXPECT_EQ(std::stoi(m[2]) + std::stoi(m[3]) + std::stoi(m[4]), std::stoi(m[1])) << log_name << ": " << out;
  }
}

// A GEMM's sums depend on its thread count, so a job's last bits do too: a grid gives a job the
// threads it asks for whether the job runs in a worker or, the last one pending, in the grid's
// own process (where --threads was once ignored).
TEST(KvbenchGrid, AJobGetsTheGridsThreadsWhereverItRuns) {
  TempDir dir;
  const std::string grid = write_json(dir / "grid.json", small_grid({"8", "16"}));
  const std::string results = dir / "runs";
  ASSERT_EQ(run_kvbench("grid " + grid + " --results " + results + " --workers 2 --threads 2 --quiet").exit_code, 0);
  const std::string last = *result_ids(results).begin();
  const auto blas_threads = [&] {
    return nlohmann::json::parse(std::ifstream(fs::path(results) / (last + ".json")))["environment"]["blas_threads"];
  };
  const nlohmann::json in_worker = blas_threads();
  if (in_worker == 0) GTEST_SKIP() << "the BLAS loaded is not OpenBLAS: its thread count is not reported";
  EXPECT_EQ(in_worker, 2);
  fs::remove(fs::path(results) / (last + ".json"));
  ASSERT_EQ(run_kvbench("grid " + grid + " --results " + results + " --workers 2 --threads 2 --quiet").exit_code, 0);
  EXPECT_EQ(blas_threads(), 2);  // the one pending job ran in the grid's process
}

TEST(KvbenchCollect, SummarisesAGridAndReportsMissingCells) {
  TempDir dir;
  const std::string grid = write_json(dir / "grid.json", small_grid({"8", "16"}));
  const std::string results = dir / "runs";
  ASSERT_EQ(run_kvbench("grid " + grid + " --results " + results + " --quiet").exit_code, 0);
  CommandResult csv = run_kvbench("collect " + grid + " --results " + results + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  std::istringstream lines(csv.output);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("id,task,model,policy,policy_params,budget,", 0), 0u) << header;
  EXPECT_NE(header.find(",perplexity,"), std::string::npos) << header;
  int rows = 0;
  for (std::string line; std::getline(lines, line);) ++rows;
  EXPECT_EQ(rows, 4);

  const std::string removed = *result_ids(results).begin();
  fs::remove(fs::path(results) / (removed + ".json"));
  CommandResult partial = run_kvbench("collect " + grid + " --results " + results + " -o " + (dir / "s.jsonl") + " 2>&1");
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_NE(partial.output.find("missing " + removed), std::string::npos) << partial.output;
  std::ifstream jsonl(dir / "s.jsonl");
  int json_rows = 0;
  for (std::string line; std::getline(jsonl, line); ++json_rows) {
    auto row = nlohmann::json::parse(line);
    EXPECT_TRUE(row["metrics"].contains("perplexity"));
    EXPECT_NE(row["id"], removed);
  }
  EXPECT_EQ(json_rows, 3);
}

}  // namespace
}  // namespace kvbench::testing
