// Issue #31 ("Trust") on the real binary: hostile input to generate, perplexity, tokenize and the
// log-likelihood engine gets one clear error or a correct result. Where the old behaviour was an
// endless run, the command runs under `timeout`, so the old binary fails these tests instead of
// hanging them; memory bounds are set with `ulimit -v`, never measured in time.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/run_binary.hpp"
#include "error_text.hpp"
#include "harness/temp_dir.hpp"

namespace kvbench::testing {
namespace {
namespace fs = std::filesystem;



size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CommandResult kvbench_within(const std::string& limits, const std::string& args) {
  return run_shell(limits + " timeout 120 " KVBENCH_BINARY " " + args + " 2>&1");
}

// H6: prompt + --max-new-tokens is bounded by 2^24 positions (float32 RoPE angles stop being exact
// past it) and refused before the model runs; a float is refused, never cut to an integer.
TEST(TrustCli, GenerationLengthIsBoundedUpFront) {
  CommandResult huge = kvbench_within("", "generate --prompt x --max-new-tokens 100000000000 --no-stop-at-eos");
  EXPECT_EQ(huge.exit_code, 1) << huge.output;
  EXPECT_TRUE(contains(huge.output, "kvbench: error: --max-new-tokens 100000000000: 100000000000 positions, more than "
                                    "kvbench's bound of 16777216 per sequence"))
      << huge.output;
  CommandResult sum = kvbench_within("", "generate --prompt 'Once upon a time' --max-new-tokens 16777215 --no-stop-at-eos");
  EXPECT_EQ(sum.exit_code, 1) << sum.output;
  EXPECT_TRUE(contains(sum.output, "with --max-new-tokens 16777215: 1677722")) << sum.output;
  CommandResult real = kvbench_within("", "generate --prompt x --max-new-tokens 1e11");
  EXPECT_EQ(real.exit_code, 1) << real.output;
  EXPECT_TRUE(contains(real.output, "--max-new-tokens: must be an integer, got '1e11'")) << real.output;
}

// U4 for generate: a full cache of 16M positions needs ~22 GiB; under a 3 GB address space it is
// refused from its shapes before the first token instead of running for hours into "can't allocate".
TEST(TrustCli, AGenerationThatCannotFitIsRefusedBeforeItRuns) {
  CommandResult r = kvbench_within("ulimit -v 3000000;", "generate --prompt x --max-new-tokens 16000000 --no-stop-at-eos");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "tokens with --max-new-tokens 16000000 would allocate at least 21.8 GiB "
                                 "(KV cache 21.8 GiB, forward activations "))
      << r.output;
  EXPECT_TRUE(contains(r.output, "available (ulimit -v)")) << r.output;
}

// H6: past the trained context, one warning naming the context and its config field, and the
// progress on stderr; a cache-slot policy that keeps the cache within the context gets no warning.
TEST(TrustCli, GenerationPastTheContextWarnsOnceAndShowsProgress) {
  CommandResult r = run_kvbench("generate --prompt 'Once upon a time' --max-new-tokens 600 --no-stop-at-eos --json "
                                "2>&1 >/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "warning"), 1u) << r.output;
  EXPECT_TRUE(contains(r.output, "kvbench generate: warning: 513 positions (the prompt's ")) << r.output;
  EXPECT_TRUE(contains(r.output, "generated) are more than the model's context of 512 (seq_len in the llama2.c header; "
                                 "positions beyond it were never trained)"))
      << r.output;
  for (int tenth = 1; tenth <= 9; ++tenth)
    EXPECT_TRUE(contains(r.output, "generate: " + std::to_string(60 * tenth) + " of 600 tokens")) << r.output;
  CommandResult streaming = run_kvbench("generate --prompt 'Once upon a time' --max-new-tokens 600 --no-stop-at-eos "
                                        "--policy streaming_llm --budget 64 --protocol decode --json 2>&1 >/dev/null");
  ASSERT_EQ(streaming.exit_code, 0) << streaming.output;
  EXPECT_FALSE(contains(streaming.output, "warning")) << streaming.output;
  CommandResult within = run_kvbench("generate --prompt 'Once upon a time' --max-new-tokens 100 --json 2>&1 >/dev/null");
  EXPECT_EQ(within.output, "") << within.output;
}

// W6: invalid UTF-8 is one error naming where it is: the text file and the byte offset, whichever
// tokenizer the model has (sentencepiece, or a tokenizer.json given with --tokenizer); --text and
// --prompt by their option.
TEST(TrustCli, InvalidUtf8NamesTheFileAndTheByte) {
  TempDir dir;
  const std::string bad = dir / "t.txt";
  std::ofstream(bad, std::ios::binary) << "x\xff\xc3\x28";
  for (const std::string tokenizer : {std::string(), " --tokenizer " + kShared + "/models/llama3-tokenizer"}) {
    CommandResult r = run_kvbench("perplexity --model stories260K --text-file " + bad + tokenizer + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "kvbench: error: " + bad + ": not valid UTF-8 at byte 1")) << r.output;
  }
  // Far into the file and past --max-tokens: the file is refused all the same (one rule for it).
  const std::string late = dir / "late.txt";
  std::ofstream(late, std::ios::binary) << std::string(10000, 'a') << " \xc3\x28";
  CommandResult r = run_kvbench("perplexity --text-file " + late + " --max-tokens 5 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, late + ": not valid UTF-8 at byte 10001")) << r.output;
  for (const std::string tokenizer : {kShared + "/models/stories260K/tok512.model", kShared + "/models/llama3-tokenizer"}) {
    CommandResult text = run_kvbench("tokenize --tokenizer " + tokenizer + " --text \"$(printf 'x\\377\\303(')\" 2>&1");
    EXPECT_EQ(text.exit_code, 1) << text.output;
    EXPECT_TRUE(contains(text.output, "kvbench: error: --text: not valid UTF-8 at byte 1")) << text.output;
  }
  CommandResult prompt = run_kvbench("generate --prompt \"$(printf 'x\\377')\" 2>&1");
  EXPECT_EQ(prompt.exit_code, 1) << prompt.output;
  EXPECT_TRUE(contains(prompt.output, "kvbench: error: --prompt: not valid UTF-8 at byte 1")) << prompt.output;
}

// H7: --max-tokens 200 of a 20 MB one-line text tokenized it whole (2.5 GB, 40 s); only a prefix
// is tokenized now, so it runs within a 1.5 GB address space, and its score is the one of a short
// file holding the text's beginning (tokenized whole).
TEST(TrustCli, MaxTokensTokenizesOnlyAPrefix) {
  std::string story = read(kTinyStories);
  for (char& c : story)
    if (c == '\n') c = ' ';
  TempDir dir;
  const std::string big = dir / "big.txt";
  {
    std::ofstream out(big, std::ios::binary);
    for (size_t written = 0; written < 20'000'000; written += story.size() + 1) out << story << ' ';
  }
  const std::string small = dir / "small.txt";
  std::ofstream(small, std::ios::binary) << story.substr(0, story.find(' ', 1500));
  CommandResult whole = run_kvbench("perplexity --text-file " + small + " --max-tokens 200 --json");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  ASSERT_EQ(nlohmann::json::parse(whole.output)["tokens"], 199) << "the short file has more than 200 tokens";
  CommandResult prefix = kvbench_within("ulimit -v 1500000;", "perplexity --text-file " + big + " --max-tokens 200 --json");
  ASSERT_EQ(prefix.exit_code, 0) << prefix.output;
  EXPECT_EQ(nlohmann::json::parse(prefix.output), nlohmann::json::parse(whole.output));
  // Without --max-tokens, a text too long to score in the memory there is is refused after a
  // prefix of one token more than fits, naming the file, the estimate and what is available.
  CommandResult all = kvbench_within("ulimit -v 2000000;", "perplexity --text-file " + big);
  EXPECT_EQ(all.exit_code, 1) << all.output;
  EXPECT_TRUE(contains(all.output, "kvbench: error: " + big + ": scoring more than ")) << all.output;
  EXPECT_TRUE(contains(all.output, " tokens would allocate at least ")) << all.output;
  EXPECT_TRUE(contains(all.output, "available (ulimit -v)")) << all.output;
}

// JSON options reach their parser whole (U8: only vector options split '[1,2]'; these are checked
// as objects with the text as given).
TEST(TrustCli, JsonOptionsAreParsedWhole) {
  CommandResult policy = run_kvbench("generate --prompt x --policy-params '[1, 2]' 2>&1");
  EXPECT_EQ(policy.exit_code, 1) << policy.output;
  EXPECT_TRUE(contains(policy.output, "--policy-params must be a JSON object, got [1, 2]")) << policy.output;
  CommandResult task = run_kvbench("run --task lm_eval/copa --task-params '[1,2]' --no-store 2>&1");
  EXPECT_EQ(task.exit_code, 1) << task.output;
  EXPECT_TRUE(contains(task.output, "--task-params must be a JSON object, got [1,2]")) << task.output;
}

// The log-likelihood engine: a checkpoint whose finite weights overflow in the forward fails the
// job naming the model, where NaN log-likelihoods were compared as "not better", choice 0 won
// and acc came out as a plausible number.
TEST(TrustCli, NonFiniteLogLikelihoodsFailTheJob) {
  TempDir dir;
  std::string bytes = read(kShared + "/models/stories260K/stories260K.bin");
  int32_t header[7];
  std::memcpy(header, bytes.data(), sizeof header);
  const int64_t dim = header[0], layers = header[2], vocab = header[5] < 0 ? -header[5] : header[5];
  // llama2.c order: header, token embedding [vocab, dim], attention norms [layers, dim], wq ...
  const size_t wq = sizeof header + sizeof(float) * static_cast<size_t>(vocab * dim + layers * dim);
  const float huge = 3e38f;
  for (int64_t i = 0; i < dim * dim; ++i) std::memcpy(&bytes[wq + sizeof(float) * i], &huge, sizeof huge);
  std::ofstream(dir / "model.bin", std::ios::binary) << bytes;
  fs::copy_file(kShared + "/models/stories260K/tok512.model", dir / "tok512.model");
  CommandResult r = run_kvbench("run --task lm_eval/copa --task-params '{\"shots\": 0}' --limit 1 --no-store --model " +
                                dir.path() + " --data-root " + KVBENCH_TESTS_DIR + "/fixtures 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, dir / "model.bin" + ": the forward pass gave non-finite logits")) << r.output;
}

}  // namespace
}  // namespace kvbench::testing
