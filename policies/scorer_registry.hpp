#pragma once
// Scorers by name. Each scorer registers itself in its policy's file (the H2O scorer in
// h2o_policy.cpp, ...) with its parameters declared once; policies that embed a fixed scorer
// (PyramidKV: snapkv) or take one by name (Ada-KV's `scorer`) get its parameters from here.
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/param.hpp"
#include "policies/slot_scorer.hpp"

namespace kvbench::policies {

struct ScorerInfo {
  std::string name;
  params::Params params;
  // Receives the embedding policy's resolved parameters (its scorer's among them).
  std::function<std::unique_ptr<SlotScorer>(const nlohmann::json& params)> make;
};

struct ScorerRegistration {
  explicit ScorerRegistration(ScorerInfo info);
};

const std::vector<ScorerInfo>& registered_scorers();  // sorted by name
const ScorerInfo* find_scorer(const std::string& name);
// Throws std::invalid_argument "unknown scorer 'x' (known: ...)".
const ScorerInfo& scorer_info(const std::string& name);
std::string scorer_names();  // "h2o, scissorhands, snapkv, tova"
std::unique_ptr<SlotScorer> make_scorer(const std::string& name, const nlohmann::json& params);

}  // namespace kvbench::policies
