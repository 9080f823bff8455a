// PrefillDecodingPress (kvpress/presses/prefill_decoding_press.py): one press for the prompt and
// another while generating. The prompt's forward goes to `prefilling_press` (any registered
// policy), every decode step to `decoding_press` (a DecodingPress: kvpress:decoding, its registry
// keys, kvpress:compression_ratio_decoding); "none" is kvpress's None, no compression in that
// phase. Each reads the job's budget with its own parameters (`prefilling_params`,
// `decoding_params`). kvpress tells the phases apart by is_prefilling (the forward that starts at
// position 0); kvbench gives a streamed prompt's later blocks to the prefilling press too (kvpress's
// pipeline feeds the prompt in one forward, where both agree). Runs under the `decode` protocol.
#include <algorithm>

#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies::kvpress {
namespace {

bool is_decoding_press_name(const std::string& name) {
  return name.rfind("kvpress:decoding", 0) == 0 || name == "kvpress:compression_ratio_decoding";
}

std::unique_ptr<Policy> make_prefill_decoding_part(const std::string& name, const nlohmann::json& params, bool decoding) {
  if (name == "none") return nullptr;
  if (name == "kvpress:prefill_decoding") throw std::invalid_argument("kvpress:prefill_decoding cannot hold itself");
  if (is_decoding_press_name(name) != decoding)
    throw std::invalid_argument(std::string("kvpress:prefill_decoding: ") + (decoding ? "decoding_press must be a DecodingPress (kvpress:decoding…, kvpress:compression_ratio_decoding), got '"
                                                                                  : "prefilling_press must not be a DecodingPress, got '") +
                                name + "'");
  return make_policy(name, params);
}

class PrefillDecodingPress : public Policy {
 public:
  explicit PrefillDecodingPress(const nlohmann::json& p)
      : prefilling_(make_prefill_decoding_part(p.at("prefilling_press"), p.at("prefilling_params"), false)),
        decoding_(make_prefill_decoding_part(p.at("decoding_press"), p.at("decoding_params"), true)) {}
  std::string name() const override { return "kvpress:prefill_decoding"; }
  StatsRequest wants() const override {
    StatsRequest r;
    for (const Policy* part : {prefilling_.get(), decoding_.get()})
      if (part) r.merge(part->wants());
    return r;
  }
  void begin(const SequenceInfo& info) override {
    Policy::begin(info);
    SequenceInfo after_prompt = info;
    if (prefilling_) {
      prefilling_->begin(info);
      // What the decoding press finds of the prompt: at most what the prefilling press kept.
      int64_t kept = 0;
      for (int64_t l = 0; l < info.n_layers; ++l) kept = std::max(kept, std::min(info.prompt_len, prefilling_->layer_budget(l)));
      after_prompt.prompt_len = kept;
    }
    if (decoding_) decoding_->begin(after_prompt);
  }
  void observe(int64_t layer, LayerCache& cache, const AttentionStats& stats, Phase phase) override {
    if (Policy* part = part_for(phase)) part->observe(layer, cache, stats, phase);
  }
  void compress(int64_t layer, LayerCache& cache, Phase phase) override {
    if (Policy* part = part_for(phase)) part->compress(layer, cache, phase);
  }
  int64_t layer_budget(int64_t layer) const override {
    if (!decoding_) return kUnlimitedTokens;  // generated tokens are never evicted
    return decoding_->layer_budget(layer);
  }

 private:
  Policy* part_for(Phase phase) const { return phase == Phase::kDecode ? decoding_.get() : prefilling_.get(); }

  std::unique_ptr<Policy> prefilling_, decoding_;
};

const PolicyRegistration prefill_decoding_registration(
    {"kvpress:prefill_decoding", "PrefillDecodingPress: one press compresses the prompt, a DecodingPress the generated tokens",
     "kvpress prefill_decoding_press.py",
     {params::Param::text("prefilling_press", "none", "the registered policy that compresses the prompt (none: kvpress's default None, no compression)"),
      params::Param::object("prefilling_params", nlohmann::json::object(), "its parameters"),
      params::Param::text("decoding_press", "none", "the DecodingPress that compresses while generating (none: kvpress's default None)"),
      params::Param::object("decoding_params", nlohmann::json::object(), "its parameters")},
     [](const nlohmann::json& p) { return std::make_unique<PrefillDecodingPress>(p); }});

}  // namespace
}  // namespace kvbench::policies::kvpress
