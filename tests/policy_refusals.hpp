#pragma once
// Settings a policy refuses with one clear error (std::invalid_argument), which the tests that run
// every registered policy expect instead of a run: ThinK prunes key channels, not tokens, so alone
// it refuses a token budget, and it prunes the prompt once, so it refuses a streamed prefill.
#include <string>

#include "models/protocol.hpp"

namespace kvbench::testing {

inline bool policy_refuses(const std::string& policy, models::Protocol protocol, bool token_budget) {
  const bool think = policy == "think" || policy == "kvpress:think";
  return ((think || policy == "kvpress:snap_think") && protocol == models::Protocol::kStream) || (think && token_budget);
}

}  // namespace kvbench::testing
