// infinitebench/<task>: InfiniteBench's 12 tasks (OpenBMB/InfiniteBench @ 88b3daa6). Official
// pipeline (src/eval_yarn_mistral.py; eval_chatglm.py and eval_yi_200k.py build the same prompt):
// create_prompt with the template family's template (yarn-mistral's for open models), the whole
// prompt cut to its head and tail by truncate_by_tokens and decoded back, no chat template, greedy
// decoding of the task's max new tokens until EOS, scored by compute_scores.py's get_score_one
// against get_answer's ground truth; the task's score is the mean. `pipeline: kvpress` runs
// kvpress's protocol on kvpress's rows of the same records (create_huggingface_dataset.py): the
// context prefilled and compressed once, each of its questions + answer prefix answered from that
// cache, max new tokens + 20, scored by kvpress's calculate_metrics.py.
#include <algorithm>

#include "datasets/data_root.hpp"
#include "metrics/infinitebench.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/infinitebench_prompt.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

namespace ib = infinitebench;

constexpr const char* kInfinitebenchSource = "xinrongzhang2022/InfiniteBench on Hugging Face (<task>.jsonl: id, context, input, answer, options)";

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& [name, family] : ib::templates().at("families").items()) names.push_back(name);
  return names;
}

// One record's prompt as its pipeline feeds it.
struct InfinitebenchFed {
  std::string prompt;                      // the text fed (kvpress: context, then the question part)
  std::vector<int64_t> ids, question_ids;  // kvpress: the context's ids and the question's after it
  int64_t query_tokens = 0;                 // kvpress, query-aware: KvpressIds::query_tokens
  int64_t original_tokens = 0;
  bool truncated = false;
  DecodingSettings dec;
  nlohmann::json label;  // what the scorer compares with
};

class InfiniteBenchTask : public Task {
 public:
  explicit InfiniteBenchTask(std::string task) : task_(std::move(task)) {}

  nlohmann::json settings() const override {
    return {{"source", "OpenBMB/InfiniteBench @ 88b3daa6 src/eval_utils.py, prompt.py, eval_yarn_mistral.py, compute_scores.py"},
            {"task", task_},
            {"data", "infinitebench/" + task_ + ".jsonl"},
            {"max_new_tokens", ib::templates().at("max_new_tokens").at(task_)},
            {"truncation", "truncate_by_tokens: the whole prompt (BOS included) cut to ids[:m//2] + ids[-(m//2):], always decoded back"},
            {"decoding", "greedy until EOS, no chat template (eval_yarn_mistral.py)"},
            {"metric", "compute_scores.py get_score_one per example; score = their mean"},
            {"kvpress", "NVIDIA/kvpress evaluation/benchmarks/infinite_bench: context prefix / question / answer prefix, "
                        "one prefill per context, max new tokens + 20, calculate_metrics.py"}};
  }

  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("pipeline", "infinitebench", {"infinitebench", "kvpress"},
                          "InfiniteBench's eval_yarn_mistral.py, or kvpress's protocol (the context compressed once, questions after it)"),
            Param::choice("template", "yarn-mistral", family_names(), "infinitebench pipeline: prompt.py's template family (args.py --model_name)"),
            Param::integer("truncate_len", nullptr, "infinitebench pipeline: prompt tokens kept (official: 131072 for yarn-mistral/chatglm3, 200000 for yi; default: the model's context)", 2),
            Param::integer("max_new_tokens", nullptr, "tokens generated (default: the task's, + 20 under kvpress)", 1),
            Param::integer("max_context_length", nullptr, "kvpress pipeline: context tokens kept from the head (default: what the model's context leaves for the longest question of that context and max_new_tokens)", 1),
            chat_template_param("kvpress pipeline: the chat template pipeline.py applies (default: the model's own when its tokenizer has one, else none)", nullptr),
            Param::flag("query_aware", false, "kvpress pipeline: the question is appended to the context before compression"),
            Param::choice("scorer", nullptr, {"infinitebench", "kvpress"}, "compute_scores.py's get_score_one or kvpress's calculate_metrics.py (default: the pipeline's, where kvpress's can score the task)"),
            Param::text("data_file", nullptr, "the task's file (default: infinitebench/<task>.jsonl under the data root)"),
            record_prompts_param()};
  }

  void check_params(const nlohmann::json& p) const override {
    const bool kvpress = p.value("pipeline", "infinitebench") == "kvpress";
    for (const char* key : {"template", "truncate_len"})
      if (kvpress && p.contains(key)) throw std::invalid_argument(std::string("infinitebench: ") + key + " is read by the infinitebench pipeline only");
    for (const char* key : {"max_context_length", "chat_template", "query_aware"})
      if (!kvpress && p.contains(key)) throw std::invalid_argument(std::string("infinitebench: ") + key + " is read by the kvpress pipeline only");
    if (p.value("scorer", "") == "kvpress" && !metrics::infinitebench_kvpress_scores(task_))
      throw std::invalid_argument("infinitebench/" + task_ + ": kvpress's calculate_metrics.py cannot score it on its dataset's labels (docs/tasks-c.md); use scorer: infinitebench");
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("data_file", "infinitebench/" + task_ + ".jsonl"), kInfinitebenchSource)};
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const bool kvpress = ctx.param<std::string>("pipeline") == "kvpress";
    // kvpress's scorer where its code can score the task, else InfiniteBench's (docs/tasks-c.md).
    const std::string scorer = ctx.param_or<std::string>("scorer", kvpress && metrics::infinitebench_kvpress_scores(task_) ? "kvpress" : "infinitebench");
    std::vector<ib::Record> records;
    for (const auto& r : datasets::read_jsonl(data_files(ctx).front(), ctx.limit)) records.push_back(ib::read_record(r, task_));
    if (records.empty()) throw std::runtime_error(data_files(ctx).front() + ": no examples");
    ExampleLoop loop(ctx, static_cast<int64_t>(records.size()));
    records.resize(static_cast<size_t>(loop.size()));
    std::vector<InfinitebenchFed> fed;
    if (kvpress) {
      fed = prepare_kvpress(ctx, records, scorer);
    } else {
      for (const ib::Record& r : records) fed.push_back(prepare_official(ctx, r, scorer));
    }
    const std::vector<size_t> order = run_order(fed.size(), [&](size_t k) -> const std::vector<int64_t>& { return fed[k].ids; }, kvpress);
    CompressOnce compress_once(ctx);
    const std::string model_name = kvpress ? "kvpress" : ctx.param<std::string>("template");
    for (size_t i : order) {
      const InfinitebenchFed& f = fed[i];
      const Completion out = kvpress ? compress_once.answer(f.ids, f.question_ids, f.dec, f.query_tokens) : complete(ctx, f.ids, f.dec);
      const double score = scorer == "kvpress" ? metrics::infinitebench_kvpress_score_one(task_, out.text, f.label)
                                               : metrics::infinitebench_score_one(task_, out.text, f.label, model_name);
      loop.record({std::to_string(records[i].id), out.prompt_tokens, out.text, references(f.label), {{"score", score}},
                   {{"truncated", f.truncated}, {"original_prompt_tokens", f.original_tokens}, {"ground_truth", f.label}}, f.prompt});
    }
    nlohmann::json metrics = {{"score", loop.mean("score")}, {"examples", loop.recorded()}};
    if (kvpress) metrics["prefills"] = compress_once.prefills();
    return loop.finish(metrics, {{"scorer", scorer},
                                 {"truncate_len", kvpress ? nlohmann::json(nullptr) : nlohmann::json(truncate_len(ctx))},
                                 {"chat_template", kvpress ? nlohmann::json(chat(ctx)) : nlohmann::json(nullptr)}});
  }

 private:
  int64_t truncate_len(const TaskContext& ctx) const { return ctx.param_or<int64_t>("truncate_len", ctx.max_context()); }
  std::string chat(const TaskContext& ctx) const {
    return ctx.param_or<std::string>("chat_template", ctx.tokenizer->config().chat_template ? kModelChatTemplate : "none");
  }

  // eval_yarn_mistral.py: create_prompt, truncate_by_tokens, then tok(text) (BOS added again).
  InfinitebenchFed prepare_official(const TaskContext& ctx, const ib::Record& r, const std::string& scorer) const {
    InfinitebenchFed f;
    const TruncatedText cut = truncate_middle_infinitebench(*ctx.tokenizer, ib::create_prompt(r, task_, ctx.param<std::string>("template")), truncate_len(ctx));
    f.prompt = cut.text;
    f.original_tokens = cut.original_tokens;
    f.truncated = cut.truncated;
    f.ids = encode_prompt(ctx, f.prompt);
    f.dec.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", ib::templates().at("max_new_tokens").at(task_).get<int64_t>());
    f.label = scorer == "kvpress" ? nlohmann::json(ib::kvpress_row(r, task_).answer) : ib::ground_truth(r, task_);
    return f;
  }

  // kvpress: each record's row, pipeline.py's assembly, the context's head kept: max_context_length
  // tokens, by default what the model's context leaves for the longest question asked of that
  // context and the answer (one length per context, so its questions still share one prefill).
  std::vector<InfinitebenchFed> prepare_kvpress(const TaskContext& ctx, const std::vector<ib::Record>& records, const std::string& scorer) const {
    std::vector<InfinitebenchFed> fed;
    std::vector<KvpressParts> parts;
    std::vector<int64_t> max_new_tokens;
    const bool aware = ctx.param<bool>("query_aware");
    const std::string delimiter = aware ? ctx.query_delimiter() : "";
    for (const ib::Record& r : records) {
      const ib::KvpressRow row = ib::kvpress_row(r, task_);
      InfinitebenchFed& f = fed.emplace_back();
      f.dec.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", row.max_new_tokens);
      f.dec.stop_token_ids.assign(ctx.tokenizer->stop_ids().begin(), ctx.tokenizer->stop_ids().end());
      f.label = scorer == "kvpress" ? nlohmann::json(row.answer) : ib::ground_truth(r, task_);
      parts.push_back(aware ? kvpress_query_aware_parts(row.context, row.question, row.answer_prefix, chat(ctx), *ctx.tokenizer, delimiter)
                          : kvpress_parts(row.context, row.question, row.answer_prefix, chat(ctx), *ctx.tokenizer));
      max_new_tokens.push_back(f.dec.max_new_tokens);
    }
    const std::optional<int64_t> limit = ctx.given("max_context_length") ? std::optional<int64_t>(ctx.param_or<int64_t>("max_context_length", 0)) : std::nullopt;
    std::vector<KvpressIds> ids = kvpress_ids_by_context(*ctx.tokenizer, parts, max_new_tokens, ctx.max_context(), limit, "infinitebench/" + task_);
    for (size_t i = 0; i < fed.size(); ++i) {
      InfinitebenchFed& f = fed[i];
      f.ids = std::move(ids[i].context);
      f.question_ids = std::move(ids[i].question);
      f.query_tokens = ids[i].query_tokens;
      f.original_tokens = ids[i].original_context_tokens;
      f.truncated = ids[i].truncated;
      f.prompt = ctx.tokenizer->decode(std::vector<int>(f.ids.begin(), f.ids.end())) + parts[i].question;
    }
    return fed;
  }

  static std::vector<std::string> references(const nlohmann::json& label) {
    std::vector<std::string> out;
    for (const auto& v : label.is_array() ? label : nlohmann::json::array({label})) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    return out;
  }

  std::string task_;
};

const TaskRegistration infinitebench_family({"infinitebench/", "InfiniteBench's 12 tasks (its prompts, truncation and scorers; kvpress's protocol)",
                                             metrics::infinitebench_tasks(), [](const std::string& task) -> std::unique_ptr<Task> {
                                               return std::make_unique<InfiniteBenchTask>(task);
                                             }});

}  // namespace
}  // namespace kvbench::tasks
