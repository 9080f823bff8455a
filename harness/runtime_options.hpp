#pragma once
// The options shared by every command that runs the model: which model, which policy, which
// budget and protocol. One definition so `generate`, `perplexity` and `run` agree on them.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "models/transformer.hpp"
#include "policies/policy.hpp"

namespace kvbench::harness {

struct ModelOptions {
  std::string model = "stories260K";
  std::string tokenizer;
  std::string device = "cpu";
  std::string dtype = "auto";  // float32 on CPU, bfloat16 on CUDA
  void add_to(CLI::App& app);
};

struct PolicyOptions {
  std::string policy = "full";
  std::string params = "{}";
  std::string budget = "full";
  std::string protocol = "oneshot";
  int64_t block = 1;
  uint64_t seed = 0;
  void add_to(CLI::App& app);
  nlohmann::json params_json() const;
};

// A lower bound for an integer option, whose message names it ("must be at least 1, got 0"):
// CLI11's PositiveNumber / NonNegativeNumber print a range up to DBL_MAX, 300 digits long.
CLI::Validator at_least(int64_t min);

// A loaded model ready to run: config, transformer on its device, tokenizer.
struct LoadedRuntime {
  models::LoadedModel loaded;
  std::unique_ptr<models::Transformer> transformer;
  std::unique_ptr<models::Tokenizer> tokenizer;
};

LoadedRuntime load_runtime(const ModelOptions& options);
models::SessionOptions session_options(const PolicyOptions& options);
// The same with the loaded model's text side (SessionOptions::text), as a task hands it: KVzip
// writes its repeat prompts with it.
models::SessionOptions session_options(const PolicyOptions& options, const LoadedRuntime& rt);

// Positions one sequence may reach (prompt + new tokens, bench's context + --decode, perplexity's
// tokens). RoPE's angles are float32 position x frequency (as in llama2.c and transformers), and
// float32 holds every integer only up to 2^24: past it two positions get one rotation, a wrong
// number without an error. The model's trained context is a warning (trained_context_field), not
// a bound: policies such as StreamingLLM exist to run past it.
constexpr int64_t kMaxPositions = int64_t{1} << 24;

// Throws "<what>: N positions, more than kvbench's bound of 16777216 ..." past kMaxPositions.
void require_positions(int64_t positions, const std::string& what);

// "seq_len in the llama2.c header" / "max_position_embeddings in config.json": where the trained
// context (ModelConfig::max_seq_len) that the past-context warnings name comes from.
std::string trained_context_field(const models::LoadedModel& loaded);

// Memory a run needs, a lower bound from the shapes alone (tensors that are certainly alive at
// once at the peak), so a run that cannot fit is refused before it allocates, not after minutes
// and gigabytes. Per-slot policy state, allocator slack and libtorch's temporaries come on top.
// Bytes as doubles: the products of a hostile shape must not wrap.
struct MemoryNeed {
  double kv_bytes = 0;          // keys, values, positions and validity of every layer's cache
  double activation_bytes = 0;  // one forward's residual, norm, qkv, attention output and MLP
  double logits_bytes = 0;      // every position's logits, read back (perplexity: float32, float64, log-probs)
  // The cache lives throughout; the forward's activations are freed before its logits are read back.
  double total() const { return kv_bytes + std::max(activation_bytes, logits_bytes); }
};
struct SequenceShape {
  int64_t prompt_tokens = 0;   // fed by prefill
  int64_t new_tokens = 0;      // decode steps after it
  bool all_logits = false;     // perplexity: a row of logits per prompt position, read back as float64
};
MemoryNeed memory_need(const models::ModelConfig& config, torch::ScalarType dtype, const models::SessionOptions& session,
                       const SequenceShape& shape);
// The memory this process can still get on `device`: on the CPU the smallest of MemAvailable,
// the cgroup's limit and what `ulimit -v` leaves; nullopt elsewhere (there is no free-memory
// query of a CUDA device here yet) or when none can be read.
struct MemoryRoom {
  double bytes = 0;
  std::string source;  // "MemAvailable in /proc/meminfo", "ulimit -v", ...
};
std::optional<MemoryRoom> memory_room(const torch::Device& device);
// Throws "<what> would allocate at least X GiB (...), more than the Y GiB available (<source>)".
void require_memory(const MemoryNeed& need, const torch::Device& device, const std::string& what);

}  // namespace kvbench::harness
