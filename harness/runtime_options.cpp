#include "harness/runtime_options.hpp"

#include <stdexcept>

#include "datasets/json_parse.hpp"
#include "models/device_options.hpp"
#include "models/weight_checks.hpp"
#include "policies/budget.hpp"
#include "policies/registry.hpp"

namespace kvbench::harness {

void ModelOptions::add_to(CLI::App& app) {
  app.add_option("--model", model,
                 "HF directory, llama2.c .bin, a directory with one .bin and one .model, or the alias stories260K")
      ->capture_default_str();
  app.add_option("--tokenizer", tokenizer, "tokenizer.json, tokenizer.model, vocab.json, or a directory holding one (default: beside the model)");
  app.add_option("--device", device, "cpu or cuda")->capture_default_str();
  app.add_option("--dtype", dtype, "auto, float32, bfloat16 or float16")->capture_default_str();
}

void PolicyOptions::add_to(CLI::App& app) {
  app.add_option("--policy", policy, "eviction policy (kvbench policies lists them)")->capture_default_str();
  app.add_option("--policy-params", params, "policy parameters as a JSON object")->capture_default_str();
  app.add_option("--budget", budget, "tokens per KV head (512), a fraction of the prompt (20%) or full")
      ->capture_default_str();
  app.add_option("--protocol", protocol, "oneshot, stream or decode")->capture_default_str();
  app.add_option("--block", block, "stream protocol: prompt block size in tokens")->capture_default_str()->check(at_least(1));
  app.add_option("--seed", seed, "seed for sampling and randomised policies")
      ->capture_default_str()
      // An unsigned option takes "-1" as 2^64 - 1 (another job id) without a word.
      ->check(CLI::Validator(
          [](std::string& text) {
            return text.find('-') == std::string::npos ? std::string() : "must be an integer >= 0, got " + text;
          },
          "UINT"));
}

nlohmann::json PolicyOptions::params_json() const {
  nlohmann::json parsed;
  try {
    parsed = datasets::parse_json(params, "--policy-params");
  } catch (const datasets::DataError& e) {
    throw std::invalid_argument(e.what());
  }
  nlohmann::json resolved = policies::resolved_params(policy, parsed);
  policies::make_policy(policy, resolved);  // the policy's own range checks, before the model loads
  return resolved;
}

LoadedRuntime load_runtime(const ModelOptions& options) {
  LoadedRuntime runtime;
  try {
    models::validate_device_and_dtype(options.device, options.dtype);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--" + std::string(e.what()));
  }
  runtime.loaded = models::load_model(options.model, options.tokenizer);
  const torch::Device device = models::parse_device(options.device);
  if (device.is_cuda() && !torch::cuda::is_available())
    throw std::runtime_error("--device cuda: no CUDA device is available to libtorch");
  const torch::ScalarType dtype = models::parse_dtype(options.dtype, device);
  models::ModelWeights weights = models::to_device(runtime.loaded.weights, device, dtype);
  runtime.transformer = std::make_unique<models::Transformer>(runtime.loaded.config, std::move(weights));
  runtime.tokenizer = std::make_unique<models::Tokenizer>(runtime.loaded.tokenizer_path);
  models::check_tokenizer_vocab(runtime.tokenizer->vocab_size(), runtime.loaded);
  return runtime;
}

models::SessionOptions session_options(const PolicyOptions& options) {
  models::SessionOptions s;
  s.protocol = models::parse_protocol(options.protocol);
  s.block = options.block;
  s.budget = policies::Budget::parse(options.budget);
  s.seed = options.seed;
  return s;
}

CLI::Validator at_least(int64_t min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        int64_t value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "must be an integer, got '" + text + "'";
        return value < min ? "must be at least " + std::to_string(min) + ", got " + text : std::string();
      },
      "INT >= " + std::to_string(min));
}

}  // namespace kvbench::harness
