// Tasks mmlu (all 57 subjects), mmlu/stem and mmlu/<subject>: k-shot multiple choice scored by
// log-likelihood, in the hendrycks/test format (default) or the Cascading KV Cache code's format.
// See tasks/mmlu.hpp for the templates and docs/tasks.md for the parameters.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "datasets/data_root.hpp"
#include "models/job_clock.hpp"
#include "tasks/engines/loglik_engine.hpp"
#include "tasks/mmlu.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/shared_params.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

constexpr const char* kMmluSource = "hendrycks/test data.tar (data/{dev,val,test}/<subject>_<split>.csv) or cais/mmlu CSV exports";
const char* kLetters[4] = {"A", "B", "C", "D"};

std::string split_file(const TaskContext& ctx, const std::string& split, const std::string& subject) {
  return datasets::resolve_data_file(ctx.data_root, "mmlu/" + split + "/" + subject + "_" + split + ".csv", kMmluSource);
}

struct MmluOptions {
  std::string style;           // hendrycks | cascade
  std::string cascade_format;  // current | submission
  int64_t shots = 5;
  std::string shots_from;  // dev | dev+val
  // shots: drop shots from the end until the prompt fits max_length (hendrycks); left: BOS + the
  // last max_length - 1 tokens (Cascade: HF truncation_side='left'); none.
  std::string truncation;
  int64_t max_length = 0;
};

MmluOptions options_of(const TaskContext& ctx) {
  MmluOptions o;
  o.style = ctx.param<std::string>("style");
  const bool cascade = o.style == "cascade";
  o.shots = ctx.param_or<int64_t>("shots", cascade ? 20 : 5);
  o.shots_from = ctx.param_or<std::string>("shots_from", cascade || o.shots > 5 ? "dev+val" : "dev");
  o.cascade_format = ctx.param<std::string>("cascade_format");
  // Cascade cuts at max_position_embeddings from the left; its current code skips the cut for the
  // streaming ("sink") method, i.e. every policy but the full cache.
  const std::string cascade_cut = o.cascade_format == "submission" || ctx.policy_name == "full" ? "left" : "none";
  o.truncation = ctx.param_or<std::string>("truncation", cascade ? cascade_cut : "shots");
  o.max_length = ctx.param_or<int64_t>("max_length", ctx.model ? ctx.max_context() : 0);
  return o;
}

// The shot pool: dev rows, then validation rows if asked, in file order.
std::vector<datasets::MmluQuestion> shot_pool(const TaskContext& ctx, const MmluOptions& o, const std::string& subject) {
  std::vector<datasets::MmluQuestion> pool = datasets::read_mmlu_csv(split_file(ctx, "dev", subject));
  if (o.shots_from == "dev+val" && static_cast<int64_t>(pool.size()) < o.shots) {
    auto val = datasets::read_mmlu_csv(split_file(ctx, "val", subject));
    pool.insert(pool.end(), val.begin(), val.end());
  }
  if (static_cast<int64_t>(pool.size()) < o.shots)
    throw std::invalid_argument("mmlu/" + subject + ": " + std::to_string(o.shots) + " shots asked, only " +
                                std::to_string(pool.size()) + " in " + o.shots_from +
                                (o.shots_from == "dev" ? " (set task_params.shots_from to dev+val)" : ""));
  pool.resize(static_cast<size_t>(o.shots));
  return pool;
}

std::vector<int64_t> encode(const TaskContext& ctx, const std::string& text) {
  std::vector<int> ids = ctx.tokenizer->encode(text, true);
  return {ids.begin(), ids.end()};
}

// Next-token log-probabilities after the prompt, under the job's policy and protocol.
torch::Tensor next_token_logprobs(const TaskContext& ctx, const std::vector<int64_t>& prompt) {
  auto policy = ctx.make_policy();
  models::InferenceSession session(*ctx.model, policy.get(), ctx.session_options());
  auto t0 = models::JobClock::now();
  torch::Tensor logits = session.prefill(prompt).reshape({-1}).to(torch::kFloat64);
  ctx.meter->prefill_tokens += static_cast<int64_t>(prompt.size());
  ctx.meter->prefill_seconds += std::chrono::duration<double>(models::JobClock::now() - t0).count();
  ctx.meter->add_session(session);
  return torch::log_softmax(logits, 0);
}

struct Scored {
  std::vector<double> scores;  // per letter
  int prediction = 0;
};

// hendrycks: log p(" X" | prompt). When " X" adds exactly one token to the prompt's tokens (the
// usual case) one forward pass serves all four letters; otherwise the log-likelihood engine scores
// the continuation on the joint tokenisation.
Scored score_hendrycks(const TaskContext& ctx, const std::string& prompt, const std::vector<int64_t>& ids) {
  Scored s;
  torch::Tensor logp;
  for (int j = 0; j < 4; ++j) {
    const std::string cont = std::string(" ") + kLetters[j];
    std::vector<int64_t> whole = encode(ctx, prompt + cont);
    const bool single = whole.size() == ids.size() + 1 && std::equal(ids.begin(), ids.end(), whole.begin());
    if (single) {
      if (!logp.defined()) logp = next_token_logprobs(ctx, ids);
      s.scores.push_back(logp[whole.back()].item<double>());
    } else {
      s.scores.push_back(score_continuation(ctx, prompt, cont).loglik);
    }
  }
  s.prediction = static_cast<int>(std::max_element(s.scores.begin(), s.scores.end()) - s.scores.begin());
  return s;
}

// cascade: max probability over each letter's token variants at the last position.
Scored score_cascade(const TaskContext& ctx, const std::vector<int64_t>& ids) {
  torch::Tensor p = next_token_logprobs(ctx, ids).exp();
  Scored s;
  for (int j = 0; j < 4; ++j) {
    const std::string up = kLetters[j], low(1, static_cast<char>('a' + j));
    double best = 0;
    for (const std::string& cand : {up, ":" + up, ": " + up, ":  " + up, low, ":" + low, ": " + low, ":  " + low}) {
      const int64_t id = ctx.tokenizer->encode(cand, true).back();
      best = std::max(best, p[id].item<double>());
    }
    s.scores.push_back(best);
  }
  // Python's sorted(..., reverse=True) is stable: the first of equal letters wins.
  s.prediction = static_cast<int>(std::max_element(s.scores.begin(), s.scores.end()) - s.scores.begin());
  return s;
}

// One subject's questions, recorded by `loop`; returns how many were answered correctly.
int64_t run_subject(const TaskContext& ctx, const MmluOptions& o, const std::string& subject,
                    const std::vector<datasets::MmluQuestion>& test, ExampleLoop& loop) {
  const auto pool = shot_pool(ctx, o, subject);
  int64_t correct = 0;
  for (size_t i = 0; i < static_cast<size_t>(loop.size()); ++i) {
    const auto& q = test[i];
    size_t k = pool.size();
    auto build = [&](size_t shots) {
      if (o.style == "hendrycks") return mmlu::hendrycks_prompt(subject, pool, shots, q);
      return o.cascade_format == "current" ? mmlu::cascade_current_prompt(subject, pool, shots, q)
                                           : mmlu::cascade_prompt(subject, pool, shots, q);
    };
    std::string prompt = build(k);
    std::vector<int64_t> ids = encode(ctx, prompt);
    bool cut = false;
    if (o.truncation == "left" && static_cast<int64_t>(ids.size()) > o.max_length) {
      // tokenizer(..., truncation=True, max_length=L) with truncation_side='left': BOS + the last
      // L - 1 tokens; the answer is read at the last position, so L tokens are fed.
      std::vector<int64_t> kept = {ids.front()};
      kept.insert(kept.end(), ids.end() - (o.max_length - 1), ids.end());
      ids = std::move(kept);
      cut = true;
    }
    if (o.truncation == "shots") {
      // hendrycks evaluate.py: drop shots from the end until the prompt (and the answer token) fits.
      while (k > 0 && static_cast<int64_t>(ids.size()) + 1 > o.max_length) {
        prompt = build(--k);
        ids = encode(ctx, prompt);
      }
      if (static_cast<int64_t>(ids.size()) + 1 > o.max_length) {  // even 0-shot is too long: keep the end
        prompt = truncate_left(*ctx.tokenizer, prompt, o.max_length - 1).text;
        ids = encode(ctx, prompt);
        cut = true;
      }
    }
    Scored s = o.style == "cascade" ? score_cascade(ctx, ids) : score_hendrycks(ctx, prompt, ids);
    const bool ok = s.prediction == q.answer;
    correct += ok;
    loop.record({subject + "-" + std::to_string(i), static_cast<int64_t>(ids.size()), kLetters[s.prediction], {kLetters[q.answer]},
                 {{"acc", ok ? 1.0 : 0.0}},
                 {{"subject", subject}, {"shots", static_cast<int64_t>(k)}, {"truncated", cut}, {"scores", s.scores}}, prompt});
  }
  return correct;
}

class MmluTask : public Task {
 public:
  MmluTask(std::string name, std::vector<std::string> subjects) : name_(std::move(name)), subjects_(std::move(subjects)) {}
  params::Params parameters() const override {
    using params::Param;
    return {Param::choice("style", "hendrycks", {"hendrycks", "cascade"},
                          "the reference: hendrycks/test evaluate.py or the Cascading KV Cache code"),
            Param::integer("shots", nullptr, "in-context examples (default: hendrycks 5, cascade 20)", 0),
            Param::choice("shots_from", nullptr, {"dev", "dev+val"},
                          "where the shots come from (default: dev; dev+val for cascade or more than 5 shots)"),
            Param::choice("cascade_format", "current", {"current", "submission"}, "cascade style: the code's current or submission format"),
            Param::choice("truncation", nullptr, {"shots", "left", "none"},
                          "hendrycks: shots; cascade: left (submission, or the full policy), else none"),
            Param::integer("max_length", nullptr, "prompt tokens allowed (default: the model context)", 2),
            record_prompts_param(),
            Param::choice("stem_list", nullptr, {"hendrycks", "cascade"},
                          "mmlu/stem only: hendrycks (18 subjects) or cascade (adds anatomy; the default with style cascade)")};
  }


  nlohmann::json settings() const override {
    return {{"benchmark", "MMLU (Hendrycks et al. 2021)"},
            {"task", name_},
            {"subjects", subjects_},
            {"protocol", "multiple choice by log-likelihood"},
            {"prompt_template",
             {{"hendrycks", "hendrycks/test evaluate.py: 'The following are multiple choice questions (with answers) about"
                            "{format_subject}.\\n\\n' + shots '{q}\\nA. ..\\nD. ..\\nAnswer: X\\n\\n' + '{q}\\nA. ..\\nAnswer:'"},
              {"cascade", "Cascading KV Cache code: numbered '> The following are ...' shots with 'Answer:X', joined by "
                          "'\\n\\n', then '> I want you to answer the following multiple choice question about {subject}.'"}}},
            {"shots", "hendrycks: the first k dev rows (k = 5); cascade: dev then validation rows, first 20 (the paper's 20-shot)"},
            {"truncation", "shots (hendrycks): drop shots from the end until prompt + 1 token fits max_length (evaluate.py's "
                           "crop loop); if 0 shots still do not fit, keep the prompt's end. left (cascade): BOS + the last "
                           "max_length - 1 tokens (truncation_side='left' at max_position_embeddings; the current cascade "
                           "code does not cut for its streaming method: none for every policy but full). none"},
            {"answer", "hendrycks: argmax log p(' A'..' D'); cascade: argmax over letters of max p over the tokens of "
                       "A, :A, : A, :  A and lower case"},
            {"decoding", "none (scoring only)"},
            {"metric", "acc per subject; acc over all questions (hendrycks categories are question-weighted) and "
                       "acc_subject_mean (macro average over subjects)"},
            {"categories", "hendrycks/test categories.py; STEM = physics, chemistry, biology, computer science, math, engineering"},
            {"limit", "questions per subject"}};
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    MmluOptions o = options_of(ctx);
    std::vector<std::string> files;
    for (const auto& s : subjects_for(ctx)) {
      files.push_back(split_file(ctx, "test", s));
      files.push_back(split_file(ctx, "dev", s));
      if (o.shots_from == "dev+val" && o.shots > 5) files.push_back(split_file(ctx, "val", s));
    }
    return files;
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const MmluOptions o = options_of(ctx);
    const auto subjects = subjects_for(ctx);
    std::vector<std::vector<datasets::MmluQuestion>> tests;
    int64_t questions = 0;  // over all subjects, the limit applied per subject (for the progress)
    for (const auto& subject : subjects) {
      tests.push_back(datasets::read_mmlu_csv(split_file(ctx, "test", subject)));
      questions += ExampleLoop(ctx, static_cast<int64_t>(tests.back().size())).size();
    }
    TaskOutput out;
    nlohmann::json& metrics = out.metrics;
    int64_t correct = 0, total = 0;
    MeanMetric subject_mean;  // over the subjects that have a scored question
    std::map<std::string, std::pair<int64_t, int64_t>> per_category;
    for (size_t i = 0; i < subjects.size(); ++i) {
      ExampleLoop loop(ctx, static_cast<int64_t>(tests[i].size()), {total, questions});
      const int64_t subject_correct = run_subject(ctx, o, subjects[i], tests[i], loop);
      correct += subject_correct;
      total += loop.recorded();
      // A subject without questions (an empty test CSV) has no accuracy: null, not 0.0.
      const nlohmann::json acc = loop.mean("acc");
      if (loop.recorded()) subject_mean.add(acc.get<double>());
      if (subjects.size() > 1) metrics["acc/" + subjects[i]] = acc;
      auto& c = per_category[mmlu::category_of(subjects[i])];
      c.first += subject_correct;
      c.second += loop.recorded();
      for (auto& e : loop.finish({}).examples) out.examples.push_back(std::move(e));
    }
    // One empty subject among several is a null in the table; a task with no question at all is
    // a data problem, named by its file.
    if (total == 0 && subjects.size() == 1)
      throw std::runtime_error(split_file(ctx, "test", subjects[0]) + ": no question (the file is empty or holds only a header)");
    if (total == 0)
      throw std::runtime_error("mmlu: none of the " + std::to_string(subjects.size()) + " subjects' test files holds a question");
    metrics["acc"] = mean_or_null(static_cast<double>(correct), total);
    metrics["acc_subject_mean"] = subject_mean.value();
    metrics["examples"] = total;
    if (subjects.size() > 1)
      for (const auto& [cat, c] : per_category)
        metrics["acc_category/" + cat] = mean_or_null(static_cast<double>(c.first), c.second);
    return out;
  }

 private:
  std::vector<std::string> subjects_for(const TaskContext& ctx) const {
    if (name_ != "mmlu/stem") return subjects_;
    const std::string list =
        ctx.param_or<std::string>("stem_list", ctx.param<std::string>("style") == "cascade" ? "cascade" : "hendrycks");
    return list == "cascade" ? mmlu::stem_subjects_cascade() : mmlu::stem_subjects();
  }

  std::string name_;
  std::vector<std::string> subjects_;
};

std::unique_ptr<Task> make_member(const std::string& member) {
  if (member == "stem") return std::make_unique<MmluTask>("mmlu/stem", mmlu::stem_subjects());
  if (!mmlu::is_subject(member)) throw std::invalid_argument("unknown MMLU subject '" + member + "' (see kvbench tasks)");
  return std::make_unique<MmluTask>("mmlu/" + member, std::vector<std::string>{member});
}

std::vector<std::string> members() {
  std::vector<std::string> m = mmlu::subjects();
  m.insert(m.begin(), "stem");
  return m;
}

const TaskRegistration mmlu_all({"mmlu", "MMLU, all 57 subjects: k-shot multiple choice by log-likelihood", {},
                                 [](const std::string&) { return std::make_unique<MmluTask>("mmlu", mmlu::subjects()); }});
const TaskRegistration mmlu_family({"mmlu/", "MMLU by subject, and mmlu/stem (hendrycks categories; Cascade Table 2)",
                                    members(), make_member});

}  // namespace
}  // namespace kvbench::tasks
