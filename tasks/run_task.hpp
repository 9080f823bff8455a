#pragma once
// The one entry point the harness uses: run one job (one cell of a results table).
#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace kvbench::tasks {

// A job spec (canonical JSON; every field present after normalize_job_spec):
//   model        "stories260K" (alias of ../shared/models/stories260K), an HF dir, a .bin, or a dir
//   tokenizer    "" or a tokenizer.model path
//   task         "tinystories", "longbench/qasper", "fidelity/xsum", ...
//   task_params  {} task-specific settings (documents, gold position, shots, ...)
//   policy       "full", "h2o", ...        policy_params {} (resolved: defaults overlaid)
//   budget       "full" | "512" | "20%"
//   protocol     "oneshot" | "stream" | "decode"     block  streaming block size (tokens)
//   seed         int     limit  max examples (0 = all)     device "cpu" | "cuda"   dtype "auto"
nlohmann::json normalize_job_spec(const nlohmann::json& spec);

// Checksums that enter the job id: {"model": sha256 of the weight files, "dataset": sha256 of the
// task's data files}, and "policy": sha256 of the files the policy's parameters name (a learned
// press's artefacts: params::Param::names_file) where it names any.
nlohmann::json job_checksums(const nlohmann::json& spec);

// Progress callback: (examples done, examples total).
using ProgressFn = std::function<void(int64_t, int64_t)>;

// Runs the job and returns {"task", "model", "policy", "budget", "metrics": {aggregates},
// "examples": [{"id", "prompt_tokens", "prediction", "references", "metrics"}...],
// "timings": {"prefill_tokens_per_s", "decode_tokens_per_s", "seconds"},
// "memory": {"kv_logical_bytes_peak", "kv_allocated_bytes_peak", "max_cache_len", "allocator_peak_bytes"}}. Deterministic apart from timings.
nlohmann::json run_task(const nlohmann::json& spec, const ProgressFn& progress = {});

}  // namespace kvbench::tasks
