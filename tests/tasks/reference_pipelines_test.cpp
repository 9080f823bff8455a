// kvbench's prompts, decoding settings and scores against what the reference code itself produced
// when run (scripts/record_task_references.py -> tests/tasks/golden_reference/*.json): the
// KVCache-Factory needle tester, HeadKV's needle score, KVCache-Factory's and kvpress's LongBench
// pipelines, lost-in-the-middle's Llama-2 chat prompt and BUZZ's multi-document QA.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "datasets/jsonl_reader.hpp"
#include "datasets/sha256.hpp"
#include "metrics/unicode.hpp"
#include "models/model_loader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/longbench_pipelines.hpp"
#include "tasks/multidoc_qa_data.hpp"
#include "tasks/needle_haystack.hpp"
#include "tasks/run_task.hpp"
#include "task_fixtures.hpp"

namespace kvbench::tasks {
namespace {

using testing::read_file;
using testing::shared_data;

nlohmann::json reference(const std::string& name) {
  return nlohmann::json::parse(read_file((testing::tests_dir() / "tasks" / "golden_reference" / name).string()));
}

const models::Tokenizer& pipeline_tokenizer() {
  static models::Tokenizer tok(models::locate_model("stories260K", "").tokenizer_path);
  return tok;
}

std::vector<int64_t> ids_of(const nlohmann::json& list) { return list.get<std::vector<int64_t>>(); }

std::vector<int64_t> encode(const std::string& text, bool bos) {
  const std::vector<int> ids = pipeline_tokenizer().encode(text, bos);
  return {ids.begin(), ids.end()};
}

const nlohmann::json& longbench_prompts() {
  static const nlohmann::json p = nlohmann::json::parse(read_file(shared_data("longbench_ref/dataset2prompt.json")));
  return p;
}

const nlohmann::json& longbench_maxlens() {
  static const nlohmann::json p = nlohmann::json::parse(read_file(shared_data("longbench_ref/dataset2maxlen.json")));
  return p;
}

std::string longbench_file(const std::string& subset) {
  const std::string staged = shared_data("longbench/" + subset + ".jsonl");
  return std::filesystem::exists(staged) ? staged : testing::fixture("longbench/" + subset + ".jsonl");
}

// --- needle ---------------------------------------------------------------------------------

// The current KVCache-Factory tester (c97f9d7: sorted glob, no special tokens in the counts):
// kvbench's default prompts are its prompts, byte for byte.
TEST(NeedleReference, PromptsEqualKvcacheFactorysTesterAtDepthsZeroAndHundred) {
  const nlohmann::json ref = reference("needle_kvcache_factory.json");
  EXPECT_EQ(ref["retrieval_question"], kKvcacheFactoryQuestion);
  for (const auto& cell : ref["cells"]) {
    nlohmann::json r = run_task({{"task", "needle"},
                                 {"task_params",
                                  {{"context_lengths", {cell["context_length"]}},
                                   {"depth_percents", {cell["depth_percent"]}},
                                   {"final_context_length_buffer", cell["final_context_length_buffer"]},
                                   {"max_new_tokens", 2},
                                   {"record_prompts", true}}}});
    ASSERT_EQ(r["examples"].size(), 1u);
    EXPECT_EQ(r["examples"][0]["prompt"], cell["prompt"]) << cell["context_length"] << " " << cell["depth_percent"];
  }
}

// gkamradt, HeadKV and KVCache-Factory before 485af3c walk glob()'s unsorted (file-system)
// order: haystack_files reproduces an order such a run saw, haystack_order "directory" walks it.
TEST(NeedleReference, HaystackOrderIsSortedByDefaultOrGivenExplicitly) {
  const nlohmann::json ref = reference("needle_kvcache_factory.json");
  const nlohmann::json& cell = ref["cells"][0];
  auto prompt_with = [&](const nlohmann::json& extra) {
    nlohmann::json params = {{"context_lengths", {cell["context_length"]}},
                             {"depth_percents", {cell["depth_percent"]}},
                             {"final_context_length_buffer", cell["final_context_length_buffer"]},
                             {"max_new_tokens", 1},
                             {"record_prompts", true}};
    params.update(extra);
    return run_task({{"task", "needle"}, {"task_params", params}})["examples"][0]["prompt"].get<std::string>();
  };
  std::vector<std::string> sorted = ref["haystack_glob_order"].get<std::vector<std::string>>();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(prompt_with({{"haystack_order", "sorted"}}), cell["prompt"].get<std::string>());
  EXPECT_EQ(prompt_with({{"haystack_files", sorted}}), cell["prompt"].get<std::string>());
  // copy.txt ("July 2006 ...") first: the haystack after the needle starts with it.
  std::vector<std::string> copy_first = sorted;
  std::rotate(copy_first.begin(), std::find(copy_first.begin(), copy_first.end(), "copy.txt"), copy_first.end());
  const std::string reordered = prompt_with({{"haystack_files", copy_first}});
  EXPECT_NE(reordered.find("day.\n July 2006\nWhen I was in high school"), std::string::npos) << reordered.substr(0, 300);
  std::vector<std::string> listed;
  for (const auto& f : haystack_files(shared_data("needle_haystack/PaulGrahamEssays"), "directory"))
    listed.push_back(std::filesystem::path(f).filename().string());
  EXPECT_EQ(prompt_with({{"haystack_order", "directory"}}), prompt_with({{"haystack_files", listed}}));
  EXPECT_NE(testing::error_of([&] { prompt_with({{"haystack_order", "random"}}); }).find("haystack_order"), std::string::npos);
  EXPECT_NE(testing::error_of([&] { prompt_with({{"haystack_files", {"../x.txt"}}}); }).find("haystack_files"), std::string::npos);
}

TEST(NeedleReference, StopsAreNotMaskedAtTheFirstStepAsInKvcacheFactorysGenerate) {
  const nlohmann::json ref = reference("needle_kvcache_factory.json");
  ASSERT_FALSE(ref["generate_masks_stop_at_first_step"].get<bool>());
  nlohmann::json r = run_task({{"task", "needle"},
                               {"limit", 1},
                               {"task_params", {{"context_lengths", {256}}, {"depth_percents", {50}}, {"max_new_tokens", 3}}}});
  const auto& dec = r["settings"]["resolved"]["decoding"];
  EXPECT_EQ(dec["min_new_tokens"], 0);
  EXPECT_EQ(dec["stop_at_eos"], true);
  EXPECT_EQ(dec["stop_token_ids"], nlohmann::json::array({pipeline_tokenizer().encode("\n", false).back()}));
  EXPECT_EQ(dec["max_new_tokens"], 3);
}

TEST(NeedleReference, HeadkvScoreEqualsRunNeedleVisulize) {
  const nlohmann::json ref = reference("needle_headkv_score.json");
  ASSERT_GE(ref["cases"].size(), 5u);
  for (const auto& c : ref["cases"]) {
    const std::string response = c["response"];
    EXPECT_NEAR(headkv_needle_score(kNeedleAnswer, response), c["score"].get<double>(), 1e-12) << response;
  }
  // A correct answer scores 100 (ROUGE-1 recall against the whole needle gives 57.1).
  const NeedleScores s = score_needle_response(kNeedle, kNeedleAnswer, "eat a sandwich and sit in Dolores Park on a sunny day.",
                                               {"sandwich"});
  EXPECT_DOUBLE_EQ(s.headkv, 100.0);
  EXPECT_LT(s.rouge1_recall, 60.0);
}

TEST(NeedleTask, DefaultGridSkipsTheLengthThatCannotHoldTheNeedle) {
  nlohmann::json r = run_task({{"task", "needle"}, {"limit", 1}, {"task_params", {{"max_new_tokens", 2}}}});
  EXPECT_EQ(r["metrics"]["skipped_lengths"], nlohmann::json::array({128}));
  EXPECT_EQ(r["examples"][0]["context_length"], 256);
  const std::string error = testing::error_of(
      [] { run_task({{"task", "needle"}, {"task_params", {{"context_lengths", {100, 120}}}}}); });
  EXPECT_NE(error.find("no context length fits"), std::string::npos) << error;
}

TEST(NeedleTask, CustomNeedleNeedsItsAnswerForHeadkvsScore) {
  const std::string error = testing::error_of([] {
    run_task({{"task", "needle"}, {"task_params", {{"needle", "\nThe code is 42.\n"}}}});
  });
  EXPECT_NE(error.find("needle_answer"), std::string::npos) << error;
}

// --- LongBench: KVCache-Factory -------------------------------------------------------------

TEST(LongBenchKvcacheFactory, ModelTableIsRunLongbenchs) {
  const nlohmann::json ref = reference("longbench_kvcache_factory.json");
  for (const auto& [key, value] : ref["model2maxlen"].items()) EXPECT_EQ(longbench::kvcache_factory_max_length(key), value) << key;
  EXPECT_EQ(longbench::kvcache_factory_max_length("meta-llama/Meta-Llama-3-8B-Instruct"), 7950);
  EXPECT_THROW(longbench::kvcache_factory_max_length("stories260K"), std::invalid_argument);
}

TEST(LongBenchKvcacheFactory, FedIdsEqualRunLongbenchs) {
  const nlohmann::json ref = reference("longbench_kvcache_factory.json");
  int checked = 0;
  for (const auto& run : ref["runs"]) {
    const std::string subset = run["subset"], path = run["model_path"];
    // run_longbench.py wraps with "[INST] {p} [/INST]" only when the path contains "llama2".
    std::string lower = path;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const std::string chat = lower.find("llama2") != std::string::npos ? "llama2-meta" : "none";
    int64_t max_length = 0;  // run_longbench.py: the last key of model2maxlen found in the lower-cased path
    for (const auto& [key, value] : run["model2maxlen"].items())
      if (lower.find(key) != std::string::npos) max_length = value;
    if (path != "stories260K-test") EXPECT_EQ(longbench::kvcache_factory_max_length(path), max_length);
    const auto records = datasets::read_jsonl(longbench_file(subset), 2);
    const auto& record = records.at(run["example"].get<size_t>());
    const longbench::PreparedPrompt p = longbench::kvcache_factory_prompt(
        pipeline_tokenizer(), longbench_prompts()[subset].get<std::string>(), record, max_length, chat);
    EXPECT_EQ(encode(p.text, true), ids_of(run["input_ids"])) << path << " " << subset << " " << run["example"];
    // generate(max_new_tokens = dataset2maxlen, min_length = context + 1, eos_token_id = [eos]).
    EXPECT_EQ(run["generate_kwargs"]["max_new_tokens"], longbench_maxlens()[subset]);
    EXPECT_EQ(run["generate_kwargs"]["min_length"].get<int64_t>(), run["context_length"].get<int64_t>() + 1);
    EXPECT_EQ(run["generate_kwargs"]["eos_token_id"], nlohmann::json::array({pipeline_tokenizer().eos_id()}));
    ++checked;
  }
  EXPECT_GE(checked, 14);
}

TEST(LongBenchKvcacheFactory, RunFeedsTheRecordedPromptWithItsDecoding) {
  const nlohmann::json ref = reference("longbench_kvcache_factory.json");
  nlohmann::json r = run_task({{"task", "longbench/trec"},
                               {"limit", 2},
                               {"task_params", {{"pipeline", "kvcache_factory"}, {"max_length", 420}, {"max_new_tokens", 4},
                                                {"record_prompts", true}}}});
  int matched = 0;
  for (const auto& run : ref["runs"])
    if (run["model_path"] == "stories260K-test" && run["subset"] == "trec") {
      const auto& e = r["examples"][run["example"].get<size_t>()];
      EXPECT_EQ(encode(e["prompt"], true), ids_of(run["input_ids"]));
      EXPECT_EQ(e["prompt_tokens"], run["context_length"]);
      ++matched;
    }
  EXPECT_EQ(matched, 2);
  const auto& resolved = r["settings"]["resolved"];
  EXPECT_EQ(resolved["pipeline"], "kvcache_factory");
  EXPECT_EQ(resolved["decoding"]["min_new_tokens"], 1);                       // EOS masked at the first step
  EXPECT_EQ(resolved["decoding"]["stop_token_ids"], nlohmann::json::array());  // EOS only
  nlohmann::json samsum = run_task({{"task", "longbench/samsum"},
                                    {"limit", 1},
                                    {"task_params", {{"pipeline", "kvcache_factory"}, {"max_length", 300}, {"max_new_tokens", 2}}}});
  EXPECT_EQ(samsum["settings"]["resolved"]["decoding"]["stop_token_ids"], nlohmann::json::array());  // no "\n" stop
}

// --- LongBench: kvpress ---------------------------------------------------------------------

// Fails since the merge with the tokenizer.json and #13 part B branches (haystack order /
// context text differ from the recording): disabled until investigated, see the #13 note.
// The first n code points (Python's text[:n]) of UTF-8 text.
std::string code_point_prefix(const std::string& text, size_t n) {
  const std::u32string cps = metrics::utf8_decode(text);
  return metrics::utf8_encode(cps.substr(0, n));
}

TEST(LongBenchKvpress, ContextAndQuestionEqualKvpresssPipeline) {
  const nlohmann::json ref = reference("longbench_kvpress.json");
  int checked = 0;
  for (const auto& row : ref["rows"]) {
    const std::string subset = row["subset"];
    const auto records = datasets::read_jsonl(longbench_file(subset), 2);
    const auto& record = records.at(row["example"].get<size_t>());
    const KvpressParts parts =
        longbench::kvpress_parts(subset, longbench_prompts()[subset].get<std::string>(), record, "none", pipeline_tokenizer());
    // pipeline.py tokenises bos_token + context: the text after "<s>" is the context.
    const std::string context_text = "<s>" + parts.context;
    EXPECT_EQ(datasets::sha256_hex(context_text), row["context_text_sha256"]) << subset;
    EXPECT_EQ(code_point_prefix(context_text, 300), row["context_text_head"]) << subset;
    EXPECT_EQ(parts.question, row["question_text"]) << subset;
    const KvpressIds ids = kvpress_ids(pipeline_tokenizer(), parts, row["max_context_length"]);
    EXPECT_EQ(ids.context, ids_of(row["context_ids"])) << subset;
    EXPECT_EQ(ids.question, ids_of(row["question_ids"])) << subset;
    EXPECT_EQ(longbench_maxlens()[subset].get<int64_t>() + longbench::kKvpressExtraNewTokens, row["max_new_tokens"]) << subset;
    ++checked;
  }
  EXPECT_GE(checked, 30);  // 16 subsets x 2 examples (passage_count: the fixture's)
}

TEST(LongBenchKvpress, QuestionIsFedAfterTheCompressionWithoutEviction) {
  // Budget 16 after the context; the question's tokens are then all kept. One new token: no
  // decode step is fed, so the largest cache is exactly 16 + the question's tokens.
  nlohmann::json r = run_task({{"task", "longbench/hotpotqa"},
                               {"policy", "local"},
                               {"budget", "16"},
                               {"limit", 1},
                               {"task_params", {{"pipeline", "kvpress"}, {"max_new_tokens", 1}, {"record_prompts", true}}}});
  const std::string question = r["examples"][0]["question"];
  const int64_t question_tokens = static_cast<int64_t>(pipeline_tokenizer().encode(question, false).size());
  ASSERT_GT(question_tokens, 5);
  EXPECT_EQ(r["memory"]["max_cache_len"].get<int64_t>(), 16 + question_tokens);
  EXPECT_EQ(r["settings"]["resolved"]["pipeline"], "kvpress");
  nlohmann::json d = run_task({{"task", "longbench/hotpotqa"}, {"limit", 1}, {"task_params", {{"pipeline", "kvpress"}, {"max_new_tokens", 1}}}});
  EXPECT_EQ(d["settings"]["resolved"]["max_new_tokens"], 1);
  EXPECT_EQ(run_task({{"task", "longbench/hotpotqa"}, {"limit", 1}, {"task_params", {{"pipeline", "kvpress"}}}})["settings"]["resolved"]
                ["max_new_tokens"],
            32 + 20);
}

TEST(LongBenchKvpress, ScorerStripsLeadingWhitespaceAndKeepsTheFirstLine) {
  EXPECT_EQ(longbench::kvpress_scored_prediction("trec", " \n Location\nmore"), "Location");
  EXPECT_EQ(longbench::kvpress_scored_prediction("hotpotqa", "\n  Paris\nFrance"), "Paris\nFrance");
  EXPECT_EQ(longbench::kvpress_scored_prediction("lcc", "    return x;"), "return x;");
}

// --- multi-document QA ----------------------------------------------------------------------

QaExample first_qa_example(size_t index) {
  const std::string path =
      shared_data("multidoc_qa_litm/derived_from_ViktorTorp/nq-open-10_total_documents_gold_at_4.first441.DERIVED.jsonl.gz");
  return read_qa_examples(path, 2).at(index);
}

TEST(MultidocReference, BuzzPromptAndExactMatchEqualBuzzLlms) {
  const nlohmann::json ref = reference("multidoc_qa.json");
  for (size_t i = 0; i < ref["buzz_prompts"].size(); ++i) {
    const QaExample ex = first_qa_example(i);
    EXPECT_EQ(buzz_qa_prompt(ex.question, ex.documents), ref["buzz_prompts"][i]["prompt"]) << i;
    EXPECT_EQ(ex.answers.front(), ref["buzz_prompts"][i]["answer"]);
  }
  for (const auto& c : ref["buzz_em"]) EXPECT_EQ(buzz_exact_match(c["predicted"], c["actual"]), c["em"].get<double>()) << c;
}

TEST(MultidocReference, Llama2ChatPromptEqualsLostInTheMiddles) {
  const nlohmann::json ref = reference("multidoc_qa.json");
  const QaExample ex = first_qa_example(0);
  const std::string prompt = qa_prompt(read_file(shared_data("multidoc_qa_litm/ref/qa.prompt")), ex.question, ex.documents);
  // format_chat_prompt writes the BOS as text ("<s>"); ours is the tokenizer's BOS.
  EXPECT_EQ("<s>" + apply_chat_template("llama2-litm", prompt), ref["litm_llama2_chat_prompt_first"]);
}

TEST(MultidocQa, BuzzStyleRunsItsProtocolAndScoresBuzzEm) {
  nlohmann::json r = run_task({{"task", "multidoc_qa"},
                               {"limit", 1},
                               {"task_params", {{"style", "buzz"}, {"gold_position", 4}, {"max_new_tokens", 4}, {"record_prompts", true}}}});
  const QaExample ex = first_qa_example(0);
  EXPECT_EQ(r["examples"][0]["prompt"], buzz_qa_prompt(ex.question, ex.documents));
  EXPECT_EQ(r["examples"][0]["truncated"], false);  // the whole prompt is fed (longer than the context)
  EXPECT_GT(r["examples"][0]["prompt_tokens"].get<int64_t>(), 512);
  EXPECT_TRUE(r["metrics"].contains("buzz_em"));
  EXPECT_EQ(r["examples"][0]["metrics"]["buzz_em"],
            buzz_exact_match(r["examples"][0]["prediction"], ex.answers.front()));
  nlohmann::json d = run_task({{"task", "multidoc_qa"}, {"limit", 1}, {"task_params", {{"style", "buzz"}, {"gold_position", 4}, {"max_new_tokens", 1}}}});
  EXPECT_EQ(d["settings"]["styles"]["buzz"]["decoding"]["max_new_tokens"], 1001);
}

TEST(MultidocQa, MiddleTruncationRecordsThePromptItFeeds) {
  nlohmann::json r = run_task({{"task", "multidoc_qa"},
                               {"limit", 1},
                               {"task_params", {{"truncation", "middle"}, {"max_new_tokens", 4}, {"record_prompts", true}}}});
  const auto& e = r["examples"][0];
  ASSERT_TRUE(e["truncated"].get<bool>());
  const std::string recorded = e["prompt"];
  const int64_t fed = e["prompt_tokens"];
  EXPECT_LE(fed, 512 - 4);
  // The recorded text is the kept tokens (re-encoding may merge a token or two at the junction),
  // not the uncut prompt of 10 documents.
  EXPECT_LE(static_cast<int64_t>(pipeline_tokenizer().encode(recorded, true).size()), fed + 2);
  EXPECT_NE(recorded.find("Document [1]"), std::string::npos);
  EXPECT_EQ(recorded.find("Document [6]"), std::string::npos);
}

}  // namespace
}  // namespace kvbench::tasks
