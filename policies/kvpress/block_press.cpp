// BlockPress (kvpress/presses/block_press.py; KeyDiff's block-wise eviction, Park et al. 2025):
// the prompt is scored block by block. The first n_kept tokens are kept; then, for each next block
// of `block_size` tokens, the press scores the kept tokens together with the block and each head
// keeps its n_kept best of them — so a press whose score depends on the set it sees (KeyDiff's mean
// key) judges each token among its neighbours, not the whole prompt. For presses that read only
// the cached keys and values, in no particular order (knorm, keydiff), as kvpress's asserts.
#include "policies/keep_scored.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scorer_registry.hpp"
#include "policies/selection.hpp"

namespace kvbench::policies::kvpress {
namespace {

class BlockPress : public WrapperPolicy {
 public:
  BlockPress(std::string name, std::unique_ptr<SlotScorer> wrapped, const nlohmann::json& p)
      : WrapperPolicy(std::move(name), std::move(wrapped)), block_(p.at("block_size")) {
    if (press().wants().any() || press().wants().queries_before_rope || press().wants().output_projection ||
        !press().slot_order_free())
      throw std::invalid_argument(this->name() + ": press '" + press().name() +
                                  "' reads attention or token order; a block press takes a press of the cached keys and "
                                  "values alone (kvpress:knorm, kvpress:keydiff)");
  }

  void compress(int64_t layer, LayerCache& cache, Phase) override {
    const int64_t budget = std::max<int64_t>(1, info_.budget), n = cache.size(), heads = cache.kv_heads();
    if (fits_budget(cache, budget)) return;
    if (!cache.in_arrival_order() || !cache.all_valid())
      throw std::logic_error(name() + ": needs a cache in arrival order with every head whole");
    const torch::Device device = cache.keys().device();
    const auto on = torch::TensorOptions().dtype(torch::kInt64).device(device);
    const torch::Tensor keys = cache.keys(), values = cache.values();
    torch::Tensor kept = torch::arange(budget, on).expand({heads, budget});
    for (int64_t start = budget; start < n; start += block_) {
      const int64_t end = std::min(start + block_, n);
      const torch::Tensor current = torch::cat({kept, torch::arange(start, end, on).expand({heads, end - start})}, 1);
      const torch::Tensor index = current.unsqueeze(-1).expand({heads, current.size(1), cache.head_dim()});
      LayerCache seen(heads, cache.head_dim(), keys.options(), current.size(1));
      seen.append(keys.gather(1, index), values.gather(1, index), torch::arange(current.size(1), on));
      const torch::Tensor scores = press().scores(layer, seen, torch::zeros({heads, current.size(1)}, on.dtype(torch::kBool)));
      kept = current.gather(1, std::get<1>(scores.topk(budget, -1)));
    }
    cache.keep(std::get<0>(kept.sort(-1)));
  }

 private:
  int64_t block_;
};

const params::Param kBlockSize = params::Param::integer("block_size", 128, "tokens scored with the kept ones at each step", 1);

const PolicyRegistration block_any_registration(
    {"kvpress:block", "Block-wise eviction around a press of the keys and values: kept ∪ next block, re-scored",
     "Park et al. 2025 (KeyDiff); kvpress block_press.py",
     {params::Param::text("press", "kvpress:keydiff", "the registered press that scores each block (its parameters join these)"),
      kBlockSize},
     [](const nlohmann::json& p) { return std::make_unique<BlockPress>("kvpress:block", make_scorer(p.at("press"), p), p); },
     "", "", "press"});

const PolicyRegistration block_keydiff_registration(
    {"kvpress:block_keydiff", "BlockPress(press=KeyDiffPress(), block_size=128)",
     "Park et al. 2025; kvpress block_press.py, keydiff_press.py (PRESS_REGISTRY block_keydiff)", {kBlockSize},
     [](const nlohmann::json& p) { return std::make_unique<BlockPress>("kvpress:block_keydiff", make_scorer("kvpress:keydiff", p), p); },
     "", "kvpress:keydiff"});

}  // namespace
}  // namespace kvbench::policies::kvpress
