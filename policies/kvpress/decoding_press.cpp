// DecodingPress's registrations: any press (kvpress:decoding), the registry's keys around presses
// that score from the current step alone, and around AdaKVPress (the class: decoding_press.hpp).
#include "policies/keep_scored.hpp"
#include "policies/kvpress/decoding_press.hpp"
#include "policies/kvpress/press.hpp"
#include "policies/registry.hpp"
#include "policies/scored_policy.hpp"
#include "policies/scorer_registry.hpp"

namespace kvbench::policies::kvpress {
namespace {

std::unique_ptr<Policy> make_decoding(const std::string& name, const std::string& press, const nlohmann::json& p) {
  return std::make_unique<DecodingPress>(name, std::make_unique<ScoredPolicy>(name, make_scorer(press, p)), p);
}

// DecodingPress(base_press=AdaKVPress(press)): the parameters but the interval go to kvpress:adakv.
std::unique_ptr<Policy> make_decoding_adakv(const std::string& name, const std::string& press, const nlohmann::json& p) {
  nlohmann::json ada = p;
  ada.erase("compression_interval");
  ada["press"] = press;
  return std::make_unique<DecodingPress>(name, make_policy("kvpress:adakv", ada), p);
}

const PolicyRegistration decoding_any_registration(
    {"kvpress:decoding", "Compression while generating: every compression_interval steps, the whole cache to the budget",
     "kvpress decoding_press.py",
     {params::Param::text("press", "kvpress:knorm", "the registered press that scores the cache (its parameters join these)"),
      compression_interval_param()},
     [](const nlohmann::json& p) { return make_decoding("kvpress:decoding", p.at("press"), p); }, "", "", "press"});

// The registry's DecodingPress keys around presses that score from the current step alone.
const bool decoding_registered = [] {
  for (const char* press : {"knorm", "keydiff", "streaming_llm", "tova", "qfilter"}) {
    const std::string name = std::string("kvpress:decoding_") + press, scorer = std::string("kvpress:") + press;
    PolicyRegistration({name, "DecodingPress(base_press=" + scorer + ")",
                        "kvpress decoding_press.py (PRESS_REGISTRY " + name.substr(8) + ")", {compression_interval_param()},
                        [name, scorer](const nlohmann::json& p) { return make_decoding(name, scorer, p); }, "", scorer});
  }
  return true;
}();

const PolicyRegistration decoding_adakv_any_registration(
    {"kvpress:decoding_adakv", "DecodingPress(base_press=AdaKVPress(press)): kvpress:decoding with Ada-KV's head budgets",
     "kvpress decoding_press.py, adakv_press.py",
     {params::Param::text("press", "kvpress:snapkv", "the registered press that scores the cache (its parameters join these)"),
      compression_interval_param(), alpha_safeguard_param()},
     [](const nlohmann::json& p) { return make_decoding_adakv("kvpress:decoding_adakv", p.at("press"), p); },
     kAdaReadsDevice, "", "press"});

// The registry's DecodingPress keys around AdaKVPress (its presses read the buffered hidden
// states' queries: docs/policies-kvpress.md says what kvbench reads instead).
const bool decoding_adakv_registered = [] {
  const std::pair<const char*, const char*> keys[] = {{"kvpress:decoding_adakv_snapkv", "kvpress:snapkv"},
                                                      {"kvpress:decoding_adakv_expected_attention_e2", "expected_attention"}};
  for (const auto& [name, press] : keys) {
    const std::string key = name, scorer = press;
    PolicyRegistration({key, "DecodingPress(base_press=AdaKVPress(" + scorer + "))",
                        "kvpress decoding_press.py, adakv_press.py (PRESS_REGISTRY " + key.substr(8) + ")",
                        {compression_interval_param(), alpha_safeguard_param()},
                        [key, scorer](const nlohmann::json& p) { return make_decoding_adakv(key, scorer, p); }, kAdaReadsDevice,
                        scorer, "",
                        scorer == "expected_attention" ? nlohmann::json{{"epsilon", 1e-2}} : nlohmann::json::object()});
  }
  return true;
}();

}  // namespace
}  // namespace kvbench::policies::kvpress
