// longbench_v2: LongBench-v2's 503 multiple-choice questions (THUDM/LongBench @ 2e00731f pred.py,
// result.py, prompts/). The prompt is one of its templates ($DOC$, $Q$, $C_A$..$C_D$ replaced in
// that order, each value stripped): 0shot, cot (a first answer of up to 1024 tokens, then the
// cot_ans template with it as $COT$), no_context, or rag (the first `rag` retrieved chunks, in
// document order). pred.py's query_llm cuts the middle of the prompt to max_length tokens
// (ids[:m//2] + ids[-m//2:]) and sends it as one user message, so the served model's chat template
// applies (chat_template: model); temperature 0.1, 128 new tokens. The answer is extract_answer's
// letter; an empty output drops the question as pred.py's `continue` does. Accuracy overall /
// easy / hard / short / medium / long as result.py prints it (round(100 x, 1)).
#include <algorithm>
#include <map>
#include <optional>

#include "datasets/data_root.hpp"
#include "datasets/json_parse.hpp"
#include "datasets/regular_file.hpp"
#include "metrics/longbench_v2.hpp"
#include "metrics/python_str.hpp"
#include "metrics/unicode.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/generation_engine.hpp"
#include "tasks/longbench_v2_prompt.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/python_str.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

const char* kDataFile = "longbench_v2/data.json";
const char* kLongbenchV2Source = "THUDM/LongBench-v2 on Hugging Face (data.json: _id, domain, sub_domain, difficulty, length, "
                      "question, choice_A..choice_D, answer, context)";
const std::vector<std::string> kFields = {"_id",      "domain",   "sub_domain", "difficulty", "length",  "question", "choice_A",
                                          "choice_B", "choice_C", "choice_D",   "answer",     "context", "retrieved_context"};

std::string field(const nlohmann::json& item, const char* key, const std::string& where) {
  if (!item.contains(key) || !item.at(key).is_string()) throw std::invalid_argument(where + ": field '" + key + "' is missing or not a string");
  return item.at(key).get<std::string>();
}

// The question's items, each with where it came from: data.json (a JSON list, parsed one element
// at a time so a 465 MB file never becomes one DOM) or the same records as JSONL.
std::vector<std::pair<std::string, nlohmann::json>> read_items(const std::string& path, int64_t limit) {
  const std::string text = datasets::read_regular_file(path, "LongBench-v2 data");
  std::vector<std::pair<std::string, nlohmann::json>> items;
  auto add = [&](std::string_view piece, int64_t line) {
    nlohmann::json item = datasets::parse_json(piece, path, line);
    const std::string where = path + ":" + std::to_string(line);
    if (!item.is_object()) throw datasets::DataError(path, line, "a question is not a JSON object");
    for (const auto& [key, value] : item.items())
      if (std::find(kFields.begin(), kFields.end(), key) == kFields.end())
        throw datasets::DataError(path, line, "field '" + key + "': not a field of LongBench-v2");
    items.emplace_back(where, std::move(item));
  };
  std::size_t counted_to = 0;  // line numbers counted incrementally: the file may be 465 MB
  int64_t line = 1;
  const auto line_at = [&](std::size_t offset) {
    line += std::count(text.begin() + static_cast<std::ptrdiff_t>(counted_to), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
    counted_to = offset;
    return line;
  };
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    const std::vector<std::size_t> offsets = datasets::json_array_element_offsets(text);
    const std::size_t end = text.rfind(']');
    for (std::size_t i = 0; i < offsets.size() && offsets[i] < end && (limit <= 0 || static_cast<int64_t>(items.size()) < limit); ++i) {
      const std::size_t stop = i + 1 < offsets.size() ? text.rfind(',', offsets[i + 1]) : end;
      add(std::string_view(text).substr(offsets[i], stop - offsets[i]), line_at(offsets[i]));
    }
  } else {  // JSONL
    std::size_t begin = 0;
    for (int64_t number = 1; begin < text.size() && (limit <= 0 || static_cast<int64_t>(items.size()) < limit);) {
      std::size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      const std::string_view piece = std::string_view(text).substr(begin, end - begin);
      if (piece.find_first_not_of(" \t\r") != std::string_view::npos) add(piece, number);
      begin = end + 1;
      ++number;
    }
  }
  return items;
}

class LongBenchV2Task : public Task {
 public:
  nlohmann::json settings() const override {
    return {{"protocol", "generate-and-score, multiple choice"},
            {"source", "THUDM/LongBench @ 2e00731f pred.py, result.py, prompts/"},
            {"data", kDataFile},
            {"templates", "0shot (default), cot (two queries), no_context, rag"},
            {"truncation", "the prompt's middle, to max_length tokens (ids[:m//2] + ids[-m//2:], decoded once)"},
            {"prompt", "one user message: the chat template (the served model's own in pred.py)"},
            {"decoding", "temperature 0.1, 128 new tokens (cot's first query: 1024)"},
            {"answer", "extract_answer: 'The correct answer is (X)', else 'The correct answer is X', asterisks removed"},
            {"metric", "accuracy overall, easy, hard, short, medium, long: round(100 x, 1) as result.py"}};
  }

  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("pipeline", "pred_py", {"pred_py", "kvpress"},
                          "LongBench-v2's pred.py, or kvpress's protocol (its 0shot rows, the context compressed once, the question after it)"),
            Param::flag("cot", false, "pred.py --cot: think first (1024 tokens), then answer with the cot_ans template"),
            Param::flag("no_context", false, "pred.py --no_context: the question without the document"),
            Param::integer("rag", 0, "pred.py --rag N: the first N retrieved chunks instead of the document (needs retrieved_context)", 0),
            Param::integer("max_length", nullptr, "pred.py: prompt tokens kept (model2maxlen; default: the model's context less max_new_tokens)", 2),
            Param::integer("max_new_tokens", nullptr, "answer tokens (default: pred.py's 128, kvpress's 16; cot's first query: cot_max_new_tokens)", 1),
            Param::integer("cot_max_new_tokens", 1024, "cot: the first query's tokens", 1),
            Param::number("temperature", 0.1, "pred.py's sampling temperature (0 = greedy; kvpress decodes greedily)", 0),
            Param::flag("compensated", false, "result.py's compensated: a missing answer counts 0.25"),
            chat_template_param("the chat template (default: pred.py's served model's own; kvpress: the model's own when its tokenizer has one, else none)", nullptr),
            Param::integer("max_context_length", nullptr, "kvpress: context tokens kept from the head (default: what the model's context leaves for the question and max_new_tokens)", 1),
            Param::flag("query_aware", false, "kvpress: the question is appended to the context before compression"),
            Param::text("data_file", kDataFile, "data.json (a JSON list) or the same records as JSONL, relative to the data root"),
            record_prompts_param()};
  }

  void check_params(const nlohmann::json& p) const override {
    const bool kvpress = p.value("pipeline", "pred_py") == "kvpress";
    for (const char* key : {"cot", "no_context", "rag", "max_length", "cot_max_new_tokens", "temperature", "compensated"})
      if (kvpress && p.contains(key)) throw std::invalid_argument(std::string("longbench_v2: ") + key + " is pred.py's; the kvpress pipeline does not read it");
    for (const char* key : {"max_context_length", "query_aware"})
      if (!kvpress && p.contains(key)) throw std::invalid_argument(std::string("longbench_v2: ") + key + " is read by the kvpress pipeline only");
    const int modes = (p.value("cot", false) ? 1 : 0) + (p.value("no_context", false) ? 1 : 0) + (p.value("rag", 0) > 0 ? 1 : 0);
    if (modes > 1) throw std::invalid_argument("longbench_v2: cot, no_context and rag are pred.py's alternative templates: choose one");
    if (p.contains("cot_max_new_tokens") && !p.value("cot", false)) throw std::invalid_argument("longbench_v2: cot_max_new_tokens is read with cot only");
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {datasets::resolve_data_file(ctx.data_root, ctx.param<std::string>("data_file"), kLongbenchV2Source)};
  }

  TaskOutput run(const TaskContext& ctx) const override {
    if (ctx.param<std::string>("pipeline") == "kvpress") return run_kvpress(ctx);
    const bool cot = ctx.param<bool>("cot"), no_context = ctx.param<bool>("no_context");
    const int64_t rag = ctx.param<int64_t>("rag");
    const std::string mode = rag > 0 ? "0shot_rag" : no_context ? "0shot_no_context" : cot ? "0shot_cot" : "0shot";
    const std::string tmpl = template_text(mode), cot_ans = cot ? template_text("0shot_cot_ans") : "";
    const std::string chat = ctx.param_or<std::string>("chat_template", kModelChatTemplate);
    DecodingSettings dec;
    dec.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", 128);
    dec.sampling.temperature = ctx.param<double>("temperature");
    DecodingSettings first = dec;
    first.max_new_tokens = ctx.param<int64_t>("cot_max_new_tokens");
    const int64_t max_length = ctx.param_or<int64_t>("max_length", ctx.max_context() - std::max(dec.max_new_tokens, cot ? first.max_new_tokens : 0));
    if (max_length < 2) throw std::invalid_argument("longbench_v2: max_new_tokens leaves no room for the prompt");

    const auto items = read_items(data_files(ctx).front(), ctx.limit);
    ExampleLoop loop(ctx, static_cast<int64_t>(items.size()));
    std::vector<metrics::LongBenchV2Judged> judged;
    int64_t dropped = 0;
    for (const auto& [where, item] : items) {
      std::string context = field(item, "context", where);
      if (rag > 0) context = retrieved(item, rag, where);
      auto fill = [&](const std::string& t) { return longbench_v2_prompt(t, item, context, where); };
      auto query = [&](const std::string& prompt, const DecodingSettings& d, std::string& fed) {
        const TruncatedText cut = truncate_middle_v2(*ctx.tokenizer, prompt, max_length);
        fed = apply_chat_template(chat, cut.text, *ctx.tokenizer);
        return complete(ctx, encode_prompt(ctx, fed, encode_adds_special_tokens(chat, fed, *ctx.tokenizer)), d);
      };
      std::string fed;
      Completion out = query(fill(tmpl), cot ? first : dec, fed);
      nlohmann::json fields = {{"difficulty", field(item, "difficulty", where)}, {"length", field(item, "length", where)},
                               {"domain", field(item, "domain", where)}};
      if (cot && !out.text.empty()) {
        const std::string response_cot = metrics::python_strip(out.text);
        fields["response_cot"] = response_cot;
        out = query(metrics::python_replace(fill(cot_ans), "$COT$", response_cot), dec, fed);
      }
      const std::string answer = field(item, "answer", where);
      if (out.text.empty()) {  // pred.py: `if output == '': continue` — the question is not scored
        ++dropped;
        fields["dropped"] = true;
        loop.record({field(item, "_id", where), out.prompt_tokens, out.text, {answer}, {{"correct", nullptr}}, fields, fed});
        continue;
      }
      const std::optional<char> pred = metrics::longbench_v2_extract_answer(metrics::python_strip(out.text));
      const bool judge = pred && std::string(1, *pred) == answer;
      judged.push_back({fields["difficulty"], fields["length"], judge, !pred});
      fields["pred"] = pred ? nlohmann::json(std::string(1, *pred)) : nlohmann::json(nullptr);
      loop.record({field(item, "_id", where), out.prompt_tokens, out.text, {answer}, {{"correct", judge ? 1.0 : 0.0}}, fields, fed});
    }
    const metrics::LongBenchV2Accuracy a = metrics::longbench_v2_accuracy(judged, ctx.param<bool>("compensated"));
    auto num = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    return loop.finish({{"overall", num(a.overall)}, {"easy", num(a.easy)}, {"hard", num(a.hard)}, {"short", num(a.short_)},
                        {"medium", num(a.medium)}, {"long", num(a.long_)}, {"scored", judged.size()}, {"dropped", dropped}},
                       {{"template", mode}, {"max_length", max_length}, {"max_new_tokens", dec.max_new_tokens}, {"chat_template", chat}});
  }

 private:
  // kvpress (evaluation/benchmarks/longbenchv2): the item as its create_huggingface_dataset.py
  // makes the 0shot row (data/longbench_v2/kvpress.json), kvpress's assembly and compress-once
  // protocol, greedy, scored by its calculate_metrics.py: means overall (average) and by difficulty
  // and length, as fractions.
  TaskOutput run_kvpress(const TaskContext& ctx) const {
    const nlohmann::json kv = datasets::read_json_file(datasets::bundled_data_dir() + "/longbench_v2/kvpress.json");
    const std::string chat = ctx.param_or<std::string>("chat_template", ctx.tokenizer->config().chat_template ? kModelChatTemplate : "none");
    const auto items = read_items(data_files(ctx).front(), ctx.limit);
    ExampleLoop loop(ctx, static_cast<int64_t>(items.size()));
    std::vector<KvpressParts> parts;
    const bool aware = ctx.param<bool>("query_aware");
    const std::string delimiter = aware ? ctx.query_delimiter() : "";
    for (const auto& [where, item] : items) {
      const std::string context = python_format(kv.at("context_template").get<std::string>(), [&](const std::string&) { return field(item, "context", where); });
      const std::string question = python_format(kv.at("question_template").get<std::string>(), [&](const std::string& name) {
        return field(item, name.size() == 1 ? ("choice_" + name).c_str() : name.c_str(), where);
      });
      parts.push_back(aware ? kvpress_query_aware_parts(context, question, kv.at("answer_prefix"), chat, *ctx.tokenizer, delimiter)
                            : kvpress_parts(context, question, kv.at("answer_prefix"), chat, *ctx.tokenizer));
    }
    DecodingSettings dec;
    dec.max_new_tokens = ctx.param_or<int64_t>("max_new_tokens", kv.at("max_new_tokens").get<int64_t>());
    dec.stop_token_ids.assign(ctx.tokenizer->stop_ids().begin(), ctx.tokenizer->stop_ids().end());
    const std::optional<int64_t> limit = ctx.given("max_context_length") ? std::optional<int64_t>(ctx.param_or<int64_t>("max_context_length", 0)) : std::nullopt;
    const std::vector<KvpressIds> ids = kvpress_ids_by_context(*ctx.tokenizer, parts, std::vector<int64_t>(parts.size(), dec.max_new_tokens),
                                                               ctx.max_context(), limit, "longbench_v2");
    CompressOnce compress_once(ctx);
    std::map<std::string, MeanMetric> by;  // calculate_metrics: the mean overall, per difficulty and per length
    for (size_t i : run_order(ids.size(), [&](size_t k) -> const std::vector<int64_t>& { return ids[k].context; }, true)) {
      const auto& [where, item] = items[i];
      const Completion out = compress_once.answer(ids[i].context, ids[i].question, dec, ids[i].query_tokens);
      const std::string answer = field(item, "answer", where);
      const double correct = metrics::longbench_v2_kvpress_correct(out.text, answer) ? 1.0 : 0.0;
      for (const std::string& key : {std::string("average"), field(item, "difficulty", where), field(item, "length", where)}) by[key].add(correct);
      loop.record({field(item, "_id", where), out.prompt_tokens, out.text, {answer}, {{"correct", correct}},
                   {{"difficulty", field(item, "difficulty", where)}, {"length", field(item, "length", where)}, {"truncated", ids[i].truncated}},
                   ctx.tokenizer->decode(std::vector<int>(ids[i].context.begin(), ids[i].context.end())) + parts[i].question});
    }
    nlohmann::json m = {{"examples", loop.recorded()}, {"prefills", compress_once.prefills()}};
    for (const char* key : {"average", "easy", "hard", "short", "medium", "long"}) m[key] = by.count(key) ? by.at(key).value() : nlohmann::json(nullptr);
    return loop.finish(m, {{"template", "kvpress 0shot"}, {"max_new_tokens", dec.max_new_tokens}, {"chat_template", chat}});
  }

  static std::string template_text(const std::string& name) {
    const std::string path = datasets::bundled_data_dir() + "/longbench_v2/prompts/" + name + ".txt";
    return datasets::read_regular_file(path, "LongBench-v2 prompt template");
  }

  // pred.py --rag: the first `rag` retrieved chunks, sorted by c_idx, numbered.
  static std::string retrieved(const nlohmann::json& item, int64_t rag, const std::string& where) {
    if (!item.contains("retrieved_context") || !item.at("retrieved_context").is_array())
      throw std::invalid_argument(where + ": field 'retrieved_context' is missing (rag needs LongBench-v2's retrieval file)");
    std::vector<nlohmann::json> chunks;
    for (const auto& c : item.at("retrieved_context")) {
      if (static_cast<int64_t>(chunks.size()) >= rag) break;
      if (!c.is_object() || !c.contains("c_idx") || !c.at("c_idx").is_number_integer() || !c.contains("content") || !c.at("content").is_string())
        throw std::invalid_argument(where + ": a retrieved chunk is not {c_idx, content}");
      chunks.push_back(c);
    }
    std::stable_sort(chunks.begin(), chunks.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
      return a.at("c_idx").get<int64_t>() < b.at("c_idx").get<int64_t>();
    });
    std::string out;
    for (std::size_t i = 0; i < chunks.size(); ++i)
      out += (i ? "\n\n" : "") + std::string("Retrieved chunk ") + std::to_string(i + 1) + ": " + chunks[i].at("content").get<std::string>();
    return out;
  }
};

const TaskRegistration longbench_v2({"longbench_v2", "LongBench-v2 multiple choice (pred.py's templates and extraction, result.py's accuracies)",
                                     {},
                                     [](const std::string&) { return std::make_unique<LongBenchV2Task>(); }});

}  // namespace
}  // namespace kvbench::tasks
