// Tasks lm_eval/<task>: the six few-shot multiple-choice tasks of H2O / BumbleBee Table 1, scored by
// log-likelihood in lm-evaluation-harness v0.3's formats (tasks/lm_eval.hpp), acc and acc_norm.
#include <algorithm>
#include <filesystem>
#include <random>

#include "datasets/data_root.hpp"
#include "tasks/engines/loglik_engine.hpp"
#include "tasks/lm_eval.hpp"
#include "tasks/prompt_truncation.hpp"
#include "tasks/scored_mean.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

using lm_eval::McDoc;

std::string hf_source(const std::string& task) {
  if (task == "openbookqa") return "Hugging Face openbookqa (main) exported as JSONL";
  if (task == "copa") return "Hugging Face super_glue (copa) exported as JSONL";
  if (task == "rte") return "Hugging Face glue (rte) exported as JSONL";
  if (task == "mathqa") return "Hugging Face math_qa exported as JSONL";
  if (task == "piqa") return "Hugging Face piqa exported as JSONL";
  return "Hugging Face winogrande (winogrande_xl) exported as JSONL";
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<McDoc> read_docs(const std::string& task, const std::string& path, int64_t limit) {
  std::vector<McDoc> docs;
  datasets::for_each_jsonl(path, [&](const datasets::JsonRecord& r) {
    docs.push_back(lm_eval::convert(task, r));
    return limit <= 0 || static_cast<int64_t>(docs.size()) < limit;
  });
  return docs;
}

// k distinct indices of [0, n) from the running generator (partial Fisher-Yates).
std::vector<size_t> sample(std::mt19937_64& rng, size_t n, size_t k) {
  std::vector<size_t> idx(n);
  for (size_t i = 0; i < n; ++i) idx[i] = i;
  k = std::min(k, n);
  for (size_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + rng() % (n - i)]);
  idx.resize(k);
  return idx;
}

class LmEvalTask : public Task {
 public:
  explicit LmEvalTask(std::string task) : task_(std::move(task)) {}
  params::Params parameters() const override {
    using params::Param;
    return {Param::integer("shots", 5, "in-context examples (BumbleBee: five-shot)", 0),
            Param::text("data_file", "lm_eval/" + task_ + "/" + lm_eval::eval_split(task_) + ".jsonl",
                        "the evaluated split (absolute or relative to the data root)"),
            Param::text("shots_file", nullptr, "the split shots come from (default: lm_eval/<task>/train.jsonl if staged, "
                                               "else the evaluated split without the document itself)"),
            Param::integer("max_length", nullptr, "context + continuation tokens allowed (default: the model context)", 2),
            Param::flag("record_prompts", false, "add each choice's context and continuation")};
  }


  nlohmann::json settings() const override {
    return {{"benchmark", "lm-evaluation-harness v0.3 task formats (H2O / BumbleBee Table 1)"},
            {"task", task_},
            {"protocol", "multiple choice by log-likelihood"},
            {"prompt_template", "see tasks/lm_eval.hpp; shots '\\n\\n'.join(text + target) + '\\n\\n' before the query"},
            {"data", "lm_eval/" + task_ + "/" + lm_eval::eval_split(task_) + ".jsonl; shots from lm_eval/" + task_ +
                         "/train.jsonl, else from the evaluated split without the document itself (harness rule)"},
            {"shots", "5 (BumbleBee: five-shot), drawn with a seeded generator (not Python's random stream, so the "
                      "shots differ from the harness's, the format does not)"},
            {"truncation", "left: when context + continuation exceed max_length (model context) the context's start is cut, "
                           "as the harness's HF model keeps the last max_length tokens"},
            {"decoding", "none (scoring only)"},
            {"metric", task_ == "copa" || task_ == "rte" || task_ == "winogrande"
                           ? "acc"
                           : "acc, acc_norm (log-likelihood / characters of the choice)"}};
  }

  std::vector<std::string> data_files(const TaskContext& ctx) const override {
    std::vector<std::string> files = {eval_file(ctx)};
    if (const std::string s = shots_file(ctx); !s.empty()) files.push_back(s);
    return files;
  }

  TaskOutput run(const TaskContext& ctx) const override {
    const int64_t shots = ctx.param<int64_t>("shots");
    const int64_t max_length = ctx.param_or<int64_t>("max_length", ctx.max_context());
    const std::vector<McDoc> docs = read_docs(task_, eval_file(ctx), ctx.limit);
    const std::string pool_file = shots_file(ctx);
    const std::vector<McDoc> pool_storage = pool_file.empty() || shots == 0 ? std::vector<McDoc>{} : read_docs(task_, pool_file, 0);
    const bool from_eval = pool_file.empty();
    const std::vector<McDoc> eval_pool = from_eval && shots > 0 ? read_docs(task_, eval_file(ctx), 0) : std::vector<McDoc>{};
    const std::vector<McDoc>& pool = from_eval ? eval_pool : pool_storage;
    if (shots > 0 && static_cast<int64_t>(pool.size()) - (from_eval ? 1 : 0) < shots)
      throw std::invalid_argument("lm_eval/" + task_ + ": " + std::to_string(shots) + " shots asked, the shot pool has " +
                                  std::to_string(pool.size()) + " documents");

    std::mt19937_64 rng(ctx.seed);
    const bool has_norm = !docs.empty() && docs[0].has_acc_norm;
    ExampleLoop loop(ctx, static_cast<int64_t>(docs.size()));
    for (size_t i = 0; i < static_cast<size_t>(loop.size()); ++i) {
      const McDoc& doc = docs[i];
      std::vector<const McDoc*> shot_docs;
      if (shots > 0) {
        // Harness: rnd.sample(train, k); without a train split, rnd.sample(docs, k + 1) minus the doc.
        for (size_t j : sample(rng, pool.size(), static_cast<size_t>(shots) + (from_eval ? 1 : 0))) {
          if (from_eval && j == i) continue;
          if (shot_docs.size() < static_cast<size_t>(shots)) shot_docs.push_back(&pool[j]);
        }
      }
      const std::string prefix = lm_eval::fewshot_prefix(shot_docs);
      std::vector<std::string> contexts;
      std::vector<double> ll;
      int64_t prompt_tokens = 0;
      bool truncated = false;
      for (size_t c = 0; c < doc.contexts.size(); ++c) {
        std::string context = prefix + doc.contexts[c];
        const int64_t cont_tokens = static_cast<int64_t>(ctx.tokenizer->encode(doc.continuations[c], false).size());
        if (static_cast<int64_t>(ctx.tokenizer->encode(context + doc.continuations[c], true).size()) > max_length + 1) {
          context = truncate_left(*ctx.tokenizer, context, std::max<int64_t>(2, max_length + 1 - cont_tokens)).text;
          truncated = true;
        }
        prompt_tokens = std::max<int64_t>(prompt_tokens, static_cast<int64_t>(ctx.tokenizer->encode(context, true).size()));
        ll.push_back(score_continuation(ctx, context, doc.continuations[c]).loglik);
        contexts.push_back(context);
      }
      size_t best = 0, best_norm = 0;
      for (size_t c = 1; c < ll.size(); ++c) {
        if (ll[c] > ll[best]) best = c;
        if (ll[c] / static_cast<double>(code_points(doc.choice_texts[c])) >
            ll[best_norm] / static_cast<double>(code_points(doc.choice_texts[best_norm])))
          best_norm = c;
      }
      nlohmann::json m = {{"acc", best == doc.gold ? 1.0 : 0.0}};
      if (has_norm) m["acc_norm"] = best_norm == doc.gold ? 1.0 : 0.0;
      Example e{doc.id, prompt_tokens, doc.choice_texts[best], {doc.choice_texts[doc.gold]}, m,
                {{"shots", static_cast<int64_t>(shot_docs.size())}, {"truncated", truncated}, {"gold", doc.gold}, {"logliks", ll}}};
      e.recorded_with_prompt = {{"contexts", contexts}, {"continuations", doc.continuations}};  // one prompt per choice
      loop.record(std::move(e));
    }
    nlohmann::json metrics = loop.means();
    metrics["examples"] = loop.size();
    return loop.finish(metrics);
  }

 private:
  std::string eval_file(const TaskContext& ctx) const {
    return datasets::resolve_data_file(ctx.data_root, ctx.param<std::string>("data_file"), hf_source(task_));
  }

  // The training split if present (or task_params.shots_file); "" = draw shots from the eval split.
  std::string shots_file(const TaskContext& ctx) const {
    if (ctx.given("shots_file"))
      return datasets::resolve_data_file(ctx.data_root, ctx.param_or<std::string>("shots_file", ""), hf_source(task_));
    const auto train = std::filesystem::path(ctx.data_root.empty() ? datasets::default_data_root() : ctx.data_root) /
                       "lm_eval" / task_ / "train.jsonl";
    return std::filesystem::exists(train) ? train.string() : "";
  }

  std::string task_;
};

const TaskRegistration lm_eval_family(
    {"lm_eval/", "lm-evaluation-harness few-shot multiple choice (H2O / BumbleBee Table 1): log-likelihood, acc/acc_norm",
     lm_eval::task_names(), [](const std::string& member) -> std::unique_ptr<Task> {
       const auto& names = lm_eval::task_names();
       if (std::find(names.begin(), names.end(), member) == names.end())
         throw std::invalid_argument("unknown lm_eval task '" + member +
                                     "' (known: openbookqa, copa, rte, mathqa, piqa, winogrande)");
       return std::make_unique<LmEvalTask>(member);
     }});

}  // namespace
}  // namespace kvbench::tasks
