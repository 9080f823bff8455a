#include "policies/scorer_registry.hpp"

#include "base/registry.hpp"

namespace kvbench::policies {
namespace {
base::Registry<ScorerInfo>& table() {
  static base::Registry<ScorerInfo> scorers("scorer");
  return scorers;
}
}  // namespace

ScorerRegistration::ScorerRegistration(ScorerInfo info) {
  params::check_unique_names("scorer '" + info.name + "'", info.params);
  table().add(std::move(info));
}

const std::vector<ScorerInfo>& registered_scorers() { return table().all(); }
const ScorerInfo* find_scorer(const std::string& name) { return table().find(name); }
const ScorerInfo& scorer_info(const std::string& name) { return table().at(name); }

std::string scorer_names() {
  std::string names;
  for (const auto& s : table().all()) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

std::unique_ptr<SlotScorer> make_scorer(const std::string& name, const nlohmann::json& params) {
  return scorer_info(name).make(params);
}

}  // namespace kvbench::policies
