#pragma once
// What the tests (and benchmarks) that run every registered policy need to know of some of them:
// - settings a policy refuses with one clear error (std::invalid_argument), which such tests expect
//   instead of a run: ThinK prunes key channels, not tokens, so alone it refuses a token budget, and
//   it prunes the prompt once, so it refuses a streamed prefill; DMSPress evicts by a threshold,
//   so it refuses a token budget too, and so do DuoAttention (sized by its head ratio) and LU-KV (its
//   curve is indexed by compression ratio), which compress the prompt once and refuse a streamed
//   prefill as well, and CompressionRatioDecodingPress (a fraction of the tokens seen);
// - the parameters that make a policy runnable: learned presses read a published artefact, which
//   is written here (random, in the published format) for the model's shape; DMSPress needs a
//   threshold; R-KV's window (8) must stay below the budget, which these tests draw from 6 up;
//   FinchPress's window is the question of a query-aware prompt, which these prompts have not;
//   FastKVzip reads its gates from a torch.save file, recorded for stories260K only; RestoreKV reads
//   restore embeddings and a PEFT LoRA adapter.
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "models/model_config.hpp"
#include "models/model_loader.hpp"
#include "models/protocol.hpp"
#include "policies/registry.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tensorio/safetensors.hpp"

namespace kvbench::testing {

// Under the temp directory, one per test process: ctest runs several processes at once, and two
// writing one file would race on its rename.
// Under one folder per test process, removed when the process ends.
inline std::filesystem::path artefact_path(const std::string& name) {
  struct Folder {
    std::filesystem::path path = std::filesystem::temp_directory_path() / ("kvbench_artefacts_" + std::to_string(::getpid()));
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  return folder.path / name;
}

inline bool thresholded(const std::string& policy) {
  return policy == "kvpress:dms" || policy == "kvpress:kvzap_linear" || policy == "kvpress:kvzap_mlp";
}

// Policies whose budget is kvpress's compression ratio alone (--budget ratio:<r>).
inline bool sized_by_ratio(const std::string& policy) {
  return policy == "kvpress:lukv" || policy == "kvpress:compression_ratio_decoding";
}

inline bool policy_refuses(const std::string& policy, models::Protocol protocol, bool token_budget) {
  const bool think = policy == "think" || policy == "kvpress:think";
  const bool duo = policy == "duo_attention" || policy == "kvpress:duo_attention" || policy == "kvpress:duo_attention_on_the_fly";
  const bool lukv = policy == "kvpress:lukv";
  return ((think || duo || lukv || policy == "kvpress:snap_think") && protocol == models::Protocol::kStream) ||
         ((think || duo || sized_by_ratio(policy) || thresholded(policy)) && token_budget);
}

// stories260K's tokenizer as a task hands it to its sessions (SessionOptions::text): KVzip writes its
// repeat prompts with it.
inline std::shared_ptr<const policies::PromptText> stories_text() {
  static const models::Tokenizer tokenizer(models::load_model("stories260K").tokenizer_path);
  return tasks::model_prompt_text(tokenizer);
}

// Q-filters [layers, kv_heads, head_dim] as nthngdy/<model>_qfilt's model.safetensors, written per
// shape under the temp directory.
inline std::string q_filters_file(int64_t layers, int64_t kv_heads, int64_t head_dim) {
  const std::filesystem::path file = artefact_path("kvbench_qfilt_" + std::to_string(layers) + "x" + std::to_string(kv_heads) + "x" +
                                                     std::to_string(head_dim) + ".safetensors");
  at::Generator g = at::detail::createCPUGenerator(layers * 1000 + kv_heads * 10 + head_dim);
  models::write_safetensors(file.string(), {{"q_filters", torch::randn({layers, kv_heads, head_dim}, g, torch::kFloat32)}});
  return file.string();
}

// A KVzap surrogate ("linear" or "mlp", hidden 8) as nvidia/KVzap-<type>-<model>: config.json and
// model.safetensors, written per shape under the temp directory.
inline std::string kvzap_dir(const std::string& type, int64_t layers, int64_t dim, int64_t kv_heads) {
  const std::filesystem::path dir = artefact_path("kvbench_kvzap_" + type + "_" + std::to_string(layers) + "x" + std::to_string(dim) + "x" +
                                                    std::to_string(kv_heads));
  std::filesystem::create_directories(dir);
  const bool mlp = type == "mlp";
  nlohmann::json config = {{"input_dim", dim}, {"output_dim", kv_heads}, {"n_modules", layers}, {"model_type", "kvzap"}};
  config["hidden_dim"] = mlp ? nlohmann::json(8) : nlohmann::json(nullptr);
  std::ofstream(dir / "config.json") << config.dump();
  at::Generator g = at::detail::createCPUGenerator(layers * 7 + dim + kv_heads);
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (int64_t i = 0; i < layers; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    if (mlp) {
      tensors.push_back({p + "0.weight", torch::randn({8, dim}, g) * 0.1});
      tensors.push_back({p + "0.bias", torch::randn({8}, g)});
      tensors.push_back({p + "2.weight", torch::randn({kv_heads, 8}, g)});
      tensors.push_back({p + "2.bias", torch::randn({kv_heads}, g)});
    } else {
      tensors.push_back({p + "weight", torch::randn({kv_heads, dim}, g) * 0.1});
      tensors.push_back({p + "bias", torch::randn({kv_heads}, g)});
    }
  }
  models::write_safetensors((dir / "model.safetensors").string(), tensors);
  return dir.string();
}

// A DuoAttention pattern as mit-han-lab/duo-attention publishes it (config.json with sink_size 2 and
// recent_size 4, full_attention_heads.tsv with a row of KV-head scores per layer).
inline std::string duo_pattern_dir(int64_t layers, int64_t kv_heads) {
  const std::filesystem::path dir = artefact_path("kvbench_duo_" + std::to_string(layers) + "x" + std::to_string(kv_heads));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"sink_size": 2, "recent_size": 4})";
  std::ofstream tsv(dir / "full_attention_heads.tsv");
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t h = 0; h < kv_heads; ++h) tsv << ((l * 7 + h * 3) % 10) / 10.0 << (h + 1 < kv_heads ? "\t" : "\n");
  return dir.string();
}

// RestoreKV's artefacts as higokri/RestoreKV-<model> holds them: restore_embeddings.safetensors (8
// rows) and a PEFT LoRA adapter (r 4, alpha 8) on every projection of every layer, written per shape.
inline std::string restorekv_dir(const models::ModelConfig& model) {
  const std::filesystem::path dir = artefact_path("kvbench_restorekv_" + std::to_string(model.n_layers) + "x" + std::to_string(model.dim));
  std::filesystem::create_directories(dir);
  at::Generator g = at::detail::createCPUGenerator(model.n_layers * 13 + model.dim);
  models::write_safetensors((dir / "restore_embeddings.safetensors").string(), {{"restore_embeddings", torch::randn({8, model.dim}, g)}});
  std::ofstream(dir / "adapter_config.json") << R"({"peft_type": "LORA", "r": 4, "lora_alpha": 8, "use_rslora": false, "task_type": "CAUSAL_LM"})";
  const int64_t q = model.n_heads * model.head_dim, kv = model.n_kv_heads * model.head_dim;
  const std::vector<std::tuple<std::string, int64_t, int64_t>> projections = {
      {"self_attn.q_proj", q, model.dim},   {"self_attn.k_proj", kv, model.dim},          {"self_attn.v_proj", kv, model.dim},
      {"self_attn.o_proj", model.dim, q},   {"mlp.gate_proj", model.hidden_dim, model.dim}, {"mlp.up_proj", model.hidden_dim, model.dim},
      {"mlp.down_proj", model.dim, model.hidden_dim}};
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (int64_t l = 0; l < model.n_layers; ++l)
    for (const auto& [name, out, in] : projections) {
      const std::string stem = "base_model.model.model.layers." + std::to_string(l) + "." + name;
      tensors.push_back({stem + ".lora_A.weight", torch::randn({4, in}, g) * 0.1});
      tensors.push_back({stem + ".lora_B.weight", torch::randn({out, 4}, g) * 0.1});
    }
  models::write_safetensors((dir / "adapter_model.safetensors").string(), tensors);
  return dir.string();
}

// An LU-KV budget curve as np.save writes it: float64 [99, layers, kv_heads], prune ratio row/100.
inline std::string lukv_curve_file(int64_t layers, int64_t kv_heads) {
  const std::filesystem::path file = artefact_path("kvbench_lukv_" + std::to_string(layers) + "x" + std::to_string(kv_heads) + ".npy");
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (99, " + std::to_string(layers) + ", " +
                       std::to_string(kv_heads) + "), }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream out(file, std::ios::binary);
  out << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(header.size() & 0xff) << static_cast<char>(header.size() >> 8)
      << header;
  for (int64_t row = 0; row < 99; ++row)
    for (int64_t i = 0; i < layers * kv_heads; ++i) {
      const double ratio = (row + 1) / 100.0;
      out.write(reinterpret_cast<const char*>(&ratio), sizeof ratio);
    }
  return file.string();
}

// The parameters a policy needs beyond its defaults to run on this model.
inline nlohmann::json runnable_params(const std::string& policy, const models::ModelConfig& model) {
  nlohmann::json p = nlohmann::json::object();
  const bool kvpress = policy.rfind("kvpress:", 0) == 0;
  if (policy == "qfilter" || (kvpress && policy.find("qfilter") != std::string::npos))
    p["q_filters"] = q_filters_file(model.n_layers, model.n_kv_heads, model.head_dim);
  if (policy == "kvzap" || policy == "kvpress:dms" || (kvpress && policy.find("kvzap") != std::string::npos))
    p["kvzap_model"] = kvzap_dir(policy.find("linear") != std::string::npos ? "linear" : "mlp", model.n_layers, model.dim,
                                 model.n_kv_heads);
  if (thresholded(policy)) p["threshold"] = 0.0;
  if (policy == "rkv") p["window_size"] = 4;
  if (policy == "finch" || policy == "kvpress:finch") p["window_size"] = 4;  // no question in these prompts
  // FastKVzip's gates as the published files are (torch.save), written by its recorder for
  // stories260K's shape (scripts/policy_parity/kvpress_fastkvzip.py): no C++ writes that format.
  if ((policy == "fastkvzip" || policy == "kvpress:fastkvzip") && model.n_layers == 5 && model.n_heads == 8 && model.n_kv_heads == 4 &&
      model.dim == 64)
    p["gates"] = std::string(KVBENCH_TESTS_DIR) + "/fixtures/policy_parity/fastkvzip/stories260k/q2_dim16_sink16.pt";
  if (policy == "kvpress:RestoreKV" || policy == "kvpress:RestoreKV_plus") p["restore_model"] = restorekv_dir(model);
  if (policy == "kvpress:lukv") p["budget_curve"] = lukv_curve_file(model.n_layers, model.n_kv_heads);
  if (policy == "duo_attention" || policy == "kvpress:duo_attention") {
    p["attn_pattern"] = duo_pattern_dir(model.n_layers, model.n_kv_heads);
    p["head_compression_ratio"] = 0.5;
  }
  if (policy == "kvpress:duo_attention_on_the_fly") {  // calibrated on a few chapters of a corpus in BookSum's shape
    p["corpus"] = std::string(KVBENCH_TESTS_DIR) + "/fixtures/policy_parity/duo_on_the_fly/booksum_shaped.jsonl";
    p["num_samples"] = 5;
    p["sink_size"] = 2;
    p["recent_size"] = 4;
    p["head_compression_ratio"] = 0.5;
  }
  return p;
}

// Presses that score a whole prompt once (kvpress's CompactorPress, FinchPress, and the ones that
// rescore it with more forwards: KVComposePress, KVzipPress): under the decode or stream protocol
// they refuse with one clear error the first time they must evict, so the tests that run every
// policy under those protocols leave them out (their own test checks the refusal).
inline bool prefill_only(const std::string& policy) {
  if (policy == "kvpress:compactor" || policy == "kvpress:adakv_compactor" || policy == "finch" || policy == "kvpress:finch")
    return true;
  try {  // built as the tests build it: a learned press reads its artefacts when it is made
    static const models::ModelConfig stories = models::load_model("stories260K").config;
    // A calibration before the prompt (standalone: DuoAttention on the fly) leaves decoding free.
    const policies::ContextRescoring* rescoring = policies::make_policy(policy, runnable_params(policy, stories))->rescoring();
    return rescoring && !rescoring->standalone();
  } catch (const std::invalid_argument&) {
    return false;  // a policy kvbench refuses to build (kvpress's cam_adakv_snapkv): none of these
  }
}

}  // namespace kvbench::testing
