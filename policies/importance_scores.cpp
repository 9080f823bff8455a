#include "policies/importance_scores.hpp"

#include <stdexcept>

#include "policies/selection.hpp"

namespace kvbench::policies {

Importance parse_importance(const std::string& name) {
  if (name == "random") return Importance::kRandom;
  if (name == "recency") return Importance::kRecency;
  if (name == "aas") return Importance::kAAS;
  if (name == "aqas") return Importance::kAQAS;
  if (name == "ltas") return Importance::kLTAS;
  if (name == "mas") return Importance::kMAS;
  throw std::invalid_argument("importance must be random, recency, aas, aqas, ltas or mas, got '" + name + "'");
}

const char* to_string(Importance importance) {
  switch (importance) {
    case Importance::kRandom: return "random";
    case Importance::kRecency: return "recency";
    case Importance::kAAS: return "aas";
    case Importance::kAQAS: return "aqas";
    case Importance::kLTAS: return "ltas";
    case Importance::kMAS: return "mas";
  }
  return "?";
}

StatsRequest AttentionLedger::request() const {
  StatsRequest r;
  r.column_sums = sums;
  r.kv_column_sq_sums = squares;
  r.kv_column_above_mean = above_mean;
  r.last_row = last;
  return r;
}

void AttentionLedger::update(LayerCache& cache, const AttentionStats& stats, HeadReduce reduce) const {
  const int64_t kvh = cache.kv_heads();
  if (sums) {
    torch::Tensor acc = cache.state("acc"), count = cache.state("count");
    acc += reduce_to_kv_heads(stats.column_sums, kvh, reduce).to(acc.device());
    count += stats.column_counts.to(count.device()).reshape({1, -1});
  }
  if (squares) {
    torch::Tensor sq = cache.state("acc_sq");
    sq += stats.kv_column_sq_sums.to(sq.device());
  }
  if (above_mean) {
    torch::Tensor above = cache.state("above");
    above += stats.kv_column_above_mean.to(above.device());
  }
  if (last) cache.state("last").copy_(reduce_to_kv_heads(stats.last_row, kvh, reduce));
}

AttentionLedger ledger_for(Importance importance) {
  AttentionLedger ledger;
  ledger.sums = importance == Importance::kAAS || importance == Importance::kMAS;
  ledger.above_mean = importance == Importance::kAQAS;
  ledger.last = importance == Importance::kLTAS;
  return ledger;
}

torch::Tensor importance_scores(Importance importance, LayerCache& cache, std::mt19937_64& rng) {
  const int64_t kvh = cache.kv_heads(), n = cache.size();
  auto wide = [](const torch::Tensor& t) { return t.to(torch::kFloat64); };
  switch (importance) {
    case Importance::kRandom: {
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      torch::Tensor s = torch::empty({kvh, n}, torch::kFloat64);
      double* p = s.data_ptr<double>();
      for (int64_t i = 0; i < kvh * n; ++i) p[i] = uniform(rng);
      return host_tensor_on(s, cache.keys().device());
    }
    case Importance::kRecency: return wide(cache.positions());
    case Importance::kAAS: return wide(cache.state("acc"));
    case Importance::kAQAS: return wide(cache.state("above"));
    case Importance::kLTAS: return wide(cache.state("last"));
    case Importance::kMAS: return wide(cache.state("acc")) / wide(cache.state("count")).clamp_min(1.0);
  }
  throw std::logic_error("importance_scores: unknown importance");
}

torch::Tensor attention_std(LayerCache& cache) {
  torch::Tensor c = cache.state("count").to(torch::kFloat64).clamp_min(1.0);
  torch::Tensor mean = cache.state("acc").to(torch::kFloat64) / c;
  torch::Tensor second = cache.state("acc_sq").to(torch::kFloat64) / c;
  return (second - mean.square()).clamp_min(0.0).sqrt();
}

}  // namespace kvbench::policies
