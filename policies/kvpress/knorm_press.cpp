// KnormPress (Devoto et al., "A Simple and Effective L2 Norm-Based Strategy for KV Cache
// Compression", 2024; kvpress/presses/knorm_press.py): a token's score is minus its key's L2 norm
// (keys as cached, after RoPE), so each head keeps its lowest-norm keys.
#include "policies/kvpress/press.hpp"

namespace kvbench::policies::kvpress {
namespace {

class KnormPress : public Press {
 public:
  std::string name() const override { return "kvpress:knorm"; }
  bool slot_order_free() const override { return true; }
  torch::Tensor scores(int64_t, LayerCache& cache, const torch::Tensor&) override {
    return cache.keys().to(torch::kFloat32).norm(2, -1).neg();
  }
};

const PressRegistration knorm_registration({"knorm", "Minus the key's L2 norm: keep the lowest-norm keys",
                                            "Devoto et al. 2024 (arXiv 2406.11430); kvpress knorm_press.py",
                                            {},
                                            [](const nlohmann::json&) { return std::make_unique<KnormPress>(); },
                                            /*bare_name=*/true});

}  // namespace
}  // namespace kvbench::policies::kvpress
