// multidoc_qa: lost-in-the-middle multi-document QA (NaturalQuestions-Open, Contriever
// distractors), BUZZ Fig. 6 (10 documents, gold at 0/4/9).
// style "litm" (default; scripts/get_qa_responses_from_llama_2.py + evaluate_qa_responses.py):
//  - prompt: ref/qa.prompt via get_qa_prompt (tasks/multidoc_qa_data.hpp); `chat_template:
//    "llama2-litm"` wraps it as the reference does for chat models (format_chat_prompt);
//  - truncation: prompts longer than max_prompt_length tokens are skipped (reference; default
//    the model's context), or with truncation "middle" the prompt's middle is cut so that prompt
//    + max_new_tokens fit max_prompt_length (LongBench's rule; needed for short-context models);
//    the recorded prompt is the one fed (the cut one);
//  - decoding: greedy, 100 new tokens, no stop strings; response .strip();
//  - scoring on response.split("\n")[0].strip(): best_subspan_em (lost-in-the-middle) and
//    strict_em (SQuAD EM), both max over the answers.
// style "buzz" (buzz-llm run_ten_doc_qa_em.py + run_greedy_inference.py my_inference_v3):
//  - prompt: buzz_qa_prompt (titles and texts, BUZZ's own instruction), BOS, no truncation;
//  - decoding: greedy until EOS, 1 + 1000 new tokens (the first from the prefill, then up to
//    1000 steps);
//  - scoring: buzz_em = the whole stripped lower-cased response equals the first answer.
#include <algorithm>

#include "datasets/data_root.hpp"
#include "datasets/text_reader.hpp"
#include "metrics/qa.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/python_str.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/multidoc_qa_data.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

const char* kTemplateFile = "multidoc_qa_litm/ref/qa.prompt";

std::string first_line_stripped(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  std::string line = s.substr(0, s.find('\n'));
  size_t b = line.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return line.substr(b, line.find_last_not_of(ws) - b + 1);
}

struct Setup {
  std::string style = "litm";
  int64_t documents = 10;
  int64_t gold_position = 0;
  int64_t max_new_tokens = 100;
  int64_t max_prompt_length = 0;
  std::string truncation = "skip";
  std::string chat_template = "none";
};

// buzz-llm my_inference_v3: one token from the prefill, then up to max_gen_len = 1000 steps.
constexpr int64_t kBuzzMaxNewTokens = 1001;

class MultidocQaTask : public Task {
 public:
  nlohmann::json settings() const override {
    return {{"protocol", "generate-and-score"},
            {"data", "multidoc_qa_litm: qa_data/nq-open-{N}_total_documents_gold_at_{g}.jsonl.gz (or staged "
                     "derived copies, or built from a file with enough distractors)"},
            {"styles",
             {{"litm",
               {{"prompt_template", kTemplateFile},
                {"document_format", "Document [{i}](Title: {title}) {text}, joined by newlines"},
                {"truncation", "skip prompts longer than max_prompt_length (reference) | middle | none"},
                {"decoding", decoding(100).to_json()},
                {"stop", "EOS; the first line of the stripped response is scored"},
                {"metric", "best_subspan_em (lost-in-the-middle), strict_em (SQuAD EM), max over answers"}}},
              {"buzz",
               {{"prompt_template", "Documents are following: {title\\ntext\\n...}. Based on the provided documents, give "
                                    "an brief answer to this question: {question}. The answer has to directly answer "
                                    "the question and be BRIEF. "},
                {"truncation", "none (the prompt streams through the cache)"},
                {"decoding", decoding(kBuzzMaxNewTokens).to_json()},
                {"metric", "buzz_em: response.strip().lower() == answers[0].strip().lower()"}}}}}};
  }

  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("style", "litm", {"litm", "buzz"}, "the reference pipeline: lost-in-the-middle or BUZZ"),
            Param::integer("documents", 10, "documents per prompt (selects the data file)", 1),
            Param::integer("gold_position", 0, "position of the gold document (< documents)", 0),
            Param::integer("max_new_tokens", nullptr, "tokens generated (default 100 for litm, 1001 for buzz)", 1),
            Param::integer("max_prompt_length", nullptr, "prompt tokens allowed (default: the model context)", 2),
            Param::choice("truncation", nullptr, {"skip", "middle", "none"}, "over-long prompts (default skip for litm, none for buzz)"),
            chat_template_param(),
            Param::text("template", nullptr, "litm: the prompt template (default: the contents of ref/qa.prompt)"),
            record_prompts_param()};
  }


  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    const Setup s = setup(ctx);
    std::vector<std::string> files = {locate_qa_data(ctx.data_root, s.documents, s.gold_position).path};
    if (s.style == "litm" && !ctx.given("template"))
      files.push_back(datasets::resolve_data_file(ctx.data_root, kTemplateFile, kLitmSource));
    return files;
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const Setup s = setup(ctx);
    const QaDataSource source = locate_qa_data(ctx.data_root, s.documents, s.gold_position);
    const bool buzz = s.style == "buzz";
    const std::string tmpl = ctx.given("template") ? ctx.param_or<std::string>("template", "")
                             : buzz ? ""
                                    : datasets::read_text(datasets::resolve_data_file(ctx.data_root, kTemplateFile, kLitmSource));
    const DecodingSettings dec = decoding(s.max_new_tokens);
    apply_chat_template(s.chat_template, "", *ctx.tokenizer);  // validates the name (and that the model has its own template)

    // The reference skips over-long prompts and keeps going: `limit` counts the examples run.
    std::vector<QaExample> all = read_qa_examples(source.path, 0);
    ExampleLoop loop(ctx, static_cast<int64_t>(all.size()));
    int64_t skipped = 0;
    for (const QaExample& raw : all) {
      if (loop.done()) break;
      const QaExample ex = source.build ? arrange_documents(raw, s.documents, s.gold_position) : raw;
      if (!source.build) check_layout(ex, s);
      const std::string prompt = apply_chat_template(
          s.chat_template, buzz ? buzz_qa_prompt(ex.question, ex.documents) : qa_prompt(tmpl, ex.question, ex.documents),
          *ctx.tokenizer);
      std::vector<int64_t> ids = encode_prompt(ctx, prompt, encode_adds_special_tokens(s.chat_template, prompt, *ctx.tokenizer));
      bool truncated = false;
      if (s.truncation != "none" && static_cast<int64_t>(ids.size()) > s.max_prompt_length) {
        if (s.truncation == "skip") {
          ++skipped;
          continue;
        }
        ids = truncate_middle(ctx, ids, s.max_prompt_length - s.max_new_tokens);
        truncated = true;
      }
      Completion c = complete(ctx, ids, dec);
      const std::string response = strip(c.text);
      const std::string scored = first_line_stripped(response);
      nlohmann::json m = {{"best_subspan_em", metrics::best_subspan_em(scored, ex.answers)},
                          {"strict_em", metrics::strict_em(scored, ex.answers)}};
      if (buzz) m["buzz_em"] = buzz_exact_match(response, ex.answers.front());
      // The prompt fed: when the middle was cut, the decoded kept tokens (the cut is in tokens).
      loop.record({ex.where, c.prompt_tokens, response, ex.answers, m, {{"truncated", truncated}},
                   truncated ? ctx.tokenizer->decode({ids.begin(), ids.end()}) : prompt});
    }
    nlohmann::json metrics = loop.means();
    metrics["examples"] = loop.recorded();
    metrics.update({{"skipped_too_long", skipped},
                    {"documents", s.documents},
                    {"gold_position", s.gold_position},
                    {"data", source.path},
                    {"built_ordering", source.build}});
    return loop.finish(metrics);
  }

 private:
  static DecodingSettings decoding(int64_t max_new_tokens) {
    DecodingSettings d;
    d.max_new_tokens = max_new_tokens;
    d.stop_at_eos = true;
    return d;
  }

  static Setup setup(const TaskContext& ctx) {
    Setup s;
    s.style = ctx.param<std::string>("style");
    const bool buzz = s.style == "buzz";
    s.documents = ctx.param<int64_t>("documents");
    s.gold_position = ctx.param<int64_t>("gold_position");
    s.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", buzz ? kBuzzMaxNewTokens : 100);
    s.max_prompt_length = ctx.param_or<int64_t>("max_prompt_length", ctx.model ? ctx.max_context() : 0);
    s.truncation = ctx.param_or<std::string>("truncation", buzz ? "none" : "skip");
    s.chat_template = ctx.param<std::string>("chat_template");
    // Validates the name; "model" is checked against the model's tokenizer in run().
    if (s.chat_template != kModelChatTemplate) apply_chat_template(s.chat_template, "");
    if (buzz && ctx.given("template"))
      throw std::invalid_argument("multidoc_qa: the buzz style has its own prompt; task_params.template is for litm");
    if (s.gold_position >= s.documents)
      throw std::invalid_argument("multidoc_qa: task_params.gold_position must be < documents (" +
                                  std::to_string(s.documents) + ")");
    return s;
  }

  // A file named for (N, g) must hold N documents with the gold one at g.
  static void check_layout(const QaExample& ex, const Setup& s) {
    if (static_cast<int64_t>(ex.documents.size()) != s.documents)
      throw std::runtime_error(ex.where + ": field 'ctxs': " + std::to_string(ex.documents.size()) +
                               " documents, the file name says " + std::to_string(s.documents));
    if (!ex.documents[s.gold_position].isgold)
      throw std::runtime_error(ex.where + ": field 'ctxs': document " + std::to_string(s.gold_position) +
                               " is not the gold one (isgold)");
  }

  // LongBench: keep the first and last halves of the tokens (BOS stays first).
  static std::vector<int64_t> truncate_middle(const TaskContext& ctx, const std::vector<int64_t>& ids, int64_t max_len) {
    if (max_len < 2) throw std::invalid_argument("multidoc_qa: max_prompt_length leaves no room for the prompt");
    std::vector<int64_t> out(ids.begin(), ids.begin() + max_len / 2);
    out.insert(out.end(), ids.end() - (max_len - max_len / 2), ids.end());
    return out;
  }
};

const TaskRegistration multidoc_qa({"multidoc_qa",
                                    "Lost-in-the-middle multi-document QA (NQ-Open, 10/20/30 documents, gold position)",
                                    {},
                                    [](const std::string&) { return std::make_unique<MultidocQaTask>(); }});

}  // namespace
}  // namespace kvbench::tasks
