// Issue #14 on the real binary: clear one-line errors (never libtorch stack frames), refused
// nonsense options, the long-text warning, FIFOs, Slurm/collect input, and count_score's numeric
// references (in-process, against the golden vectors).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/run_binary.hpp"
#include "error_text.hpp"
#include "harness/job_spec.hpp"
#include "harness/score_metrics.hpp"
#include "harness/temp_dir.hpp"
#include "metrics/python_str.hpp"

namespace kvbench::testing {
namespace {
namespace fs = std::filesystem;



void expect_clear_error(const std::string& args, const std::string& message) {
  CommandResult r = run_kvbench(args + " 2>&1");
  EXPECT_NE(r.exit_code, 0) << args << "\n" << r.output;
  EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
  EXPECT_FALSE(contains(r.output, "Exception raised from")) << args << "\n" << r.output;
  EXPECT_FALSE(contains(r.output, "frame #")) << args << "\n" << r.output;
}

TEST(ReliabilityCli, DeviceDtypeAndNonsenseOptionsAreOneClearLine) {
  expect_clear_error("info --device tpu", "--device must be cpu, cuda or cuda:N, got 'tpu'");
  expect_clear_error("info --device ''", "--device must be cpu, cuda or cuda:N, got ''");
  expect_clear_error("info --dtype float16", "float16 runs on CUDA only");
  expect_clear_error("generate --prompt x --budget ''", "budget is empty");
  expect_clear_error("generate --prompt x --max-new-tokens -1", "--max-new-tokens: must be at least 0, got -1");
  expect_clear_error("perplexity --text-file /dev/null --max-tokens -1", "--max-tokens: must be at least 0, got -1");
  // Not CLI11's "not in range 0.000000 to 1797693134862315708...", 300 digits of DBL_MAX.
  expect_clear_error("perplexity --text-file /dev/null --block 0", "--block: must be at least 1, got 0");
  expect_clear_error("run --task tinystories --limit 2.5", "--limit: must be an integer, got '2.5'");
  expect_clear_error("run --task tinystories --seed -1", "--seed: must be an integer >= 0, got -1");
  // CLI11's own errors get the same prefix and status as every other bad input.
  CommandResult unknown = run_kvbench("run --bogus 2>&1");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "kvbench: error: The following argument was not expected: --bogus "
                                       "(kvbench run --help lists the options)"))
      << unknown.output;
  expect_clear_error("grid grids/nightly.json --threads -2 --dry-run", "--threads");
  expect_clear_error("generate --prompt x --policy kvec --policy-params '{\"beta\": -1}'", "policy_params: field 'beta' of policy 'kvec' must be a number >= 0 and <= 1, got -1");
}

TEST(ReliabilityCli, WrongTokenizerAndSpecialFilesAsTheModel) {
  expect_clear_error("info --tokenizer " + kShared + "/models/llama2-tokenizer/tokenizer.model",
                     "the tokenizer has 32000 tokens, more than the 512 rows of the model's embedding");
  TempDir dir;
  const std::string fifo = dir / "model.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // This blocked forever in open() before.
  CommandResult r = run_kvbench("info --model " + fifo + " --tokenizer " + kShared + "/models/stories260K/tok512.model 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "this is a FIFO")) << r.output;
  expect_clear_error("info --model /dev/zero --tokenizer " + kShared + "/models/stories260K/tok512.model",
                     "this is a character device");
}

TEST(ReliabilityCli, PerplexityWarnsWhenTheTextExceedsTheContextAndNamesAnEmptyFile) {
  const std::string text = kShared + "/data/tinystories/TinyStories-valid.head.txt";
  CommandResult r = run_kvbench("perplexity --text-file " + text + " --max-tokens 600 --json 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: " + text + " has 600 tokens, more than the model's context of 512")) << r.output;
  CommandResult short_text = run_kvbench("perplexity --text-file " + text + " --max-tokens 100 --json 2>&1");
  EXPECT_FALSE(contains(short_text.output, "warning")) << short_text.output;
  TempDir dir;
  const std::string empty = dir / "empty.txt";
  std::ofstream(empty).close();
  expect_clear_error("perplexity --text-file " + empty, empty + ": no text to score");
}

TEST(ReliabilityCli, ATextLongerThanTheContextReportsItsProgress) {
  const std::string text = kShared + "/data/tinystories/TinyStories-valid.head.txt";
  // Not a terminal: one line per tenth of the stream, on stderr; stdout stays the JSON result.
  CommandResult r = run_kvbench("perplexity --text-file " + text +
                                " --max-tokens 1001 --stream --policy streaming_llm --budget 64 --json 2>&1 >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int tenth = 1; tenth <= 9; ++tenth)
    EXPECT_TRUE(contains(r.output, "perplexity: " + std::to_string(tenth * 100) + " of 1000 tokens streamed")) << r.output;
  EXPECT_FALSE(contains(r.output, "1000 of 1000 tokens streamed")) << r.output;
  CommandResult within = run_kvbench("perplexity --text-file " + text + " --max-tokens 300 --stream --json 2>&1 >/dev/null");
  EXPECT_FALSE(contains(within.output, "streamed")) << within.output;
  // One forward pass: a line per layer (stories260K has 5).
  CommandResult oneshot = run_kvbench("perplexity --text-file " + text + " --max-tokens 700 --json 2>&1 >/dev/null");
  ASSERT_EQ(oneshot.exit_code, 0) << oneshot.output;
  for (int layer = 1; layer <= 4; ++layer)
    EXPECT_TRUE(contains(oneshot.output, "perplexity: attention of layer " + std::to_string(layer) + " of 5 done"))
        << oneshot.output;
}

TEST(ReliabilityCli, GridNamesCannotEscapeAndManifestsAreChecked) {
  TempDir dir;
  const std::string grid = dir / "grid.json";
  // A name that would land beside the temporary directory, unique to it (a fixed "/tmp/x" may exist).
  const std::string escaped = fs::path(dir.path()).filename().string() + "-escaped";
  std::ofstream(grid) << R"({"name": "../../)" + escaped + R"(", "include": [{"task": "tinystories", "policy": "full"}]})";
  expect_clear_error("grid " + grid + " --backend slurm --results " + (dir / "runs"), "field 'name'");
  EXPECT_FALSE(fs::exists(dir / ("../" + escaped)));
  fs::create_directories(dir / "array");
  std::ofstream(dir / "array/manifest.json") << R"({"grid": "g", "results": ")" + (dir / "runs") +
                                                     R"(", "jobs": [{"index": 0, "description": "d"}]})";
  expect_clear_error("collect " + (dir / "array"), "manifest.json: jobs[0]: field 'id' (a string) is missing");
}

TEST(ReliabilityCli, DryRunDoesNotCountATruncatedResultAsDone) {
  TempDir dir;
  const nlohmann::json job = {{"task", "tinystories"}, {"policy", "full"}, {"limit", 1}};
  const std::string grid = dir / "g.json";
  std::ofstream(grid) << nlohmann::json{{"name", "g"}, {"include", {job}}}.dump();
  const std::string id = harness::make_job(job).id;
  fs::create_directories(dir / "runs");
  std::ofstream(fs::path(dir / "runs") / (id + ".json")) << R"({"id": ")" + id + R"(", "spec": {"task": "tiny)";
  CommandResult r = run_kvbench("grid " + grid + " --dry-run --results " + (dir / "runs") + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, id + "  invalid-result(will run again: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 jobs, 0 done, 0 running, 1 to run")) << r.output;
}

TEST(ReliabilityCli, CollectReportsInvalidResultsAndCountsCopiesOnce) {
  TempDir dir;
  const std::string runs = dir / "runs";
  fs::create_directories(runs);
  const nlohmann::json result = {{"id", "abc"}, {"spec", {{"task", "tinystories"}}}, {"metrics", {{"perplexity", 2.0}}}};
  std::ofstream(runs + "/abc.json") << result.dump();
  std::ofstream(runs + "/copy-of-abc.json") << result.dump();
  std::ofstream(runs + "/def.json") << R"({"id": "def", "spec": {"task": "tinys)";  // truncated
  // A copy whose id was edited is the same job: known by what its spec and checksums hash to.
  nlohmann::json hashed = result;
  hashed["checksums"] = {{"model", "m"}, {"dataset", "d"}};
  hashed["id"] = "0123456789abcdef";
  std::ofstream(runs + "/ghi.json") << hashed.dump();
  hashed["id"] = "ffffffffffffffff";
  std::ofstream(runs + "/ffffffffffffffff.json") << hashed.dump();
  CommandResult r = run_kvbench("collect " + runs + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "collect: 2 results, 1 invalid")) << r.output;
  EXPECT_TRUE(contains(r.output, runs + "/ghi.json: the same result as " + runs + "/ffffffffffffffff.json")) << r.output;
  EXPECT_TRUE(contains(r.output, "invalid " + runs + "/def.json")) << r.output;
  EXPECT_TRUE(contains(r.output, "the same result as")) << r.output;
}

TEST(ReliabilityCli, CollectOfADirectoryWithoutResultsFails) {
  TempDir dir;
  const std::string empty = dir / "empty";
  fs::create_directories(empty);
  std::ofstream(empty + "/notes.txt") << "not a result";
  std::ofstream(empty + "/.abc.json.123.tmp") << "{}";
  CommandResult r = run_kvbench("collect " + empty + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "kvbench: error: " + empty +
                                     ": the directory holds no result files (*.json): nothing to collect"))
      << r.output;
}

TEST(CountScore, NumericReferencesAreReadAsPythonStrLikeTheReference) {
  std::ifstream in(kShared + "/golden/longbench.json");
  const nlohmann::json golden = nlohmann::json::parse(in);
  TempDir dir;
  const std::string input = dir / "count.jsonl";
  std::vector<double> expected;
  {
    std::ofstream out(input);
    for (const auto& c : golden["cases"]) {
      if (c["metric"] != "count_score") continue;
      out << nlohmann::json{{"prediction", c["prediction"]}, {"references", c["ground_truths"]}}.dump() << "\n";
      expected.push_back(c["max_score"]);
    }
  }
  int numeric = 0;
  for (const auto& c : golden["cases"])
    if (c["metric"] == "count_score" && !c["ground_truths"][0].is_string()) ++numeric;
  ASSERT_GT(numeric, 0) << "the golden file has no numeric references any more";
  auto scorer = harness::make_metric_scorer("longbench.count_score", {});
  const auto examples = harness::read_score_examples(input, *scorer);
  const nlohmann::json scored = scorer->score(examples, /*per_example=*/true);
  ASSERT_EQ(scored["per_example"].size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(scored["per_example"][i]["score"], expected[i]) << i;
  // Other metrics still want strings.
  auto f1 = harness::make_metric_scorer("longbench.qa_f1_score", {});
  std::ofstream(dir / "n.jsonl") << R"({"prediction": "21", "references": [21]})" << "\n";
  EXPECT_THROW(harness::read_score_examples(dir / "n.jsonl", *f1), std::invalid_argument);
}

TEST(CountScore, PythonStrOfNumbers) {
  EXPECT_EQ(metrics::python_int_str(21), "21");
  EXPECT_EQ(metrics::python_float_str(21.0), "21.0");
  EXPECT_EQ(metrics::python_float_str(2.5), "2.5");
  EXPECT_EQ(metrics::python_float_str(0.1), "0.1");
  EXPECT_EQ(metrics::python_float_str(1e16), "1e+16");
  EXPECT_EQ(metrics::python_float_str(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(metrics::python_float_str(0.0001), "0.0001");
  EXPECT_EQ(metrics::python_float_str(1e-05), "1e-05");
  EXPECT_EQ(metrics::python_float_str(-0.0), "-0.0");
  EXPECT_EQ(metrics::python_float_str(1.5e300), "1.5e+300");
  EXPECT_EQ(metrics::python_float_str(123456789.125), "123456789.125");
}

}  // namespace
}  // namespace kvbench::testing
