#pragma once
// One prefill per prompt across the cells of a grid. Jobs that differ only in how they compress
// (policy, its parameters, budget, protocol, seed) feed the same prompts; run as threads that take
// turns — one runs at a time, each until its next prefill or decoding projection — their sessions
// share each prompt's forward through a models::PrefillShare and replay it as their own, and their
// decoding steps run each projection once for all through a models::DecodeBatch, bit for bit as
// alone. One thread at a time keeps every job's arithmetic (and libtorch's threads) as if it ran
// alone.
#include <functional>
#include <string>
#include <vector>

#include "harness/job_spec.hpp"

namespace kvbench::harness {

// The jobs in rings that may share prefills, in the order of their first member; no ring over
// `max_jobs`. A streamed job (its prompt is compressed while it is fed) is a ring of its own.
std::vector<std::vector<const Job*>> prefill_rings(const std::vector<Job>& jobs, size_t max_jobs);

// Runs every body on its own thread, taking turns, with one PrefillShare and one DecodeBatch among
// them; returns when all have finished. A body's exception is rethrown after the others finish.
void run_taking_turns(const std::vector<std::function<void()>>& bodies);

}  // namespace kvbench::harness
