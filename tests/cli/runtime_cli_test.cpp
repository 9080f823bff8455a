// The installed binary end to end: it loads libtorch and sentencepiece together (the protobuf
// trap), generates run.c's golden ids, and reports perplexity and errors as documented.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "cli/run_binary.hpp"

namespace kvbench::testing {
namespace {

TEST(KvbenchBinary, GreedyGenerationMatchesRunC) {
  CommandResult r = run_kvbench("generate --model stories260K --prompt '' --max-new-tokens 60 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  std::vector<int64_t> ids = j["generated_ids"];
  const std::vector<int64_t> golden = {403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                                       338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433};
  ASSERT_GE(ids.size(), golden.size());
  EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.begin() + golden.size()), golden);
  EXPECT_NE(j["completion"].get<std::string>().find("Lily"), std::string::npos);
}

TEST(KvbenchBinary, PerplexityJsonHasTheDocumentedFields) {
  const std::string text = std::string(KVBENCH_SHARED_DIR) + "/data/tinystories/TinyStories-valid.head.txt";
  CommandResult r = run_kvbench("perplexity --model stories260K --text-file " + text + " --max-tokens 300 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["tokens"], 299);
  EXPECT_LT(j["perplexity"].get<double>(), 10.0);
  EXPECT_NEAR(std::exp(j["mean_nll"].get<double>()), j["perplexity"].get<double>(), 1e-9);
}

TEST(KvbenchBinary, MissingModelIsOneClearError) {
  CommandResult r = run_kvbench("generate --model /nonexistent/model.bin --prompt hi 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("kvbench: error: /nonexistent/model.bin"), std::string::npos) << r.output;
}

TEST(KvbenchBinary, EveryCommandHasHelp) {
  for (const char* command : {"info", "generate", "perplexity", "policies"}) {
    CommandResult r = run_kvbench(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << command;
  }
}

}  // namespace
}  // namespace kvbench::testing
