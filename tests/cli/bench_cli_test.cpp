// `kvbench bench`: the summary's JSON on stories260K (warm-up runs not counted, the load time and
// the policy's budget reported), a grid of cells and contexts in one process, and bad input
// refused with one error naming the option or the cell.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace kvbench::testing {
namespace {

// `bench --json` prints a JSON object per row, one per line; other lines (stderr's) are skipped.
std::vector<nlohmann::json> json_rows(const std::string& output) {
  std::istringstream lines(output);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') rows.push_back(nlohmann::json::parse(line));
  return rows;
}

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
  EXPECT_GE(j["kv_bytes_allocated_peak"].get<int64_t>(), j["kv_bytes_peak"].get<int64_t>());
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

// split_k runs on CUDA, in a build with the kernel: on the CPU it is refused before the model
// loads, by the option and by a cell, with the reason.
TEST(BenchCommand, SplitKAttentionIsRefusedOnTheCpu) {
  for (const std::string& how : {std::string("--attention split_k"), std::string("--cell '{\"attention\": \"split_k\"}'")}) {
    CommandResult r = run_kvbench("bench --model stories260K --context 16 --decode 2 --runs 1 " + how + " 2>&1");
    EXPECT_NE(r.exit_code, 0) << how;
    EXPECT_NE(r.output.find("attention \"split_k\""), std::string::npos) << how << ": " << r.output;
    EXPECT_TRUE(r.output.find("CUDA") != std::string::npos) << how << ": " << r.output;
  }
}

// CUDA graphs replay on CUDA, in a build with them: on the CPU they are refused before the model
// loads, by the flag and by a cell; a row without them says so.
TEST(BenchCommand, CudaGraphsAreRefusedOnTheCpu) {
  for (const std::string& how : {std::string("--cuda-graphs"), std::string("--cell '{\"cuda_graphs\": true}'")}) {
    CommandResult r = run_kvbench("bench --model stories260K --context 16 --decode 2 --runs 1 " + how + " 2>&1");
    EXPECT_NE(r.exit_code, 0) << how;
    EXPECT_NE(r.output.find("CUDA graphs run on CUDA only, and the device is \"cpu\""), std::string::npos) << how << ": " << r.output;
  }
  CommandResult r = run_kvbench("bench --model stories260K --context 16 --decode 2 --runs 1 --json --cell '{\"cuda_graphs\": false}'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json row = nlohmann::json::parse(r.output);
  EXPECT_EQ(row["cuda_graphs"], false);
  EXPECT_EQ(row["graphed_decode_steps"], 0);
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

// One process measures a grid: every --cell at every --context, cell by cell, one JSON object per
// line; keys a cell does not name come from the command line (--budget, --protocol here).
TEST(BenchCommand, CellsRunAtEveryContextWithTheCommandLineAsDefaults) {
  CommandResult r = run_kvbench(
      "bench --model stories260K --context 40,24 --decode 3 --runs 1 --threads 1 --budget 12 --protocol decode --json "
      "--cell '{\"policy\": \"full\", \"budget\": \"full\", \"protocol\": \"oneshot\"}' "
      "--cell '{\"policy\": \"h2o\"}' --cell '{\"policy\": \"snapkv\", \"budget\": \"25%\", "
      "\"protocol\": \"oneshot\", \"policy_params\": {\"window\": 4}, \"attention\": \"chunked\"}'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<nlohmann::json> rows = json_rows(r.output);
  ASSERT_EQ(rows.size(), 6u) << r.output;
  const std::vector<std::pair<std::string, int64_t>> order{{"full", 40},  {"full", 24},   {"h2o", 40},
                                                           {"h2o", 24},   {"snapkv", 40}, {"snapkv", 24}};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["policy"], order[i].first) << i;
    EXPECT_EQ(rows[i]["context"], order[i].second) << i;
    EXPECT_TRUE(rows[i]["device_peak_allocated_bytes"].is_null()) << "no allocator counters on the CPU";
    EXPECT_EQ(rows[i]["load_s"], rows[0]["load_s"]) << "one model load for every row";
  }
  EXPECT_EQ(rows[0]["max_cache_len"], 40 + 3);  // every decoded token is fed back
  EXPECT_EQ(rows[1]["max_cache_len"], 24 + 3);
  for (size_t i : {2, 3}) {
    EXPECT_EQ(rows[i]["protocol"], "decode");
    EXPECT_EQ(rows[i]["budget_tokens"], 12);
    EXPECT_EQ(rows[i]["max_cache_len"], 12);
  }
  EXPECT_EQ(rows[4]["budget_tokens"], 10);  // 25 % of 40
  EXPECT_EQ(rows[5]["budget_tokens"], 6);   // 25 % of 24
  EXPECT_EQ(rows[4]["policy_params"]["window"], 4);
  EXPECT_EQ(rows[0]["attention"], "auto");
  EXPECT_EQ(rows[5]["attention"], "chunked");
}

// A row that fails (here one that cannot fit: 10M prompt tokens need tens of GB, more than the
// address-space limit leaves) is reported in its place, the rows after it still run, and the exit
// status says so. It is refused from its shapes before it allocates (issue #31, U4: 14.7 GB went
// before "can't allocate"), with the estimate and what is available.
TEST(BenchCommand, AFailingRowIsReportedAndTheOthersRun) {
  CommandResult r = run_shell("ulimit -v 8000000 && " KVBENCH_BINARY
                              " bench --model stories260K --context 8,10000000,16 --decode 2 --runs 1 --threads 1 "
                              "--json 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::vector<nlohmann::json> rows = json_rows(r.output);
  ASSERT_EQ(rows.size(), 3u) << r.output;
  EXPECT_EQ(rows[0]["context"], 8);
  EXPECT_GT(rows[0]["prefill_tokens_per_s"].get<double>(), 0.0);
  EXPECT_EQ(rows[1]["context"], 10000000);
  EXPECT_FALSE(rows[1].contains("prefill_tokens_per_s"));
  const std::string error = rows[1]["error"];
  EXPECT_NE(error.find("10000000 prompt tokens and 2 decode steps would allocate at least "), std::string::npos) << error;
  EXPECT_NE(error.find("(KV cache 13.6 GiB, forward activations "), std::string::npos) << error;
  EXPECT_NE(error.find(" available (ulimit -v)"), std::string::npos) << error;
  EXPECT_EQ(rows[1]["error"].get<std::string>().find("frame #"), std::string::npos) << "no libtorch backtrace";
  EXPECT_EQ(rows[2]["context"], 16);
  EXPECT_GT(rows[2]["prefill_tokens_per_s"].get<double>(), 0.0);
  EXPECT_NE(r.output.find("1 of 3 rows failed"), std::string::npos) << r.output;
}

// Bad cells are refused before the model loads, with the cell's number and what is wrong.
TEST(BenchCommand, BadCellsAreOneClearErrorNamingTheCell) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"'{\"policy\": \"h2o\", \"budjet\": 3}'", "--cell 2: unknown key \"budjet\""},
      {"'{\"block\": 0}'", "--cell 2: \"block\" must be a positive integer"},
      {"'{\"budget\": -3}'", "--cell 2: \"budget\" must be a token count"},
      {"'{\"policy\": \"nope\"}'", "--cell 2: unknown policy 'nope'"},
      {"'{\"policy\": \"snapkv\", \"policy_params\": {\"windoe\": 4}}'", "--cell 2: policy_params: field 'windoe' is not a parameter of policy 'snapkv'"},
      {"'{\"protocol\": \"replay\"}'", "--cell 2: protocol must be oneshot, stream or decode"},
      {"'{\"attention\": \"flash\"}'", "--cell 2: \"attention\" must be one of \"auto\", \"chunked\", \"split_k\""},
      {"'{\"cuda_graphs\": 1}'", "--cell 2: \"cuda_graphs\" must be true or false, got 1"},
      {"'{\"policy\": '", "--cell 2: cell:1: invalid JSON"}};
  for (const auto& [cell, message] : cases) {
    CommandResult r = run_kvbench("bench --model stories260K --context 8 --cell '{}' --cell " + cell + " 2>&1");
    EXPECT_NE(r.exit_code, 0) << cell;
    EXPECT_NE(r.output.find(message), std::string::npos) << cell << "\n" << r.output;
  }
  CommandResult trace = run_kvbench("bench --model stories260K --context 8,16 --trace /tmp/kvbench_two_rows.json 2>&1");
  EXPECT_NE(trace.exit_code, 0);
  EXPECT_NE(trace.output.find("--trace records one cell at one context; this command has 2"), std::string::npos)
      << trace.output;
  CommandResult zero = run_kvbench("bench --model stories260K --context 8,0 2>&1");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.output.find("--context must be at least 1, got 0"), std::string::npos) << zero.output;
}

TEST(BenchCommand, NegativeWarmupIsOneClearError) {
  CommandResult r = run_kvbench("bench --model stories260K --context 8 --warmup -1 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--warmup must be >= 0"), std::string::npos) << r.output;
}

TEST(BenchCommand, NoDecodeStepsGiveNoRatesAndALongContextAWarning) {
  CommandResult r = run_kvbench("bench --model stories260K --context 600 --decode 0 --runs 1 --threads 1 --json 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: 600 tokens (context + --decode) is more than the model's context of 512 (seq_len in "
                          "the llama2.c header; positions beyond it were never trained"),
            std::string::npos)
      << r.output;
  const nlohmann::json row = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_TRUE(row["decode_tokens_per_s"].is_null()) << row;  // not a rate of 0 over no step
  EXPECT_TRUE(row["decode_step_us"].is_null());
  EXPECT_TRUE(row["policy_us_per_decode_step"].is_null());
  EXPECT_GT(row["prefill_tokens_per_s"].get<double>(), 0);
}

TEST(BenchCommand, OptionsOfTheOtherModeAreRefusedNotIgnored) {
  // `--program bench_bleu` alone once ran the model table and exited 0, the option unread.
  for (const char* options : {"--program bench_bleu", "--filter BM_Rouge"}) {
    CommandResult r = run_kvbench(std::string("bench --model stories260K --context 8 ") + options + " 2>&1");
    EXPECT_NE(r.exit_code, 0) << options;
    EXPECT_NE(r.output.find("requires --programs"), std::string::npos) << r.output;
  }
  CommandResult threads = run_kvbench("bench --model stories260K --context 8 --threads -1 2>&1");
  EXPECT_NE(threads.exit_code, 0);
  EXPECT_NE(threads.output.find("--threads: Value -1 not in range"), std::string::npos) << threads.output;
}

// Issue #31, H6: context + --decode is bounded (2^24 positions, where float32 RoPE angles stop
// being exact) before the model loads; --decode 1e12 ran with no end. `timeout` turns the old
// endless run into a failure instead of a hang.
TEST(BenchCommand, ContextPlusDecodeIsBoundedBeforeAnythingRuns) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--context 8 --decode 1000000000000",
       "--decode 1000000000000: 1000000000000 positions, more than kvbench's bound of 16777216 per sequence"},
      {"--context 8 --decode 16777210", "--context 8 with --decode 16777210: 16777218 positions, more than kvbench's bound"},
      {"--context 8,40000000", "--context 40000000 with --decode 64: 40000000 positions, more than kvbench's bound"},
      {"--context 8 --decode 1e12", "--decode"}};  // a float is refused, never cut to an integer
  for (const auto& [options, message] : cases) {
    CommandResult r = run_shell("timeout 60 " KVBENCH_BINARY " bench --model stories260K --runs 1 " + options + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << options << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << options << "\n" << r.output;
    EXPECT_EQ(r.output.find("| context |"), std::string::npos) << "refused before the table: " << r.output;
  }
}

// Past the trained context the decode steps show their progress on stderr (a line per tenth when
// stderr is not a terminal); within it, nothing.
TEST(BenchCommand, DecodingPastTheContextShowsItsProgress) {
  CommandResult r = run_kvbench("bench --model stories260K --context 500 --decode 30 --runs 1 --threads 1 --json 2>&1 >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int tenth = 1; tenth <= 9; ++tenth)
    EXPECT_NE(r.output.find("bench: context 500, full: " + std::to_string(3 * tenth) + " of 30 decode steps"),
              std::string::npos)
        << r.output;
  CommandResult within = run_kvbench("bench --model stories260K --context 400 --decode 30 --runs 1 --threads 1 --json 2>&1 >/dev/null");
  EXPECT_EQ(within.output.find("decode steps"), std::string::npos) << within.output;
}

// Issue #31, U8: a vector option split a value in brackets at its commas, so '[1,2]' reached the
// cell parser as "1" (and "2"); each --cell is one JSON value, whole.
TEST(BenchCommand, ACellReachesTheJsonParserWhole) {
  for (const std::string cell : {"[1,2]", "[\"policy\", \"h2o\"]"}) {
    CommandResult r = run_kvbench("bench --model stories260K --context 8 --cell '" + cell + "' 2>&1");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("--cell 1: a cell is a JSON object, got " + nlohmann::json::parse(cell).dump()),
              std::string::npos)
        << r.output;
  }
  CommandResult two = run_kvbench("bench --model stories260K --context 8 --decode 1 --runs 1 --json --cell "
                                  "'{\"policy\": \"h2o\", \"budget\": 4}' --cell '{\"policy\": \"local\", \"budget\": 4}'");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  const std::vector<nlohmann::json> rows = json_rows(two.output);
  ASSERT_EQ(rows.size(), 2u) << two.output;
  EXPECT_EQ(rows[0]["policy"], "h2o");
  EXPECT_EQ(rows[1]["budget_tokens"], 4);
}

}  // namespace
}  // namespace kvbench::testing
