// `kvbench bench`: the summary's JSON on stories260K (warm-up runs not counted, the load time and
// the policy's budget reported), and bad counts refused with one error naming the option.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "cli/run_binary.hpp"

namespace kvbench::testing {
namespace {

TEST(BenchCommand, JsonSummaryOfABoundedDecode) {
  CommandResult r = run_kvbench(
      "bench --model stories260K --context 48 --decode 6 --warmup 1 --runs 1 --threads 1 --policy local "
      "--budget 16 --protocol decode --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["warmup"], 1);
  EXPECT_EQ(j["runs"], 1);
  EXPECT_EQ(j["context"], 48);
  EXPECT_EQ(j["policy"], "local");
  EXPECT_EQ(j["budget_tokens"], 16);
  EXPECT_LE(j["max_cache_len"].get<int64_t>(), 16);
  EXPECT_GT(j["load_s"].get<double>(), 0.0);
  EXPECT_GT(j["prefill_tokens_per_s"].get<double>(), 0.0);
  EXPECT_GT(j["decode_tokens_per_s"].get<double>(), 0.0);
}

TEST(BenchCommand, ChunkedAttentionIsAChoiceAndOtherKernelsAreRefused) {
  CommandResult r = run_kvbench("bench --model stories260K --context 16 --decode 2 --runs 1 --attention chunked --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["attention"], "chunked");
  CommandResult bad = run_kvbench("bench --model stories260K --context 16 --attention flash 2>&1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--attention"), std::string::npos) << bad.output;
}

// --trace: a Chrome trace of one more run's decode steps, one "decode_step" event per step with
// the operators inside; a path that cannot be written is refused before anything runs.
TEST(BenchCommand, TraceHoldsEveryDecodeStep) {
  const std::string path = (std::filesystem::temp_directory_path() / "kvbench_bench_trace_test.json").string();
  std::filesystem::remove(path);
  CommandResult r = run_kvbench("bench --model stories260K --context 8 --decode 3 --runs 1 --threads 1 --json --trace " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const auto events = nlohmann::json::parse(in);
  int steps = 0, operators = 0;
  for (const auto& e : events) {
    steps += e["name"] == "decode_step";
    operators += e["name"].get<std::string>().rfind("aten::", 0) == 0;
  }
  EXPECT_EQ(steps, 3);
  EXPECT_GT(operators, 3 * 10);
  std::filesystem::remove(path);
  CommandResult bad = run_kvbench("bench --model stories260K --context 8 --trace /nonexistent-dir/t.json 2>&1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("/nonexistent-dir/t.json: cannot write the trace (--trace)"), std::string::npos) << bad.output;
}

TEST(BenchCommand, NegativeWarmupIsOneClearError) {
  CommandResult r = run_kvbench("bench --model stories260K --context 8 --warmup -1 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--warmup must be >= 0"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kvbench::testing
