// Tasks longbench/<subset> (16 English subsets) and longbench/all (their average), following
// LongBench's pred.py and eval.py; see tasks/longbench.hpp and docs/tasks.md.
#include <fstream>
#include <map>
#include <numeric>
#include <optional>

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

constexpr const char* kLongbenchSource = "THUDM/LongBench on Hugging Face (data.zip: data/<subset>.jsonl)";
constexpr const char* kLongbenchConfigSource = "THUDM/LongBench @2e00731 LongBench/config/";

std::string config_file(const TaskContext& ctx, const std::string& name) {
  return datasets::resolve_data_file(ctx.data_root, "longbench_ref/" + name, kLongbenchConfigSource + name);
}

std::string data_file(const TaskContext& ctx, const std::string& subset) {
  const bool e = ctx.param<bool>("longbench_e");
  const std::string fallback = "longbench/" + subset + (e ? "_e" : "") + ".jsonl";
  return datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("data_file", fallback), kLongbenchSource);
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

// What one subset runs with: its prompt, the pipeline's length rule and decoding.
struct SubsetSetup {
  std::string subset, prompt_template, chat, max_length_rule;
  longbench::Pipeline pipeline = longbench::Pipeline::PredPy;
  int64_t max_new_tokens = 0;
  int64_t max_length = 0;  // 0: kvpress's per-example rule
  DecodingSettings decoding;

  nlohmann::json resolved() const {
    return {{"pipeline", longbench::to_string(pipeline)},
            {"prompt_template", prompt_template},
            {"max_new_tokens", max_new_tokens},
            {"max_length", max_length},
            {"max_length_rule", max_length_rule},
            {"chat_template", pipeline != longbench::Pipeline::PredPy || longbench::uses_chat_template(subset)
                                  ? chat : "none (excluded subset)"},
            {"decoding", decoding.to_json()}};
  }
};

// The prompt length limit (`max_length`) and the rule that gave it.
void resolve_max_length(const TaskContext& ctx, SubsetSetup& s) {
  using longbench::Pipeline;
  if (ctx.given("max_length")) {
    s.max_length = ctx.param_or<int64_t>("max_length", 0);
    s.max_length_rule = "task_params.max_length";
  } else if (ctx.given("max_length_model") && s.pipeline == Pipeline::KvcacheFactory) {
    const std::string name = ctx.param_or<std::string>("max_length_model", "");
    s.max_length = longbench::kvcache_factory_max_length(name);
    s.max_length_rule = "KVCache-Factory run_longbench.py model2maxlen matched in '" + name + "'";
  } else if (ctx.given("max_length_model") && s.pipeline == Pipeline::PredPy) {
    const std::string name = ctx.param_or<std::string>("max_length_model", "");
    const nlohmann::json table = datasets::read_json_file(config_file(ctx, "model2maxlen.json"));
    if (!table.contains(name)) throw std::invalid_argument("task_params.max_length_model '" + name + "' is not in model2maxlen.json");
    s.max_length = table.at(name).get<int64_t>();
    s.max_length_rule = "model2maxlen.json[" + name + "]";
  } else if (ctx.given("max_length_model")) {
    throw std::invalid_argument("task_params.max_length_model: kvpress has no model table (its max_context_length is "
                                "the tokenizer's model_max_length); set task_params.max_length");
  } else if (s.pipeline == Pipeline::PredPy) {
    s.max_length = longbench::default_max_length(*ctx.tokenizer, ctx.max_context(), s.max_new_tokens, s.chat, s.subset);
    s.max_length_rule = "model context - max_new_tokens - chat template tokens";
  } else if (s.pipeline == Pipeline::KvcacheFactory) {
    // The chat wrapper is inside the truncation: only the generation needs room.
    s.max_length = longbench::default_max_length(*ctx.tokenizer, ctx.max_context(), s.max_new_tokens, "none", s.subset);
    s.max_length_rule = "model context - max_new_tokens";
  } else {
    s.max_length_rule = "model context - the longest question of the context - max_new_tokens (per context)";
  }
}

SubsetSetup resolve_subset(const TaskContext& ctx, const std::string& subset) {
  using longbench::Pipeline;
  const nlohmann::json prompts = datasets::read_json_file(config_file(ctx, "dataset2prompt.json"));
  const nlohmann::json maxlens = datasets::read_json_file(config_file(ctx, "dataset2maxlen.json"));
  if (!prompts.contains(subset) || !maxlens.contains(subset))
    throw std::runtime_error("longbench_ref/dataset2prompt.json or dataset2maxlen.json has no entry for " + subset);
  SubsetSetup s;
  s.subset = subset;
  s.prompt_template = prompts.at(subset).get<std::string>();
  s.pipeline = longbench::parse_pipeline(ctx.param<std::string>("pipeline"));
  // kvpress: "be a bit more generous with token generation to avoid any cut-offs".
  const int64_t extra = s.pipeline == Pipeline::Kvpress ? longbench::kKvpressExtraNewTokens : 0;
  s.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", maxlens.at(subset).get<int64_t>() + extra);
  s.chat = ctx.param<std::string>("chat_template");
  apply_chat_template(s.chat, "", *ctx.tokenizer);  // validates the name (and that the model has its own template)
  resolve_max_length(ctx, s);
  s.decoding.max_new_tokens = s.max_new_tokens;
  if (s.pipeline == Pipeline::PredPy && subset == "samsum") {  // pred.py: eos_token_id=[eos, "\n"], min_length = context_length + 1
    s.decoding.stop_token_ids = {ctx.tokenizer->encode("\n", false).back()};
    s.decoding.min_new_tokens = 1;
  }
  if (s.pipeline == Pipeline::KvcacheFactory) s.decoding.min_new_tokens = 1;  // min_length = context_length + 1, eos only
  return s;
}

// One record's prompt, as its pipeline builds and feeds it, and the completion.
struct FedExample {
  longbench::PreparedPrompt prompt;
  std::vector<int64_t> ids;           // what is prefilled (kvpress: the context, compressed)
  std::vector<int64_t> question_ids;  // kvpress: fed after the compressed context
  std::string question;               // kvpress: its text
  std::string original_prompt;        // kvpress: the context before its cut, when cut
  Completion completion;
};

// pred.py's and KVCache-Factory's prompt of one record.
FedExample prepare(const TaskContext& ctx, const SubsetSetup& s, const datasets::JsonRecord& r) {
  using longbench::Pipeline;
  FedExample f;
  f.prompt = s.pipeline == Pipeline::KvcacheFactory
                 ? longbench::kvcache_factory_prompt(*ctx.tokenizer, s.prompt_template, r, s.max_length, s.chat)
                 : longbench::prepare_prompt(*ctx.tokenizer, s.subset, s.prompt_template, r, s.max_length, s.chat);
  // The model's own template wrote its BOS: not added again while the text still has it.
  // (KVCache-Factory wraps every subset; pred.py only the chat subsets.)
  const bool wrapped = s.pipeline == Pipeline::KvcacheFactory || longbench::uses_chat_template(s.subset);
  const bool add_bos = !wrapped || encode_adds_special_tokens(s.chat, f.prompt.text, *ctx.tokenizer);
  f.ids = encode_prompt(ctx, f.prompt.text, add_bos);
  return f;
}

// kvpress's prompts of the records: each context cut from the right to max_length tokens, by
// default to what the model's context leaves for its longest question and the answer (one length
// per context). What is fed is recorded as the kept ids decoded, the text before the cut a second field.
std::vector<FedExample> prepare_kvpress(const TaskContext& ctx, const SubsetSetup& s, const std::vector<datasets::JsonRecord>& records, int64_t n) {
  std::vector<KvpressParts> parts;
  for (int64_t i = 0; i < n; ++i) parts.push_back(longbench::kvpress_parts(s.subset, s.prompt_template, records[i], s.chat, *ctx.tokenizer));
  const std::optional<int64_t> limit = s.max_length > 0 ? std::optional<int64_t>(s.max_length) : std::nullopt;
  std::vector<KvpressIds> ids = kvpress_ids_by_context(*ctx.tokenizer, parts, std::vector<int64_t>(parts.size(), s.max_new_tokens),
                                                       ctx.max_context(), limit, "longbench/" + s.subset, "max_length");
  std::vector<FedExample> fed(parts.size());
  for (size_t i = 0; i < fed.size(); ++i) {
    FedExample& f = fed[i];
    f.prompt = {ctx.tokenizer->decode(std::vector<int>(ids[i].context.begin(), ids[i].context.end())), ids[i].original_context_tokens,
                ids[i].truncated};
    if (ids[i].truncated) f.original_prompt = parts[i].context;
    f.question = parts[i].question;
    f.ids = std::move(ids[i].context);
    f.question_ids = std::move(ids[i].question);
  }
  return fed;
}

// Every prompt of the subset, in the order they run: kvpress answers the questions of one context
// from one prefill (run_order groups them), the other pipelines in file order.
std::vector<FedExample> prepare_all(const TaskContext& ctx, const SubsetSetup& s,
                                    const std::vector<datasets::JsonRecord>& records, int64_t n, std::vector<size_t>& order) {
  std::vector<FedExample> fed;
  if (s.pipeline == longbench::Pipeline::Kvpress) {
    fed = prepare_kvpress(ctx, s, records, n);
  } else {
    for (int64_t i = 0; i < n; ++i) fed.push_back(prepare(ctx, s, records[i]));
  }
  order = run_order(fed.size(), [&](size_t k) -> const std::vector<int64_t>& { return fed[k].ids; },
                    s.pipeline == longbench::Pipeline::Kvpress);
  return fed;
}

// One subset: prompts, generation, eval.py scoring.
TaskOutput run_subset(const TaskContext& ctx, const std::string& subset, int64_t done_before) {
  const SubsetSetup s = resolve_subset(ctx, subset);
  std::vector<std::string> predictions;
  std::vector<std::vector<std::string>> answers;
  std::vector<long long> lengths;
  std::vector<std::string> all_classes;
  const auto records = datasets::read_jsonl(data_file(ctx, subset), ctx.limit);
  if (records.empty()) throw std::runtime_error(data_file(ctx, subset) + ": no examples");
  const bool needs_classes = metrics::lb_metric_for_dataset(subset) == "classification_score";
  for (const auto& r : records) check_reference_fields(r, needs_classes);
  ExampleLoop loop(ctx, static_cast<int64_t>(records.size()), {done_before, 0});
  const bool kvpress = s.pipeline == longbench::Pipeline::Kvpress;
  std::vector<size_t> order;
  std::vector<FedExample> fed = prepare_all(ctx, s, records, loop.size(), order);
  CompressOnce compress_once(ctx);
  for (size_t i : order) {
    const auto& r = records[i];
    FedExample& f = fed[i];
    f.completion = kvpress ? compress_once.answer(f.ids, f.question_ids, s.decoding) : complete(ctx, f.ids, s.decoding);
    predictions.push_back(kvpress ? longbench::kvpress_scored_prediction(subset, f.completion.text) : f.completion.text);
    answers.push_back(r.string_list_field("answers"));
    lengths.push_back(r.int_field("length"));
    // eval.py keeps the last line's all_classes (they are equal within a subset); null = none.
    all_classes = r.field("all_classes").is_null() ? std::vector<std::string>{} : r.string_list_field("all_classes");
    Example e{r.string_field_or("_id", subset + "-" + std::to_string(i)), f.completion.prompt_tokens, f.completion.text,
              answers.back(), nullptr,
              {{"subset", subset}, {"original_prompt_tokens", f.prompt.original_tokens}, {"truncated", f.prompt.truncated},
               {"length", lengths.back()}},
              f.prompt.text};  // as fed (kvpress: the context part)
    if (kvpress) e.recorded_with_prompt["question"] = f.question;
    if (!f.original_prompt.empty()) e.recorded_with_prompt["original_prompt"] = f.original_prompt;
    loop.record(std::move(e));
  }
  const auto backend = fuzz_backend(ctx);
  metrics::LongBenchAggregate agg = metrics::lb_scorer(subset, predictions, answers, all_classes, backend);
  for (size_t i = 0; i < agg.per_example.size(); ++i) loop.score(i, {{"score", agg.per_example[i]}});
  nlohmann::json m = {{"score", agg.score}, {"examples", static_cast<int64_t>(records.size())},
                      {"metric", metrics::lb_metric_for_dataset(subset)}};
  if (kvpress) m["prefills"] = compress_once.prefills();
  if (ctx.param<bool>("longbench_e")) {
    auto b = metrics::lb_scorer_e(subset, predictions, answers, lengths, all_classes, backend);
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    m["0-4k"] = opt(b.b0_4k);
    m["4-8k"] = opt(b.b4_8k);
    m["8k+"] = opt(b.b8k_plus);
  }
  return loop.finish(m, s.resolved());
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
    return s;
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {data_file(ctx, subset_), config_file(ctx, "dataset2prompt.json"), config_file(ctx, "dataset2maxlen.json")};
  }

  TaskOutput run(const TaskContext& ctx) const override { return run_subset(ctx, subset_, 0); }

 private:
  std::string subset_;
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
    return s;
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    std::vector<std::string> files = {config_file(ctx, "dataset2prompt.json"), config_file(ctx, "dataset2maxlen.json")};
    for (const auto& s : subsets(ctx)) files.push_back(data_file(ctx, s));
    return files;
  }

  TaskOutput run(const TaskContext& ctx) const override {
    if (ctx.given("data_file")) throw std::invalid_argument("longbench/all: task_params.data_file names one subset's file; run that subset instead");
    TaskOutput out;
    out.resolved = nlohmann::json::object();
    nlohmann::json& metrics = out.metrics;
    const auto names = subsets(ctx);
    std::map<std::string, double> scores;
    for (const auto& s : names) {
      TaskOutput r = run_subset(ctx, s, static_cast<int64_t>(out.examples.size()));
      scores[s] = r.metrics["score"].get<double>();
      metrics[s] = std::move(r.metrics);
      out.resolved[s] = std::move(r.resolved);
      for (auto& e : r.examples) out.examples.push_back(std::move(e));
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
    return out;
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
