// StreamingLLMPress (Xiao et al. 2024; kvpress/presses/streaming_llm_press.py): the first `n_sink`
// tokens and the newest n_kept − n_sink stay; the tokens between are pruned. No key re-rotation
// (kvpress's KeyRerotationPress wrapper adds it; kvbench's bare `streaming_llm` follows
// mit-han-lab's cache instead).
#include "policies/kvpress/press.hpp"
#include "policies/keep_scored.hpp"

namespace kvbench::policies::kvpress {
namespace {

class StreamingLlmPress : public Press {
 public:
  explicit StreamingLlmPress(const nlohmann::json& p) : sinks_(p.at("n_sink")) {}
  std::string name() const override { return "kvpress:streaming_llm"; }
  // The newest tokens are protected by the policy, the sinks win the rest on their scores.
  int64_t recent(int64_t budget) const override { return std::max<int64_t>(0, budget - sinks_); }
  torch::Tensor scores(int64_t, LayerCache& cache, const torch::Tensor&) override {
    return oldest_valid(cache, sinks_).to(torch::kFloat32);
  }

 private:
  int64_t sinks_;
};

const PressRegistration streaming_llm_registration(
    {"streaming_llm", "The first n_sink tokens and the newest ones (no re-rotation)",
     "Xiao et al. 2024 (arXiv 2309.17453); kvpress streaming_llm_press.py",
     {params::Param::integer("n_sink", 4, "attention sinks: the first tokens, always kept", 0)},
     [](const nlohmann::json& p) { return std::make_unique<StreamingLlmPress>(p); }});

}  // namespace
}  // namespace kvbench::policies::kvpress
