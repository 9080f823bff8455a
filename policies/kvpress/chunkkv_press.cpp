// ChunkKVPress (Liu et al., "ChunkKV: Semantic-Preserving KV Cache Compression for Efficient
// Long-Context LLM Inference", 2025; kvpress/presses/chunkkv_press.py): whole chunks of
// `chunk_length` consecutive tokens, the same on every head. The press's scores (its protected
// window scored max + 1, as kvpress's presses pad it) are summed over the KV heads and averaged
// per chunk (the last, partial chunk over what it holds); the best max(1, int(chunks · (1 − r)))
// chunks stay. A prompt shorter than one chunk falls back to the press itself. Under a token
// budget B the kept share 1 − r is B/n. Kept tokens come in whole chunks, so a layer may hold up
// to B + chunk_length − 1 (layer_budget).
#include <cmath>

#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class ChunkKvPress : public WrapperPolicy {
 public:
  ChunkKvPress(std::string name, std::unique_ptr<SlotScorer> wrapped, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(wrapped)), chunk_(p.at("chunk_length")) {}
  // Its observe() is the press's alone (WrapperPolicy's).
  bool observes_only_to_compress() const override { return press().observes_only_to_compress(); }
  int64_t layer_budget(int64_t) const override {
    return info_.unlimited() ? info_.budget : info_.budget + chunk_ - 1;
  }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget), n = cache.size();
    if (fits_budget(cache, budget)) return;
    if (!cache.in_arrival_order() || !cache.all_valid())
      throw std::logic_error(name() + ": needs a cache in arrival order with every head whole");
    const int64_t window = std::min(n, press().recent(n));
    const torch::Tensor protect = newest_valid(cache, window);
    torch::Tensor scores = press().scores(layer, cache, newest_valid(cache, std::min(budget, window)))
                               .to(torch::kCPU, torch::kFloat32).expand({cache.kv_heads(), n});
    scores = torch::where(protect.to(torch::kCPU), scores.max() + 1, scores);
    const int64_t complete = n / chunk_, rest = n % chunk_;
    if (complete == 0) {  // kvpress: the press alone, ScorerPress.compress
      keep_best(cache, scores.to(cache.keys().device()), budget);
      return;
    }
    const torch::Tensor per_token = scores.sum(0);  // [n]
    std::vector<torch::Tensor> chunk_scores{per_token.narrow(0, 0, complete * chunk_).reshape({complete, chunk_}).mean(1)};
    if (rest > 0) chunk_scores.push_back(per_token.narrow(0, complete * chunk_, rest).mean().reshape({1}));
    const torch::Tensor by_chunk = torch::cat(chunk_scores).unsqueeze(0);
    const int64_t chunks = by_chunk.size(1);
    const double share = info_.compression_ratio ? 1 - *info_.compression_ratio : static_cast<double>(budget) / static_cast<double>(n);
    const int64_t kept_chunks = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(chunks) * share));
    const torch::Tensor chosen = top_k_mask(by_chunk, kept_chunks)[0];  // [chunks] bool
    std::vector<int64_t> slots;
    const auto pick = chosen.accessor<bool, 1>();
    for (int64_t c = 0; c < chunks; ++c)
      if (pick[c])
        for (int64_t j = c * chunk_; j < std::min(n, (c + 1) * chunk_); ++j) slots.push_back(j);
    cache.keep(host_slots_on(slots, cache.keys().device()));
  }

 private:
  int64_t chunk_;
};

const params::Param kChunkLength = params::Param::integer("chunk_length", 20, "tokens per chunk", 1);
const char* const kChunkReadsDevice = "its chunks are chosen on the host";

const PolicyRegistration chunkkv_any_registration(
    {"kvpress:chunk", "ChunkKV around any press: whole chunks ranked by the press's scores summed over heads",
     "Liu et al. 2025 (arXiv 2502.00299); kvpress chunkkv_press.py",
     {params::Param::text("press", "kvpress:snapkv", "the registered press whose scores rank the chunks (its parameters join these)"),
      kChunkLength},
     [](const nlohmann::json& p) { return std::make_unique<ChunkKvPress>("kvpress:chunk", make_scorer(p.at("press"), p), p); },
     kChunkReadsDevice, "", "press"});

const PolicyRegistration chunkkv_registration(
    {"kvpress:chunkkv", "ChunkKVPress(press=SnapKVPress(), chunk_length=20)",
     "Liu et al. 2025; kvpress chunkkv_press.py, snapkv_press.py (PRESS_REGISTRY chunkkv)", {kChunkLength},
     [](const nlohmann::json& p) { return std::make_unique<ChunkKvPress>("kvpress:chunkkv", make_scorer("kvpress:snapkv", p), p); },
     kChunkReadsDevice, "kvpress:snapkv"});

}  // namespace
}  // namespace kvbench::policies::kvpress
