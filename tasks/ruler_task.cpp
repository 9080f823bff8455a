// ruler/<task>: NVIDIA RULER's 13 synthetic tasks (niah_single_1 ... qa_2) at any
// max_seq_length, for the job's own tokenizer. The samples are generated natively, equal byte for
// byte to RULER's scripts/data/prepare.py (datasets/ruler/), or read from a pre-generated file:
// RULER's own manifest (validation.jsonl) or kvpress's RULER rows (context, question,
// answer_prefix, answer, task, max_new_tokens). Prediction as RULER's pred/call_api.py with a
// Hugging Face model: the prompt is input + answer_prefix (BOS added by the tokenizer), greedy
// decoding of tokens_to_generate tokens, stop at EOS, cut at --stop_words (none by default).
// Scoring as scripts/eval/evaluate.py: postprocess_pred, then string_match_all (niah, vt, cwe,
// fwe) or string_match_part (qa) per example; the task's number is round(mean * 100, 2).
// `pipeline: kvpress` runs kvpress's protocol instead (evaluation/evaluate.py + pipeline.py): the
// sample split as its create_huggingface_dataset.py splits RULER's input (context / question /
// answer prefix), the context prefilled and compressed by the policy, the question + "\n" (or the
// chat template's suffix) + answer prefix fed after it without compression, greedy until the
// generation config's EOS; `query_aware` appends the question to the context before compression.
#include <algorithm>
#include <array>
#include <filesystem>
#include <iostream>
#include <limits>

#include "datasets/data_root.hpp"
#include "datasets/jsonl_reader.hpp"
#include "datasets/ruler/ruler_config.hpp"
#include "datasets/ruler/ruler_generator.hpp"
#include "metrics/ruler_metrics.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

namespace ruler = datasets::ruler;

// One prompt to answer, from the generator or a file.
struct RulerItem {
  std::string id;
  std::string input, answer_prefix;
  std::optional<std::pair<std::string, std::string>> kvpress_split;  // kvpress rows: context, question
  std::vector<std::string> outputs;
  std::optional<int64_t> max_new_tokens;  // kvpress rows carry their own
  nlohmann::json fields = nlohmann::json::object();
};

// One item's prompt as fed (kvpress: the context, then the question after its compression).
struct RulerFed {
  std::string prompt;
  std::vector<int64_t> ids, question_ids;
  int64_t query_tokens = 0;  // kvpress, query-aware: KvpressIds::query_tokens
  DecodingSettings dec;
};

// The fields each accepted file format may hold: anything else is an error.
const std::vector<std::string> kManifestFields = {"index",  "input", "outputs", "length", "length_w_model_temp",
                                                  "answer_prefix", "token_position_answer", "others", "truncation"};
const std::vector<std::string> kKvpressFields = {"context", "question", "answer_prefix", "answer", "task", "max_new_tokens"};

void check_fields(const datasets::JsonRecord& r, const std::vector<std::string>& allowed, const std::string& format) {
  for (const auto& [key, value] : r.value.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw r.field_error(key, "not a field of " + format);
}

// create_huggingface_dataset.py's split of RULER's input + answer prefix: the question starts at
// the last match of the task family's question pattern, the answer prefix at the first match of
// its answer pattern after it. {context, question, answer_prefix}.
std::array<std::string, 3> kvpress_split(const std::string& task, const std::string& text) {
  const std::string family = task.substr(0, task.find('_'));
  std::vector<std::string> question_starts;
  if (family == "niah") question_starts = {"What is the special magic", "What are all the special magic"};
  else if (family == "vt") question_starts = {"Question: Find all variables that are assigned the value"};
  else if (family == "cwe") question_starts = {"Question: What are the 10 most common words in the above list?"};
  else if (family == "fwe") question_starts = {"Question: Do not provide any explanation."};
  else question_starts = {"Answer the question based on the given documents."};
  std::size_t at = std::string::npos;
  for (const std::string& q : question_starts) {
    const std::size_t found = text.rfind(q);
    if (found != std::string::npos && (at == std::string::npos || found > at)) at = found;
  }
  if (at == std::string::npos) throw std::invalid_argument("ruler/" + task + ": kvpress finds no question in the sample");
  const std::string qa = text.substr(at);
  const std::size_t answer = qa.find(family == "niah" ? "The special magic" : "Answer:");
  if (answer == std::string::npos) throw std::invalid_argument("ruler/" + task + ": kvpress finds no answer prefix in the sample");
  return {text.substr(0, at), qa.substr(0, answer), qa.substr(answer)};
}

std::vector<std::string> ruler_members() {
  std::vector<std::string> names;
  for (const auto& t : ruler::tasks()) names.push_back(t.name);
  return names;
}

class RulerTask : public Task {
 public:
  // `within_all`: one task of ruler/all, whose data_file must say each row's task.
  explicit RulerTask(const std::string& member, bool within_all = false) : config_(ruler::task(member)), within_all_(within_all) {}

  nlohmann::json settings() const override {
    const ruler::GeneratorConstants& c = ruler::constants(config_.generator);
    return {{"protocol", "generate-and-score; samples generated as RULER's prepare.py (or read from data_file)"},
            {"source", "NVIDIA/RULER @ c3f5e3b4 scripts/synthetic.yaml, scripts/data/synthetic/" + std::string(c.name) + ".py"},
            {"config", config_.args},
            {"template", c.template_text},
            {"answer_prefix", c.answer_prefix},
            {"prompt", "input + answer_prefix, the tokenizer's BOS first"},
            {"decoding", "greedy, tokens_to_generate new tokens (RULER: " + std::to_string(c.tokens_to_generate) + ")"},
            {"stop", "EOS; stop_words cut the prediction"},
            {"metric", std::string(c.metric) + " after postprocess_pred; score = round(mean * 100, 2)"}};
  }

  params::Params parameters() const override {
    using params::Param;
    return {Param::integer("max_seq_length", nullptr, "input plus generated tokens, as RULER counts them (default: the model's context less its BOS)", 16),
            Param::integer("num_samples", 500, "samples (prepare.py's default; the job's limit cuts further)", 1),
            Param::integer("random_seed", 42, "prepare.py --random_seed", 0, 4294967295LL),
            Param::choice("model_template_type", "base", ruler::model_template_names(), "template.py's wrapper around the task template"),
            Param::flag("remove_newline_tab", false, "prepare.py --remove_newline_tab"),
            Param::integer("tokens_to_generate", nullptr,
                           "new tokens, also reserved when generating (the task scripts' --tokens_to_generate; default: "
                           "RULER's for the task, or a kvpress row's max_new_tokens)",
                           1),
            Param::text("data_file", nullptr,
                        "a pre-generated RULER manifest or kvpress RULER rows (JSONL) instead of generating; "
                        "relative to the data root"),
            Param::text("squad_file", nullptr, "qa_1: SQuAD v2.0 dev (default: ruler/squad.json in the data root)"),
            Param::text("hotpotqa_file", nullptr, "qa_2: HotpotQA dev distractor (default: ruler/hotpotqa.json in the data root)"),
            Param::texts("stop_words", nlohmann::json::array(), "call_api.py --stop_words: the prediction is cut before each"),
            Param::choice("pipeline", "ruler", {"ruler", "kvpress"},
                          "RULER's call_api.py (one prompt) or kvpress's protocol (the context compressed, the question after)"),
            chat_template_param("kvpress pipeline: the chat template pipeline.py applies (default: the model's own when its tokenizer has one, as pipeline.py; none: BOS + context, \"\\n\" after the question)", nullptr),
            Param::flag("query_aware", false, "kvpress pipeline: the question is appended to the context before compression"),
            Param::choice("postprocess", nullptr, {"ruler", "kvpress"},
                          "RULER's postprocess_pred (control characters -> newlines) or kvpress's (deleted); default: the pipeline's"),
            record_prompts_param()};
  }

  void check_params(const nlohmann::json& p) const override {
    const bool generating = !p.contains("data_file");
    for (const char* key : {"num_samples", "random_seed", "model_template_type", "remove_newline_tab", "max_seq_length"})
      if (!generating && p.contains(key))
        throw std::invalid_argument(std::string("ruler: task_params.") + key + " shapes generated samples; data_file gives them ready-made");
    if (p.value("pipeline", "ruler") != "kvpress")
      for (const char* key : {"chat_template", "query_aware"})
        if (p.contains(key)) throw std::invalid_argument(std::string("ruler: task_params.") + key + " is read by the kvpress pipeline only");
    const std::string dataset = config_.generator == ruler::Generator::qa ? config_.args.at("dataset").get<std::string>() : "";
    if (p.contains("squad_file") && dataset != "squad") throw std::invalid_argument("ruler: squad_file is read by qa_1 only");
    if (p.contains("hotpotqa_file") && dataset != "hotpotqa") throw std::invalid_argument("ruler: hotpotqa_file is read by qa_2 only");
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    if (ctx.given("data_file"))
      return {datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("data_file", ""), "RULER prepare.py output or kvpress's RULER dataset")};
    ruler::RulerData data = resources(ctx);
    std::vector<std::string> files;
    for (const std::string& name : ruler::data_file_names(config_.name)) files.push_back(data.path(name));
    return files;
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const std::vector<RulerItem> items = ctx.given("data_file") ? read_file(ctx) : generate(ctx);
    const std::string metric = ruler::constants(config_.generator).metric;
    const std::string pipeline = ctx.param<std::string>("pipeline");
    // pipeline.py: the tokenizer's chat template when it has one, else BOS + context.
    const std::string chat = ctx.param_or<std::string>("chat_template", ctx.tokenizer->config().chat_template ? kModelChatTemplate : "none");
    const auto post = ctx.param_or<std::string>("postprocess", pipeline) == "kvpress" ? metrics::RulerPostprocess::kvpress
                                                                                      : metrics::RulerPostprocess::ruler;
    ExampleLoop loop(ctx, static_cast<int64_t>(items.size()));
    // Every prompt first: kvpress's pipeline answers the questions of one context from one prefill.
    std::vector<RulerFed> fed;
    bool warned_past_context = false;
    const std::string delimiter = pipeline == "kvpress" && ctx.param<bool>("query_aware") ? ctx.query_delimiter() : "";
    for (int64_t i = 0; i < loop.size(); ++i) {
      const RulerItem& item = items[i];
      const RulerFed& f = fed.emplace_back(prepare(ctx, item, pipeline, chat, delimiter));
      const int64_t prompt_tokens = static_cast<int64_t>(f.ids.size() + f.question_ids.size());
      if (!warned_past_context && prompt_tokens + f.dec.max_new_tokens > ctx.max_context()) {
        std::cerr << "warning: ruler/" << config_.name << ": sample " << item.id << " needs " << prompt_tokens << " prompt + "
                  << f.dec.max_new_tokens << " generated tokens, past the model's trained context of " << ctx.max_context()
                  << " (RULER does not truncate; its scores there are the model's)\n";
        warned_past_context = true;
      }
    }
    std::vector<double> values;
    int64_t nulls = 0;
    CompressOnce compress_once(ctx);
    for (size_t i : run_order(fed.size(), [&](size_t k) -> const std::vector<int64_t>& { return fed[k].ids; }, pipeline == "kvpress")) {
      const RulerItem& item = items[i];
      const RulerFed& f = fed[i];
      const Completion out = pipeline == "kvpress" ? compress_once.answer(f.ids, f.question_ids, f.dec, f.query_tokens) : complete(ctx, f.ids, f.dec);
      const std::string pred = metrics::ruler_postprocess(out.text, post);
      const double v = metric == "string_match_part" ? metrics::ruler_string_match_part(pred, item.outputs)
                                                     : metrics::ruler_string_match_all(pred, item.outputs);
      values.push_back(v);
      nulls += pred.empty() ? 1 : 0;
      loop.record({item.id, out.prompt_tokens, out.text, item.outputs, {{metric, v}}, item.fields, f.prompt});
    }
    const int64_t prefills = pipeline == "kvpress" ? compress_once.prefills() : static_cast<int64_t>(values.size());
    return loop.finish({{"string_match", values.empty() ? nlohmann::json(nullptr) : nlohmann::json(metrics::ruler_task_score(values))},
                        {metric, loop.mean(metric)},
                        {"nulls", nulls},
                        {"samples", values.size()},
                        {"prefills", prefills}},
                       {{"max_seq_length", ctx.given("data_file") ? nlohmann::json(nullptr) : nlohmann::json(max_seq_length(ctx))},
                        {"postprocess", post == metrics::RulerPostprocess::kvpress ? "kvpress" : "ruler"},
                        {"chat_template", pipeline == "kvpress" ? nlohmann::json(chat) : nlohmann::json(nullptr)}});
  }

 private:
  // One item's prompt as its pipeline feeds it, and its decoding; `delimiter`: the policy's query
  // delimiter in a query-aware kvpress prompt.
  RulerFed prepare(const TaskContext& ctx, const RulerItem& item, const std::string& pipeline, const std::string& chat,
                   const std::string& delimiter) const {
    RulerFed f;
    f.dec.max_new_tokens = ctx.param_or<int64_t>("tokens_to_generate", item.max_new_tokens.value_or(ruler::constants(config_.generator).tokens_to_generate));
    f.dec.stop_strings = ctx.param<std::vector<std::string>>("stop_words");
    if (pipeline != "kvpress") {
      f.prompt = item.input + item.answer_prefix;
      f.ids = encode_prompt(ctx, f.prompt);
      return f;
    }
    auto [context, question, answer_prefix] = item.kvpress_split
                                                  ? std::array<std::string, 3>{item.kvpress_split->first, item.kvpress_split->second, item.answer_prefix}
                                                  : kvpress_split(config_.name, item.input + item.answer_prefix);
    const KvpressParts parts = ctx.param<bool>("query_aware")
                                   ? kvpress_query_aware_parts(context, question, answer_prefix, chat, *ctx.tokenizer, delimiter)
                                   : kvpress_parts(context, question, answer_prefix, chat, *ctx.tokenizer);
    KvpressIds kv = kvpress_ids(*ctx.tokenizer, parts, std::numeric_limits<int64_t>::max());
    f.ids = std::move(kv.context);
    f.question_ids = std::move(kv.question);
    f.query_tokens = kv.query_tokens;
    f.prompt = parts.context + parts.question;
    if (!f.dec.stop_strings.empty()) throw std::invalid_argument("ruler: stop_words are call_api.py's; the kvpress pipeline stops at EOS only");
    f.dec.stop_token_ids.assign(ctx.tokenizer->stop_ids().begin(), ctx.tokenizer->stop_ids().end());  // generation_config's eos_token_id
    return f;
  }

  // RULER counts the prompt without the BOS the model is fed: the default leaves room for it.
  int64_t max_seq_length(const TaskContext& ctx) const {
    return ctx.param_or<int64_t>("max_seq_length", ctx.max_context() - static_cast<int64_t>(ctx.tokenizer->encode("", true).size()));
  }

  ruler::RulerData resources(const TaskContext& ctx) const {
    const std::string root = ctx.data_root.empty() ? datasets::default_data_root() : ctx.data_root;
    std::map<std::string, std::string> overrides;
    for (const auto& [param, file] : {std::pair<const char*, const char*>{"squad_file", "squad.json"}, {"hotpotqa_file", "hotpotqa.json"}})
      if (ctx.given(param)) overrides[file] = (std::filesystem::path(root) / ctx.param_or<std::string>(param, "")).string();
    return ruler::RulerData({root + "/ruler", datasets::bundled_data_dir() + "/ruler"}, overrides);
  }

  std::vector<RulerItem> generate(const TaskContext& ctx) const {
    ruler::Request request;
    request.task = config_.name;
    request.max_seq_length = max_seq_length(ctx);
    request.num_samples = ctx.param<int64_t>("num_samples");
    if (ctx.limit > 0) request.num_samples = std::min(request.num_samples, ctx.limit);  // a sample never depends on later ones
    request.random_seed = ctx.param<int64_t>("random_seed");
    request.model_template_type = ctx.param<std::string>("model_template_type");
    request.remove_newline_tab = ctx.param<bool>("remove_newline_tab");
    if (ctx.given("tokens_to_generate")) request.tokens_to_generate = ctx.param_or<int64_t>("tokens_to_generate", 0);
    ruler::RulerData data = resources(ctx);
    const models::Tokenizer& tok = *ctx.tokenizer;
    const auto count = [&tok](const std::string& text) { return static_cast<int64_t>(tok.encode(text, false).size()); };
    std::vector<RulerItem> items;
    int64_t i = 0;
    for (ruler::Sample& s : ruler::generate(request, count, data)) {
      nlohmann::json fields = {{"length", s.length}};
      if (s.token_position_answer) fields["token_position_answer"] = *s.token_position_answer;
      items.push_back({std::to_string(i++), std::move(s.input), std::move(s.answer_prefix), std::nullopt, std::move(s.outputs), std::nullopt, fields});
    }
    return items;
  }

  std::vector<RulerItem> read_file(const TaskContext& ctx) const {
    std::vector<RulerItem> items;
    int64_t i = 0;
    datasets::for_each_jsonl(data_files(ctx).front(), [&](const datasets::JsonRecord& r) {
      RulerItem item;
      if (r.has("input")) {  // RULER's manifest (older ones keep the answer prefix inside input)
        if (within_all_) throw r.error("ruler/all: a RULER manifest holds one task; run ruler/<task> with it");
        check_fields(r, kManifestFields, "a RULER manifest");
        item.input = r.string_field("input");
        item.answer_prefix = r.string_field_or("answer_prefix", "");
        item.outputs = r.string_list_field("outputs");
      } else if (r.has("context")) {  // kvpress's RULER dataset: every task in one file
        check_fields(r, kKvpressFields, "kvpress's RULER dataset");
        if (within_all_ && !r.has("task")) throw r.error("ruler/all: a row without 'task' (run one task for a single-task file)");
        if (r.has("task") && r.string_field("task") != config_.name) return true;
        item.input = r.string_field("context") + r.string_field("question");
        item.kvpress_split = std::make_pair(r.string_field("context"), r.string_field("question"));
        item.answer_prefix = r.string_field("answer_prefix");
        item.outputs = r.string_list_field("answer");
        if (r.has("max_new_tokens")) item.max_new_tokens = r.int_field("max_new_tokens");
      } else {
        throw r.error("neither a RULER manifest line (input, outputs) nor a kvpress RULER row (context, question, answer)");
      }
      if (item.outputs.empty()) throw r.field_error(r.has("input") ? "outputs" : "answer", "no reference answer");
      item.id = std::to_string(i++);
      item.fields = {{"line", r.line}};
      items.push_back(std::move(item));
      return ctx.limit <= 0 || static_cast<int64_t>(items.size()) < ctx.limit;
    });
    if (items.empty()) throw std::invalid_argument("ruler/" + config_.name + ": " + data_files(ctx).front() + " holds no sample of this task");
    return items;
  }

  const ruler::TaskConfig& config_;
  bool within_all_ = false;
};

// ruler/all: the chosen tasks one after another with the same parameters; `average` is the mean
// of their string_match scores (RULER's and kvpress's leaderboard number).
class RulerAllTask : public Task {
 public:
  nlohmann::json settings() const override {
    nlohmann::json s = RulerTask("niah_single_1").settings();
    s.erase("config"), s.erase("template"), s.erase("answer_prefix"), s.erase("source");
    s["source"] = "NVIDIA/RULER @ c3f5e3b4 scripts/synthetic.yaml";
    s["metric"] = "per task string_match (RULER's evaluate.py); average = mean over the tasks run";
    return s;
  }
  params::Params parameters() const override {
    params::Params declared = RulerTask("niah_single_1").parameters();
    declared.push_back(params::Param::texts("tasks", ruler_members(), "the RULER tasks run, in order"));
    return declared;
  }
  void check_params(const nlohmann::json& p) const override {
    nlohmann::json single = p;
    single.erase("tasks"), single.erase("squad_file"), single.erase("hotpotqa_file");
    RulerTask("niah_single_1").check_params(single);
  }
  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    std::vector<std::string> files;
    for (const auto& t : names(ctx))
      for (const auto& f : RulerTask(t, true).data_files(ctx))
        if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
    return files;
  }
  TaskOutput run(const TaskContext& ctx) const override {
    TaskOutput out;
    out.resolved = nlohmann::json::object();
    double sum = 0;
    const auto tasks = names(ctx);
    for (const auto& t : tasks) {
      TaskOutput r = RulerTask(t, true).run(ctx);
      sum += r.metrics["string_match"].get<double>();
      out.metrics[t] = std::move(r.metrics);
      out.resolved[t] = std::move(r.resolved);
      for (auto& e : r.examples) {
        e["task"] = t;
        out.examples.push_back(std::move(e));
      }
    }
    out.metrics["average"] = sum / static_cast<double>(tasks.size());
    return out;
  }

 private:
  static std::vector<std::string> names(const TaskContext& ctx) {
    const auto names = ctx.param<std::vector<std::string>>("tasks");
    if (names.empty()) throw std::invalid_argument("ruler/all: task_params.tasks is empty");
    for (const auto& n : names) ruler::task(n);  // throws naming the known tasks
    return names;
  }
};

std::vector<std::string> ruler_family_members() {
  std::vector<std::string> m = ruler_members();
  m.push_back("all");
  return m;
}

const TaskRegistration ruler_family({"ruler/", "NVIDIA RULER's 13 synthetic tasks (prepare.py's samples, evaluate.py's scores)",
                                     ruler_family_members(), [](const std::string& member) -> std::unique_ptr<Task> {
                                       if (member == "all") return std::make_unique<RulerAllTask>();
                                       return std::make_unique<RulerTask>(member);
                                     }});

}  // namespace
}  // namespace kvbench::tasks
