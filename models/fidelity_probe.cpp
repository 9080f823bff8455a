#include "models/fidelity_probe.hpp"

#include "models/attention.hpp"

namespace kvbench::models {

FidelityProbe::FidelityProbe(const Transformer& model, policies::PositionMode mode)
    : model_(model),
      shadow_(model.make_cache(mode)),
      error_sum_(model.config().n_layers, 0.0),
      error_count_(model.config().n_layers, 0),
      kept_positions_(model.config().n_layers) {}

CacheControl FidelityProbe::control() {
  CacheControl c;
  // The policy's cache as the query sees it: remember its positions (new tokens included).
  c.inspect = [this](int64_t layer, const policies::LayerCache& cache, const policies::AttentionStats&) {
    kept_positions_[layer] = cache.positions().to(torch::kCPU).clone();
    if (!cache.all_valid()) kept_positions_[layer].masked_fill_(cache.valid().to(torch::kCPU).logical_not(), -1);
  };
  c.on_attention = [this](int64_t layer, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                          const torch::Tensor& positions, const torch::Tensor& output) {
    policies::LayerCache& full = shadow_.layer(layer);
    full.append(k, v, positions.to(k.device()));
    AttentionRequest request;
    request.mode = shadow_.position_mode();
    request.stats.last_row = true;
    AttentionResult reference = attend(q, full, model_.rope(), request);
    // eq. 4 on the last query of this forward (the decoding step), relative to ‖O‖.
    torch::Tensor o = reference.output.select(1, q.size(1) - 1).to(torch::kFloat64);
    torch::Tensor o_hat = output.select(1, q.size(1) - 1).to(torch::kFloat64);
    error_sum_[layer] += ((o_hat - o).norm() / o.norm().clamp_min(1e-30)).item<double>();
    ++error_count_[layer];
    if (layer == 0) ++steps_;
    // Jaccard of the kept set vs the full attention's top-B, per KV head (query heads averaged).
    const torch::Tensor& kept = kept_positions_[layer];
    if (!kept.defined()) return;
    torch::Tensor row = reference.stats.last_row.to(torch::kCPU);  // [H, n_full]
    const int64_t kvh = kept.size(0), group = row.size(0) / kvh;
    torch::Tensor per_kv = row.reshape({kvh, group, -1}).mean(1);
    torch::Tensor full_positions = full.positions().to(torch::kCPU)[0];
    for (int64_t h = 0; h < kvh; ++h) {
      torch::Tensor mine = kept[h];
      mine = mine.masked_select(mine.ge(0));
      const int64_t b = mine.size(0);
      torch::Tensor top = full_positions.index_select(0, std::get<1>(per_kv[h].topk(std::min(b, per_kv.size(1)))));
      torch::Tensor inter = torch::isin(mine, top).sum();
      const double i = inter.item<double>();
      jaccard_sum_ += i / static_cast<double>(b + top.size(0) - i);
      ++jaccard_count_;
    }
  };
  return c;
}

std::vector<double> FidelityProbe::attention_error_per_layer() const {
  std::vector<double> out;
  for (size_t l = 0; l < error_sum_.size(); ++l) out.push_back(error_count_[l] ? error_sum_[l] / error_count_[l] : 0.0);
  return out;
}

double FidelityProbe::mean_attention_error() const {
  double sum = 0;
  int64_t count = 0;
  for (size_t l = 0; l < error_sum_.size(); ++l) sum += error_sum_[l], count += error_count_[l];
  return count ? sum / count : 0.0;
}

double FidelityProbe::mean_jaccard() const { return jaccard_count_ ? jaccard_sum_ / jaccard_count_ : 1.0; }

double union_coverage(const policies::KVCache& cache, int64_t prompt_len) {
  if (prompt_len <= 0) return 0;
  torch::Tensor seen = torch::zeros({prompt_len}, torch::kBool);
  for (int64_t l = 0; l < cache.n_layers(); ++l) {
    const auto& layer = cache.layer(l);
    torch::Tensor pos = layer.positions().to(torch::kCPU);
    torch::Tensor ok = pos.lt(prompt_len);
    if (!layer.all_valid()) ok = ok.logical_and(layer.valid().to(torch::kCPU));
    seen.index_fill_(0, pos.masked_select(ok), true);
  }
  return seen.to(torch::kFloat64).mean().item<double>();
}

}  // namespace kvbench::models
