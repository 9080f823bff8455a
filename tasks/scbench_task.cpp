// SCBench (Li et al., "SCBench: A KV Cache-Centric Analysis of Long-Context Methods"; microsoft/
// MInference @ fb56c917 scbench/): one shared context, several turns on one cache. Each task is
// data below — its eval_utils.py templates, max new tokens and compute_scores.py scorer. Modes:
// multi_turn (run_scbench.py's default: the context with the first question prefilled once, each
// later question fed after the cache, the earlier turns' gold answers as history, or the model's
// own with history: model) and multi_request (--same_context_different_query: the context alone
// prefilled once, every question answered after it and dropped again). The first prompt is cut in
// the middle to max_seq_length − max_new_tokens × turns tokens, as run_scbench.py cuts it.
#include <algorithm>
#include <map>

#include "datasets/data_root.hpp"
#include "datasets/jsonl_reader.hpp"
#include "metrics/scbench.hpp"
#include "models/model_chat_template.hpp"
#include "tasks/chat_template.hpp"
#include "tasks/engines/multi_turn.hpp"
#include "tasks/scbench_prompts.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

using nlohmann::json;

constexpr const char* kScbenchSource = "microsoft/MInference @ fb56c917 scbench/ (eval_utils.py, run_scbench.py, compute_scores.py)";
constexpr const char* kScbenchData = "Hugging Face dataset microsoft/SCBench, file data/<task>.jsonl";

using scbench::ScbenchSet;

std::vector<std::string> set_names() {
  std::vector<std::string> names;
  for (const auto& s : scbench::sets()) names.push_back(s.name);
  return names;
}

class ScbenchTask : public Task {
 public:
  explicit ScbenchTask(ScbenchSet set) : set_(std::move(set)) {}

  nlohmann::json settings() const override {
    json limits = json::object(), scorers = json::object();
    for (const auto& [tag, v] : set_.per_tag) {
      limits[tag.empty() ? "all" : tag] = v.first;
      scorers[tag.empty() ? "all" : tag] = v.second;
    }
    return {{"protocol", "one cache per example across its turns (multi_turn) or its questions (multi_request)"},
            {"source", kScbenchSource},
            {"data", std::string(kScbenchData)},
            {"first_prompt", set_.first},
            {"follow_up", set_.follow_up},
            {"max_new_tokens", limits},
            {"scorer", scorers},
            {"metric", "per turn the mean score over examples (×100, compute_scores.py's output line), and their mean"}};
  }

  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("mode", "multi_turn", {"multi_turn", "multi_request"}, "turns on one cache, or questions answered after one shared context (scdq)"),
            Param::choice("history", "gold", {"gold", "model"}, "multi_turn: the earlier turns' gold answers in the prompts, or the model's own (--disable_golden_context)"),
            Param::choice("chat_template", kModelChatTemplate, {"none", kModelChatTemplate}, "the model's chat template (the official scripts pass --use_chat_template) or none"),
            Param::integer("max_turns", 5, "turns per example kept (run_scbench.py --max_turns)", 1),
            Param::integer("max_seq_length", nullptr, "the length the first prompt is cut for (default: 131072, capped at the model's context)", 1),
            Param::integer("max_new_tokens", nullptr, "tokens per answer (default: SCBench's per task and turn type)", 1),
            Param::text("data_file", nullptr, "the task's JSONL (default: scbench/<task>.jsonl under the data root)"),
            record_prompts_param()};
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    return {datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("data_file", "scbench/" + set_.name + ".jsonl"),
                                        std::string(kScbenchData).replace(std::string(kScbenchData).find("<task>"), 6, set_.name))};
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const bool multi_request = ctx.param<std::string>("mode") == "multi_request";
    const bool gold = ctx.param<std::string>("history") == "gold";
    const bool chat = ctx.param<std::string>("chat_template") == kModelChatTemplate;
    std::shared_ptr<const models::ModelChatTemplate> templ;
    if (chat) templ = models::ModelChatTemplate::for_tokenizer(ctx.tokenizer->path());
    std::vector<scbench::Record> records;
    for (const auto& r : datasets::read_jsonl(data_files(ctx).front(), ctx.limit)) records.push_back(scbench::read_record(r, set_, ctx.param<int64_t>("max_turns")));
    if (records.empty()) throw std::runtime_error(data_files(ctx).front() + ": no examples");
    const int64_t turns = static_cast<int64_t>(records.front().turns.size());  // run_scbench.py: examples[0]'s
    const int64_t max_seq = ctx.param_or<int64_t>("max_seq_length", std::min<int64_t>(131072, ctx.max_context()));
    // run_scbench.py's max_input_length.
    int64_t input_budget = max_seq - (set_.per_tag.size() > 1 ? sum_limits(ctx) * turns / 2 : limit_of(ctx, "") * turns);
    if (multi_request) input_budget -= 1000;
    // One record per (example, turn); the job's limit counted examples already.
    TaskContext per_turn_ctx = ctx;
    per_turn_ctx.limit = 0;
    int64_t answers = 0;
    for (const scbench::Record& r : records) answers += static_cast<int64_t>(r.turns.size());
    ExampleLoop loop(per_turn_ctx, answers);
    std::vector<Answer> answered;  // per loop record, for the scores that need the whole run (RepoQA)
    std::map<std::string, std::vector<metrics::RepoqaNeedle>> needles;  // repo -> every RepoQA turn's function
    for (const scbench::Record& r : records) {
      std::vector<std::string> prompts = multi_request ? scbench::request_prompts(set_, r, chat ? templ.get() : nullptr)
                                                    : scbench::turn_prompts(set_, r, gold, chat ? templ.get() : nullptr);
      std::vector<int64_t> first = encode_prompt(ctx, prompts[0], true);  // truncate_by_tokens: tok.encode adds BOS
      const int64_t original = static_cast<int64_t>(first.size());
      // truncate_input: a negative budget cuts nothing, nor does one under 2 (input[0:0] + input[-0:]).
      if (input_budget >= 2 && original > input_budget) {
        const int64_t half = input_budget / 2;
        first.erase(first.begin() + half, first.end() - half);
      }
      Conversation conversation(ctx);
      CompressOnce compress_once(ctx);
      for (size_t t = 0; t < r.turns.size(); ++t) {
        const scbench::Turn& turn = r.turns[t];
        DecodingSettings dec;
        dec.max_new_tokens = limit_of(ctx, turn.tag);
        const std::string& text = prompts[multi_request ? t + 1 : t];
        const std::vector<int64_t> ids = t == 0 && !multi_request ? first : encode_prompt(ctx, text, false);
        const Completion out = multi_request ? compress_once.answer(first, ids, dec) : conversation.turn(ids, dec, !gold);
        const json label = scbench::label_of(set_, turn);
        const bool repoqa = set_.per_tag.at(turn.tag).second == "repoqa";
        if (repoqa) needles[r.repo].push_back({turn.function, scbench::python_str(turn.answer)});
        answered.push_back({turn.tag, r.repo, turn.function, out.text, t});
        const json score = repoqa ? json(nullptr) : json{{"score", metrics::scbench_score_one(set_.per_tag.at(turn.tag).second, out.text, label)}};
        json fields = {{"turn", t}, {"ground_truth", label}, {"cache_peak", out.cache_peak}};
        if (!turn.tag.empty()) fields["task"] = turn.tag;
        if (t == 0) fields["truncated"] = static_cast<int64_t>(first.size()) < original, fields["original_prompt_tokens"] = original;
        if (!multi_request && t > 0) fields["prefilled_tokens"] = conversation.prefilled_tokens();
        loop.record({std::to_string(r.source.line) + ":" + std::to_string(t), out.prompt_tokens, out.text, {scbench::python_str(turn.answer)},
                     score, fields, multi_request && t == 0 ? prompts[0] + text : text});
      }
    }
    const json metrics = turn_means(loop, answered, needles, static_cast<int64_t>(records.size()), turns);
    return loop.finish(metrics, {{"max_seq_length", max_seq}, {"max_input_length", input_budget}, {"chat_template", chat ? std::string(kModelChatTemplate) : std::string("none")}});
  }

 private:
  // One answer's place in the run, for the scores that need the whole run (RepoQA).
  struct Answer {
    std::string tag, repo, function, text;
    size_t turn;
  };

  // compute_scores.py: RepoQA answers scored against every RepoQA function of their repository in
  // the run; each tag's per-turn means (acc * 100) and its mean over all its records.
  json turn_means(ExampleLoop& loop, const std::vector<Answer>& answered,
                  const std::map<std::string, std::vector<metrics::RepoqaNeedle>>& needles, int64_t examples, int64_t turns) const {
    std::map<std::string, std::vector<std::pair<double, int64_t>>> per_turn;  // tag -> turn -> (sum, count)
    for (size_t i = 0; i < answered.size(); ++i) {
      const Answer& a = answered[i];
      double score;
      if (set_.per_tag.at(a.tag).second == "repoqa") {
        const metrics::RepoqaVerdict v = metrics::repoqa_evaluate(a.text, a.function, needles.at(a.repo));
        score = v.pass ? 1 : 0;
        loop.score(i, {{"score", score}, {"best_function", v.best_name}, {"best_similarity", v.best_similarity}});
      } else {
        score = loop.examples()[i]["metrics"]["score"].get<double>();
      }
      auto& means = per_turn[a.tag];
      if (means.size() <= a.turn) means.resize(a.turn + 1);
      means[a.turn].first += score, ++means[a.turn].second;
    }
    json metrics = {{"examples", examples}, {"turns", turns}};
    for (const auto& [tag, means] : per_turn) {
      json& m = tag.empty() ? metrics : (metrics[tag] = json::object());
      double sum = 0;
      int64_t count = 0;
      for (size_t t = 0; t < static_cast<size_t>(turns); ++t) {
        // compute_scores.py prints acc * 100 per turn; a sub-task without a record in a turn scores 0 there.
        const auto [turn_sum, turn_count] = t < means.size() ? means[t] : std::pair<double, int64_t>{0, 0};
        m["turn_" + std::to_string(t + 1)] = turn_count ? turn_sum / static_cast<double>(turn_count) * 100 : 0.0;
        sum += turn_sum, count += turn_count;
      }
      m["score"] = sum / static_cast<double>(count) * 100;  // over all its (example, turn) records
    }
    return metrics;
  }

  int64_t limit_of(const TaskContext& ctx, const std::string& tag) const { return ctx.param_or<int64_t>("max_new_tokens", set_.per_tag.at(tag).first); }
  int64_t sum_limits(const TaskContext& ctx) const {
    int64_t sum = 0;
    for (const auto& [tag, v] : set_.per_tag) sum += limit_of(ctx, tag);
    return sum;
  }

  ScbenchSet set_;
};

const TaskRegistration scbench_family({"scbench/", "SCBench's shared-context tasks, multi-turn and multi-request (its prompts, truncation and scorers)",
                                       set_names(), [](const std::string& name) -> std::unique_ptr<Task> {
                                         for (const ScbenchSet& s : scbench::sets())
                                           if (s.name == name) return std::make_unique<ScbenchTask>(s);
                                         throw std::invalid_argument("unknown SCBench task '" + name + "'");
                                       }});

}  // namespace
}  // namespace kvbench::tasks
