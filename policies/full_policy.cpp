// Full: the uncompressed cache, every policy's reference point.
#include "policies/registry.hpp"

namespace kvbench::policies {
namespace {

class FullPolicy : public Policy {
 public:
  std::string name() const override { return "full"; }
  void compress(int64_t, LayerCache&, Phase) override {}
  int64_t layer_budget(int64_t) const override { return kUnlimitedTokens; }
};

const PolicyRegistration registration({
    "full", "Keeps every token (no eviction).", "-", {},
    [](const nlohmann::json&) { return std::make_unique<FullPolicy>(); }});

}  // namespace
}  // namespace kvbench::policies
