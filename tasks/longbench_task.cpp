// Tasks longbench/<subset> (16 English subsets) and longbench/all (their average), following
// LongBench's pred.py and eval.py; see tasks/longbench.hpp and docs/tasks.md.
#include <fstream>
#include <map>
#include <numeric>

#include "datasets/data_root.hpp"
#include "datasets/json_parse.hpp"
#include "metrics/longbench_metrics.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/longbench.hpp"
#include "tasks/longbench_pipelines.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

constexpr const char* kSource = "THUDM/LongBench on Hugging Face (data.zip: data/<subset>.jsonl)";
constexpr const char* kConfigSource = "THUDM/LongBench @2e00731 LongBench/config/";

std::string config_file(const TaskContext& ctx, const std::string& name) {
  return datasets::resolve_data_file(ctx.data_root, "longbench_ref/" + name, kConfigSource + name);
}

std::string data_file(const TaskContext& ctx, const std::string& subset) {
  const bool e = ctx.param<bool>("longbench_e");
  const std::string fallback = "longbench/" + subset + (e ? "_e" : "") + ".jsonl";
  return datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("data_file", fallback), kSource);
}

metrics::FuzzBackend fuzz_backend(const TaskContext& ctx) {
  return ctx.param<std::string>("fuzz_backend") == "difflib" ? metrics::FuzzBackend::Difflib
                                                              : metrics::FuzzBackend::Levenshtein;
}

// The reference fields of one record, checked before anything is generated: eval.py scores an
// empty "answers" list (or classification without "all_classes") 0.0 without a word, and a table
// would show that 0.0 as the policy's score.
void check_reference_fields(const datasets::JsonRecord& r, bool needs_classes) {
  if (r.string_list_field("answers").empty())
    throw r.field_error("answers", "empty list (a record needs at least one answer to be scored)");
  if (!needs_classes) return;
  if (r.field("all_classes").is_null() || r.string_list_field("all_classes").empty())
    throw r.field_error("all_classes", "must be a non-empty list of strings (classification_score matches the "
                                       "prediction against the classes)");
}

// One subset: prompts, generation, eval.py scoring.
struct SubsetRun {
  nlohmann::json metrics;
  nlohmann::json examples = nlohmann::json::array();
  nlohmann::json resolved;
};

SubsetRun run_subset(const TaskContext& ctx, const std::string& subset, int64_t done_before, int64_t total) {
  const nlohmann::json prompts = datasets::read_json_file(config_file(ctx, "dataset2prompt.json"));
  const nlohmann::json maxlens = datasets::read_json_file(config_file(ctx, "dataset2maxlen.json"));
  if (!prompts.contains(subset) || !maxlens.contains(subset))
    throw std::runtime_error("longbench_ref/dataset2prompt.json or dataset2maxlen.json has no entry for " + subset);
  const std::string prompt_template = prompts.at(subset).get<std::string>();
  const longbench::Pipeline pipeline = longbench::parse_pipeline(ctx.param<std::string>("pipeline"));
  using longbench::Pipeline;
  // kvpress: "be a bit more generous with token generation to avoid any cut-offs".
  const int64_t extra = pipeline == Pipeline::Kvpress ? longbench::kKvpressExtraNewTokens : 0;
  const int64_t max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", maxlens.at(subset).get<int64_t>() + extra);
  const std::string chat = ctx.param<std::string>("chat_template");
  apply_chat_template(chat, "", *ctx.tokenizer);  // validates the name (and that the model has its own template)

  int64_t max_length = 0;  // kvpress: the context's max_context_length
  std::string max_length_rule;
  if (ctx.given("max_length")) {
    max_length = ctx.param_or<int64_t>("max_length", 0);
    max_length_rule = "task_params.max_length";
  } else if (ctx.given("max_length_model") && pipeline == Pipeline::KvcacheFactory) {
    const std::string name = ctx.param_or<std::string>("max_length_model", "");
    max_length = longbench::kvcache_factory_max_length(name);
    max_length_rule = "KVCache-Factory run_longbench.py model2maxlen matched in '" + name + "'";
  } else if (ctx.given("max_length_model") && pipeline == Pipeline::PredPy) {
    const std::string name = ctx.param_or<std::string>("max_length_model", "");
    const nlohmann::json table = datasets::read_json_file(config_file(ctx, "model2maxlen.json"));
    if (!table.contains(name)) throw std::invalid_argument("task_params.max_length_model '" + name + "' is not in model2maxlen.json");
    max_length = table.at(name).get<int64_t>();
    max_length_rule = "model2maxlen.json[" + name + "]";
  } else if (ctx.given("max_length_model")) {
    throw std::invalid_argument("task_params.max_length_model: kvpress has no model table (its max_context_length is "
                                "the tokenizer's model_max_length); set task_params.max_length");
  } else if (pipeline == Pipeline::PredPy) {
    max_length = longbench::default_max_length(*ctx.tokenizer, ctx.max_context(), max_new_tokens, chat, subset);
    max_length_rule = "model context - max_new_tokens - chat template tokens";
  } else if (pipeline == Pipeline::KvcacheFactory) {
    // The chat wrapper is inside the truncation: only the generation needs room.
    max_length = longbench::default_max_length(*ctx.tokenizer, ctx.max_context(), max_new_tokens, "none", subset);
    max_length_rule = "model context - max_new_tokens";
  } else {
    max_length_rule = "model context - question tokens - max_new_tokens (per example)";
  }

  DecodingSettings decoding;
  decoding.max_new_tokens = max_new_tokens;
  if (pipeline == Pipeline::PredPy && subset == "samsum") {  // pred.py: eos_token_id=[eos, "\n"], min_length = context_length + 1
    decoding.stop_token_ids = {ctx.tokenizer->encode("\n", false).back()};
    decoding.min_new_tokens = 1;
  }
  if (pipeline == Pipeline::KvcacheFactory) decoding.min_new_tokens = 1;  // min_length = context_length + 1, eos only

  SubsetRun run;
  std::vector<std::string> predictions;
  std::vector<std::vector<std::string>> answers;
  std::vector<long long> lengths;
  std::vector<std::string> all_classes;
  const auto records = datasets::read_jsonl(data_file(ctx, subset), ctx.limit);
  if (records.empty()) throw std::runtime_error(data_file(ctx, subset) + ": no examples");
  const bool needs_classes = metrics::lb_metric_for_dataset(subset) == "classification_score";
  for (const auto& r : records) check_reference_fields(r, needs_classes);
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    longbench::PreparedPrompt p;
    Completion c;
    std::string question;         // kvpress: fed after the compressed context
    std::string original_prompt;  // kvpress: the context before its cut, when cut
    if (pipeline == Pipeline::Kvpress) {
      const longbench::KvpressParts parts = longbench::kvpress_parts(subset, prompt_template, r, chat, *ctx.tokenizer);
      const int64_t question_tokens = static_cast<int64_t>(ctx.tokenizer->encode(parts.question, false).size());
      const int64_t room = max_length > 0 ? max_length : ctx.max_context() - question_tokens - max_new_tokens;
      if (room < 1)
        throw std::invalid_argument("longbench/" + subset + " (kvpress): the question (" + std::to_string(question_tokens) +
                                    " tokens) and " + std::to_string(max_new_tokens) + " new tokens leave no room in the "
                                    "model's context; set task_params.max_new_tokens or max_length");
      const longbench::KvpressIds ids = longbench::kvpress_ids(*ctx.tokenizer, parts, room);
      // What is fed: kvpress cuts the context's token ids from the right; the recorded prompt is
      // those ids decoded, the text before the cut a second field.
      p = {ctx.tokenizer->decode(std::vector<int>(ids.context.begin(), ids.context.end())), ids.original_context_tokens,
           ids.truncated};
      if (ids.truncated) original_prompt = parts.context;
      question = parts.question;
      c = complete_after_context(ctx, ids.context, ids.question, decoding);
    } else {
      p = pipeline == Pipeline::KvcacheFactory
              ? longbench::kvcache_factory_prompt(*ctx.tokenizer, prompt_template, r, max_length, chat)
              : longbench::prepare_prompt(*ctx.tokenizer, subset, prompt_template, r, max_length, chat);
      // The model's own template wrote its BOS: not added again while the text still has it.
      // (KVCache-Factory wraps every subset; pred.py only the chat subsets.)
      const bool wrapped = pipeline == Pipeline::KvcacheFactory || longbench::uses_chat_template(subset);
      const bool add_bos = !wrapped || encode_adds_special_tokens(chat, p.text, *ctx.tokenizer);
      c = complete(ctx, encode_prompt(ctx, p.text, add_bos), decoding);
    }
    predictions.push_back(pipeline == Pipeline::Kvpress ? longbench::kvpress_scored_prediction(subset, c.text) : c.text);
    answers.push_back(r.string_list_field("answers"));
    lengths.push_back(r.int_field("length"));
    // eval.py keeps the last line's all_classes (they are equal within a subset); null = none.
    const auto& classes = r.field("all_classes");
    all_classes = classes.is_null() ? std::vector<std::string>{} : r.string_list_field("all_classes");
    run.examples.push_back({{"id", r.string_field_or("_id", subset + "-" + std::to_string(i))},
                            {"subset", subset},
                            {"prompt_tokens", c.prompt_tokens},
                            {"original_prompt_tokens", p.original_tokens},
                            {"truncated", p.truncated},
                            {"length", lengths.back()},
                            {"prediction", c.text},
                            {"references", answers.back()}});
    if (ctx.param<bool>("record_prompts")) {
      run.examples.back()["prompt"] = p.text;  // as fed (kvpress: the context part)
      if (pipeline == Pipeline::Kvpress) run.examples.back()["question"] = question;
      if (!original_prompt.empty()) run.examples.back()["original_prompt"] = original_prompt;
    }
    if (ctx.progress)
      ctx.progress(done_before + static_cast<int64_t>(i) + 1, total > 0 ? total : static_cast<int64_t>(records.size()));
  }
  const auto backend = fuzz_backend(ctx);
  metrics::LongBenchAggregate agg = metrics::lb_scorer(subset, predictions, answers, all_classes, backend);
  for (size_t i = 0; i < agg.per_example.size(); ++i) run.examples[i]["metrics"] = {{"score", agg.per_example[i]}};
  run.metrics = {{"score", agg.score}, {"examples", static_cast<int64_t>(records.size())},
                 {"metric", metrics::lb_metric_for_dataset(subset)}};
  if (ctx.param<bool>("longbench_e")) {
    auto b = metrics::lb_scorer_e(subset, predictions, answers, lengths, all_classes, backend);
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    run.metrics["0-4k"] = opt(b.b0_4k);
    run.metrics["4-8k"] = opt(b.b4_8k);
    run.metrics["8k+"] = opt(b.b8k_plus);
  }
  run.resolved = {{"pipeline", longbench::to_string(pipeline)},
                  {"prompt_template", prompt_template},
                  {"max_new_tokens", max_new_tokens},
                  {"max_length", max_length},
                  {"max_length_rule", max_length_rule},
                  {"chat_template", pipeline != Pipeline::PredPy || longbench::uses_chat_template(subset) ? chat
                                                                                                  : "none (excluded subset)"},
                  {"decoding", decoding.to_json()}};
  return run;
}

params::Params longbench_params() {
  using params::Param;
  return {Param::choice("pipeline", "pred_py", longbench::pipeline_names(),
                        "the reference pipeline: THUDM's pred.py, KVCache-Factory's run_longbench.py or kvpress's"),
          chat_template_param("the chat template (none for base models; model = the model's own); never on trec, "
                              "triviaqa, samsum, lcc, repobench-p"),
          Param::integer("max_length", nullptr, "prompt tokens after truncation (default: the pipeline's rule)", 2),
          Param::text("max_length_model", nullptr, "a model2maxlen key, e.g. llama2-7b-chat-4k (3500)"),
          Param::integer("max_new_tokens", nullptr, "tokens generated (default: dataset2maxlen, + 20 under kvpress)", 1),
          Param::flag("longbench_e", false, "read <subset>_e.jsonl and add eval.py's length buckets"),
          Param::text("data_file", nullptr, "the subset's file (default: longbench/<subset>[_e].jsonl)"),
          Param::choice("fuzz_backend", "levenshtein", {"levenshtein", "difflib"}, "code_sim_score's fuzz ratio"),
          record_prompts_param()};
}

nlohmann::json common_settings() {
  return {{"benchmark", "LongBench (THUDM/LongBench @2e00731, LongBench/pred.py + eval.py), English subsets"},
          {"protocol", "generate-and-score"},
          {"prompt_template", "config/dataset2prompt.json[subset], read from <data root>/longbench_ref/"},
          {"max_new_tokens", "config/dataset2maxlen.json[subset]"},
          {"truncation",
           "middle: if the prompt (BOS included) exceeds max_length tokens, decode(ids[:max_length//2]) + "
           "decode(ids[-max_length//2:]), then re-tokenised (pred.py)"},
          {"max_length", "model context - max_new_tokens - chat template tokens (or max_length / max_length_model)"},
          {"chat_template", "task_params.chat_template (none for base models; model = the model's own chat_template, "
                            "encoded without adding BOS again); never on trec, triviaqa, samsum, lcc, repobench-p"},
          {"decoding", "greedy (num_beams=1, do_sample=False); stops at EOS; samsum also at '\\n' after >= 1 token"},
          {"scoring",
           "eval.py: max over answers of dataset2metric[subset]; first line only for trec/triviaqa/samsum; "
           "score = round(100 * mean, 2)"},
          {"pipelines",
           {{"pred_py", "THUDM/LongBench pred.py (default)"},
            {"kvcache_factory",
             "KVCache-Factory run_longbench.py @7ee6be0: chat template on every subset before the middle truncation, "
             "its model2maxlen (llama2 3950, llama3 7950, mistral 31500), EOS masked at the first step, EOS-only stop"},
            {"kvpress",
             "NVIDIA/kvpress: context (compressed) then question + answer prefix fed without eviction, context cut "
             "from the right, dataset2maxlen + 20 new tokens, greedy, prediction lstripped before scoring"}}}};
}

class LongBenchTask : public Task {
 public:
  explicit LongBenchTask(std::string subset) : subset_(std::move(subset)) {}
  params::Params parameters() const override { return longbench_params(); }

  nlohmann::json settings() const override {
    nlohmann::json s = common_settings();
    s["subset"] = subset_;
    s["metric"] = metrics::lb_metric_for_dataset(subset_);
    s["first_line_rule"] = metrics::lb_uses_first_line_rule(subset_);
    s["chat_template_applies"] = longbench::uses_chat_template(subset_);
    if (!resolved_.is_null()) s["resolved"] = resolved_;  // filled by run()
    return s;
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {data_file(ctx, subset_), config_file(ctx, "dataset2prompt.json"), config_file(ctx, "dataset2maxlen.json")};
  }

  nlohmann::json run(const TaskContext& ctx) const override {
    SubsetRun r = run_subset(ctx, subset_, 0, 0);
    resolved_ = r.resolved;
    return {{"metrics", r.metrics}, {"examples", r.examples}};
  }

 private:
  std::string subset_;
  mutable nlohmann::json resolved_;  // the settings the last run used (recorded in the result)
};

// The 16 subsets (or task_params.subsets) one after another; metrics per subset, per LongBench
// category, and the average over subsets (LongBench's "Avg").
class LongBenchAllTask : public Task {
 public:
  params::Params parameters() const override {
    params::Params declared = longbench_params();
    declared.push_back(params::Param::texts("subsets", longbench::english_subsets(), "the subsets run, in order"));
    return declared;
  }
  nlohmann::json settings() const override {
    nlohmann::json s = common_settings();
    s["subsets"] = longbench::english_subsets();
    s["aggregate"] = "average = mean of the subsets' scores; category averages where all members ran";
    if (!resolved_.is_null()) s["resolved"] = resolved_;
    return s;
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    std::vector<std::string> files = {config_file(ctx, "dataset2prompt.json"), config_file(ctx, "dataset2maxlen.json")};
    for (const auto& s : subsets(ctx)) files.push_back(data_file(ctx, s));
    return files;
  }

  nlohmann::json run(const TaskContext& ctx) const override {
    if (ctx.given("data_file")) throw std::invalid_argument("longbench/all: task_params.data_file names one subset's file; run that subset instead");
    nlohmann::json metrics = nlohmann::json::object(), examples = nlohmann::json::array();
    resolved_ = nlohmann::json::object();
    const auto names = subsets(ctx);
    std::map<std::string, double> scores;
    int64_t done = 0;
    for (const auto& s : names) {
      SubsetRun r = run_subset(ctx, s, done, 0);
      done += static_cast<int64_t>(r.examples.size());
      metrics[s] = r.metrics;
      scores[s] = r.metrics["score"].get<double>();
      resolved_[s] = r.resolved;
      for (auto& e : r.examples) examples.push_back(std::move(e));
    }
    double sum = 0;
    for (const auto& s : names) sum += scores[s];
    metrics["average"] = sum / static_cast<double>(names.size());
    for (const auto& [category, members] : longbench::categories()) {
      double total = 0;
      bool all = true;
      for (const auto& m : members) {
        if (!scores.count(m)) all = false;
        else total += scores[m];
      }
      if (all) metrics["category_" + category] = total / static_cast<double>(members.size());
    }
    return {{"metrics", metrics}, {"examples", examples}};
  }

 private:
  static std::vector<std::string> subsets(const TaskContext& ctx) {
    std::vector<std::string> names = ctx.param<std::vector<std::string>>("subsets");
    if (names.empty()) throw std::invalid_argument("longbench/all: task_params.subsets is empty");
    for (const auto& n : names)
      if (!longbench::is_english_subset(n))
        throw std::invalid_argument("longbench/all: '" + n + "' is not an English LongBench subset");
    return names;
  }
  mutable nlohmann::json resolved_;
};

std::unique_ptr<Task> make_longbench(const std::string& member) {
  if (member == "all") return std::make_unique<LongBenchAllTask>();
  if (!longbench::is_english_subset(member)) {
    std::string known;
    for (const auto& s : longbench::english_subsets()) known += (known.empty() ? "" : ", ") + s;
    throw std::invalid_argument("unknown LongBench subset '" + member + "' (English subsets: " + known +
                                ", all; the Chinese subsets are not supported)");
  }
  return std::make_unique<LongBenchTask>(member);
}

std::vector<std::string> longbench_members() {
  std::vector<std::string> m = longbench::english_subsets();
  m.push_back("all");
  return m;
}

const TaskRegistration longbench_family({"longbench/",
                                         "LongBench English subsets (pred.py prompts, middle truncation, eval.py metrics)",
                                         longbench_members(), make_longbench});

}  // namespace
}  // namespace kvbench::tasks
