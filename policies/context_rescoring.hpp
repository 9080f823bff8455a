#pragma once
// A policy that scores the prompt with more forwards after its prefill, as kvpress's KVComposePress
// runs the context a second time after itself. The session (models/inference_session.cpp) drives
// it under the oneshot and decode protocols: it prefills without compressing, runs each of
// scoring_inputs() after the prompt (begin_scoring_input() first; the policy observes every layer
// of that forward) and rolls the cache back to the prompt after each, then calls compress() on
// every layer with Phase::kPrefill. The scoring forwards' tokens count in the cache's peak memory,
// as in the reference.
#include <cstdint>
#include <vector>

namespace kvbench::policies {

class ContextRescoring {
 public:
  virtual ~ContextRescoring() = default;
  // The token sequences to feed after `prompt`, each on the prompt's cache alone.
  virtual std::vector<std::vector<int64_t>> scoring_inputs(const std::vector<int64_t>& prompt) = 0;
  // observe() calls from here until the next begin_scoring_input() or compress() are input `index`'s.
  virtual void begin_scoring_input(size_t index) = 0;
};

}  // namespace kvbench::policies
