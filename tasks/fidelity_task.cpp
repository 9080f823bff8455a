// fidelity/<base task>: RoCo §5's protocol — the Full cache's output is the reference. The base
// generation task runs twice on the same prompts: first with the Full cache (same protocol and
// block), then with the job's policy and budget, with a probe on every policy sequence.
// Per example and overall:
//  - bleu / rouge1 / rouge2 / rougeL / meteor of the policy's output against Full's
//    (tasks/fidelity_scores.hpp; RoCo Table 2, and Table 3 with base "reconstruction");
//  - jaccard: kept tokens vs the full attention's top-B at every step (RoCo Fig. 2; the
//    importance score is the policy's: run RoCo's AAS/AQAS/LTAS/MAS variants as policies);
//  - attention_error: ‖Ô − O‖/‖O‖ per layer and step (BUZZ eq. 4);
//  - coverage: prompt positions kept by some head of some layer in the final cache (K-VEC
//    Tables 6–7; with the oneshot protocol this is the cache right after prefill compression).
// The base task's own metrics are reported for both runs ("base" and "full_base").
#include <cmath>

#include "tasks/fidelity_observer.hpp"
#include "tasks/fidelity_reconstruction.hpp"
#include "tasks/fidelity_scores.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::tasks {
namespace {

class FidelityTask : public Task {
 public:
  FidelityTask(std::string base_name, std::unique_ptr<Task> base) : base_name_(std::move(base_name)), base_(std::move(base)) {
    if (base_->settings().value("protocol", "") == "perplexity")
      throw std::invalid_argument("fidelity/" + base_name_ + ": the base task must generate text (not perplexity)");
  }

  nlohmann::json settings() const override {
    return {{"protocol", "fidelity: Full cache first, then the policy, on the base task's prompts"},
            {"base_task", base_name_},
            {"base_settings", base_->settings()},
            {"reference", "the Full cache's output (RoCo section 5)"},
            {"metric", "bleu, rouge1/2/L, meteor vs Full's output; jaccard (RoCo Fig. 2); attention_error "
                       "(BUZZ eq. 4); coverage (K-VEC Tables 6-7)"}};
  }

  // The base task's parameters: fidelity adds none of its own.
  params::Params parameters() const override { return base_->parameters(); }
  void check_params(const nlohmann::json& params) const override { base_->check_params(params); }

  std::vector<std::string> data_files(const TaskContext& ctx) const override { return base_->data_files(ctx); }

  TaskOutput run(const TaskContext& ctx) const override {
    TaskContext full = ctx.with_full_cache();
    full.observer = nullptr;
    full.meter = std::make_shared<RunMeter>();  // the job's timings are the policy run's
    full.progress = {};
    const TaskOutput reference = base_->run(full);

    TaskContext evicted = ctx;
    auto observer = std::make_shared<FidelityObserver>(*ctx.model);
    evicted.observer = observer;
    const TaskOutput policy = base_->run(evicted);

    const nlohmann::json& ref_examples = reference.examples;
    const nlohmann::json& pol_examples = policy.examples;
    if (ref_examples.size() != pol_examples.size())
      throw std::runtime_error("fidelity/" + base_name_ + ": the Full and policy runs have different examples (" +
                               std::to_string(ref_examples.size()) + " vs " + std::to_string(pol_examples.size()) + ")");
    const auto& seqs = observer->sequences();
    // One generation per example lets the probes be reported per example.
    const bool per_example = seqs.size() == pol_examples.size();

    nlohmann::json examples = nlohmann::json::array();
    std::vector<std::string> predictions, references;
    for (size_t i = 0; i < pol_examples.size(); ++i) {
      const nlohmann::json& p = pol_examples[i];
      const nlohmann::json& f = ref_examples[i];
      if (p.at("id") != f.at("id"))
        throw std::runtime_error("fidelity/" + base_name_ + ": example " + std::to_string(i) + " differs between runs");
      const std::string pred = p.at("prediction"), full_pred = f.at("prediction");
      nlohmann::json m = pair_scores(pred, full_pred);
      if (per_example) {
        m["jaccard"] = seqs[i].jaccard;
        m["attention_error"] = seqs[i].attention_error;
        m["coverage"] = seqs[i].coverage;
      }
      nlohmann::json e = {{"id", p.at("id")},
                          {"prompt_tokens", p.at("prompt_tokens")},
                          {"prediction", pred},
                          {"references", {full_pred}},
                          {"base_references", p.at("references")},
                          {"base_metrics", p.at("metrics")},
                          {"metrics", m}};
      if (p.contains("prompt")) e["prompt"] = p.at("prompt");
      examples.push_back(std::move(e));
      predictions.push_back(pred);
      references.push_back(full_pred);
    }
    nlohmann::json metrics = corpus_scores(predictions, references);
    double jaccard = 0, error = 0, coverage = 0;
    int64_t steps = 0;
    for (const auto& s : seqs) jaccard += s.jaccard, error += s.attention_error, coverage += s.coverage, steps += s.steps;
    const double n = std::max<double>(1, static_cast<double>(seqs.size()));
    metrics["jaccard"] = seqs.empty() ? 1.0 : jaccard / n;
    metrics["attention_error"] = error / n;
    metrics["coverage"] = seqs.empty() ? 1.0 : coverage / n;
    metrics["probe_steps"] = steps;
    metrics["sequences"] = seqs.size();
    metrics["base"] = policy.metrics;
    metrics["full_base"] = reference.metrics;
    return {metrics, examples, policy.resolved};  // the base task's resolved settings
  }

 private:
  std::string base_name_;
  std::unique_ptr<Task> base_;
};

const TaskRegistration fidelity(
    {"fidelity/",
     "Fidelity to the Full cache on a base generation task: BLEU/ROUGE/METEOR vs Full, Jaccard, attention error, "
     "coverage (RoCo, BUZZ, K-VEC)",
     {"xsum", "cnn_dailymail", "reconstruction", "needle", "multidoc_qa"},
     [](const std::string& member) -> std::unique_ptr<Task> {
       if (member == "reconstruction") return std::make_unique<FidelityTask>(member, make_reconstruction_task());
       if (member.rfind("fidelity/", 0) == 0) throw std::invalid_argument("fidelity/: the base task cannot be a fidelity task");
       return std::make_unique<FidelityTask>(member, make_task(member));
     }});

}  // namespace
}  // namespace kvbench::tasks
