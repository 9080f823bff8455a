#include "tasks/fidelity_reconstruction.hpp"

#include <algorithm>

#include "datasets/data_root.hpp"
#include "metrics/rouge_score.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/fidelity_scores.hpp"
#include "tasks/shared_params.hpp"
#include "datasets/jsonl_reader.hpp"

namespace kvbench::tasks {
namespace {

const char* kFile = "cnn_dailymail/cnn_dailymail_test_head.jsonl";
const char* kSource = "abisee/cnn_dailymail 3.0.0 test split on Hugging Face (fields id, article, highlights)";
const char* kTemplate = "Repeat the following text delimited by triple backticks word for word.\n```{article}```";

std::string fill_article(const std::string& tmpl, const std::string& article) {
  const size_t at = tmpl.find("{article}");
  if (at == std::string::npos) throw std::invalid_argument("fidelity/reconstruction: template has no {article}");
  std::string out = tmpl;
  return out.replace(at, 9, article);
}

class ReconstructionTask : public Task {
 public:
  params::Params parameters() const override {
    using params::Param;
    return {Param::text("template", kTemplate, "the prompt; {article} is replaced by the article"),
            Param::integer("max_article_tokens", nullptr, "article tokens kept (default (context - template - 16) / 2)", 1),
            Param::integer("max_new_tokens", nullptr, "tokens generated (default: article tokens + 16)", 1),
            record_prompts_param()};
  }

  nlohmann::json settings() const override {
    return {{"protocol", "generate-and-score (RoCo context reconstruction)"},
            {"data", kFile},
            {"prompt_template", kTemplate},
            {"truncation", "article cut to max_article_tokens (default (context - template - 16) / 2)"},
            {"decoding", "greedy; max_new_tokens = article tokens + 16; stop at EOS or \"```\""},
            {"metric", "BLEU (sacreBLEU) and ROUGE-1/2/L F x100 of the repetition against the article"}};
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {datasets::resolve_data_file(ctx.data_root, kFile, kSource)};
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const std::string tmpl = ctx.param<std::string>("template");
    const models::Tokenizer& tok = *ctx.tokenizer;
    const int64_t overhead = static_cast<int64_t>(encode_prompt(ctx, fill_article(tmpl, "")).size());
    const int64_t max_article = ctx.param_or<int64_t>("max_article_tokens", (ctx.max_context() - overhead - 16) / 2);
    if (max_article < 1) throw std::invalid_argument("fidelity/reconstruction: the template leaves no room for the article");
    DecodingSettings dec;
    dec.stop_strings = {"```"};

    std::vector<std::string> predictions, references;
    const std::vector<datasets::JsonRecord> lines = datasets::read_jsonl(data_files(ctx).front(), ctx.limit);
    ExampleLoop loop(ctx, static_cast<int64_t>(lines.size()));
    for (const datasets::JsonRecord& line : lines) {
      const std::string where = line.file + ":" + std::to_string(line.line);
      std::string article = line.string_field("article");
      std::vector<int> ids = tok.encode(article, false);
      if (static_cast<int64_t>(ids.size()) > max_article) {
        ids.resize(max_article);
        article = tok.decode(ids);
      }
      dec.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", static_cast<int64_t>(ids.size()) + 16);
      const std::string prompt = fill_article(tmpl, article);
      Completion c = complete(ctx, encode_prompt(ctx, prompt), dec);
      loop.record({line.string_field_or("id", where), c.prompt_tokens, c.text, {article}, pair_scores(c.text, article),
                   {{"max_new_tokens", dec.max_new_tokens}}, prompt});
      predictions.push_back(c.text);
      references.push_back(article);
    }
    return loop.finish(corpus_scores(predictions, references));
  }
};

}  // namespace

std::unique_ptr<Task> make_reconstruction_task() { return std::make_unique<ReconstructionTask>(); }

}  // namespace kvbench::tasks
