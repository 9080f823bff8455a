#include "harness/runtime_options.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "datasets/json_parse.hpp"
#include "models/device_options.hpp"
#include "models/weight_checks.hpp"
#include "policies/budget.hpp"
#include "policies/registry.hpp"
#include "tasks/kvpress_prompt.hpp"

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
  app.add_option("--budget", budget, "tokens per KV head (512), a fraction of the prompt (20%), kvpress's compression ratio (ratio:0.5) or full")
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
  if (!parsed.is_object()) throw std::invalid_argument("--policy-params must be a JSON object, got " + params);
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

models::SessionOptions session_options(const PolicyOptions& options, const LoadedRuntime& rt) {
  models::SessionOptions s = session_options(options);
  s.text = tasks::model_prompt_text(*rt.tokenizer);
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

void require_positions(int64_t positions, const std::string& what) {
  if (positions <= kMaxPositions) return;
  throw std::invalid_argument(what + ": " + std::to_string(positions) + " positions, more than kvbench's bound of " +
                              std::to_string(kMaxPositions) +
                              " per sequence (2^24: RoPE's float32 angles give positions past it the rotation of "
                              "another)");
}

std::string trained_context_field(const models::LoadedModel& loaded) {
  return loaded.format == "hf" ? "max_position_embeddings in config.json" : "seq_len in the llama2.c header";
}

MemoryNeed memory_need(const models::ModelConfig& c, torch::ScalarType dtype, const models::SessionOptions& session,
                       const SequenceShape& shape) {
  const double elem = static_cast<double>(c10::elementSize(dtype));
  const double T = static_cast<double>(shape.prompt_tokens), N = static_cast<double>(shape.new_tokens);
  const bool stream = session.protocol == models::Protocol::kStream;
  // A non-stream prefill is one forward over the whole prompt, and every layer appends all of it
  // before its policy compresses (a cache's buffers never shrink); a stream feeds blocks.
  const double forward = stream ? std::min(T, static_cast<double>(session.block)) : T;
  const double slots = session.budget.is_unlimited() ? T + N : forward;
  MemoryNeed need;
  // Per slot and KV head: a key and a value row, an int64 position and a bool validity flag.
  need.kv_bytes = slots * static_cast<double>(c.n_layers) * static_cast<double>(c.n_kv_heads) *
                  (2 * static_cast<double>(c.head_dim) * elem + 9);
  // At the last layer's MLP: the residual, its norm, the fused qkv, the attention output, the
  // gate-and-up product and the activation are alive together; plus int64 token ids and positions.
  const double H = static_cast<double>(c.n_heads), kvh = static_cast<double>(c.n_kv_heads);
  const double hd = static_cast<double>(c.head_dim);
  const double per_token = elem * (2 * static_cast<double>(c.dim) + (H + 2 * kvh) * hd + H * hd +
                                   3 * static_cast<double>(c.hidden_dim)) + 16;
  need.activation_bytes = forward * per_token;
  // models/perplexity.cpp holds the float32 logits, their float64 copy and the log-probabilities.
  if (shape.all_logits) need.logits_bytes = T * static_cast<double>(c.vocab_size) * (4 + 8 + 8);
  return need;
}

namespace {

std::string gib(double bytes) {
  char text[64];
  if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else if (bytes >= 1024.0 * 1024) std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024));
  else std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  return text;
}

std::optional<double> read_number(const std::string& path) {
  std::ifstream in(path);
  double value = 0;
  if (!(in >> value)) return std::nullopt;  // "max" (no limit), or no such file
  return value;
}

}  // namespace

std::optional<MemoryRoom> memory_room(const torch::Device& device) {
  if (!device.is_cpu()) return std::nullopt;
  // What the kernel says is available, what the cgroup (v2, else v1) still allows and what
  // `ulimit -v` leaves of the address space: the smallest.
  std::optional<MemoryRoom> best;
  auto offer = [&](double bytes, const std::string& source) {
    if (!best || bytes < best->bytes) best = MemoryRoom{std::max(0.0, bytes), source};
  };
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    double kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:") {
      offer(kib * 1024, "MemAvailable in /proc/meminfo");
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  const auto v2_max = read_number("/sys/fs/cgroup/memory.max"), v2_now = read_number("/sys/fs/cgroup/memory.current");
  if (v2_max && v2_now) offer(*v2_max - *v2_now, "the cgroup's memory.max");
  const auto v1_max = read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  const auto v1_now = read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  if (v1_max && v1_now && *v1_max < 1e18) offer(*v1_max - *v1_now, "the cgroup's memory.limit_in_bytes");
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const auto pages = read_number("/proc/self/statm");  // the first field: the address space in pages
    if (pages) offer(static_cast<double>(limit.rlim_cur) - *pages * static_cast<double>(::sysconf(_SC_PAGESIZE)),
                     "ulimit -v");
  }
  return best;
}

void require_memory(const MemoryNeed& need, const torch::Device& device, const std::string& what) {
  const std::optional<MemoryRoom> room = memory_room(device);
  if (!room || need.total() <= room->bytes) return;
  std::ostringstream parts;
  parts << "KV cache " << gib(need.kv_bytes) << ", forward activations " << gib(need.activation_bytes);
  if (need.logits_bytes > 0) parts << ", logits " << gib(need.logits_bytes);
  throw std::runtime_error(what + " would allocate at least " + gib(need.total()) + " (" + parts.str() +
                           "), more than the " + gib(room->bytes) + " available (" + room->source + ")");
}

}  // namespace kvbench::harness
