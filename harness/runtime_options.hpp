#pragma once
// The options shared by every command that runs the model: which model, which policy, which
// budget and protocol. One definition so `generate`, `perplexity` and `run` agree on them.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
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

}  // namespace kvbench::harness
