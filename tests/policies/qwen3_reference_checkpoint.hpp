#pragma once
// The tiny random Qwen3 checkpoint tests/fixtures/qwen3_reference (scripts/make_qwen3_reference.py),
// loaded once per test process in float32 on the CPU: the model kvpress's recorders run on where a
// press needs a real forward (DuoAttention on the fly, RestoreKV).
#include <filesystem>

#include "models/model_loader.hpp"
#include "models/transformer.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::testing {

struct Qwen3ReferenceCheckpoint {
  models::LoadedModel loaded = models::load_model((std::filesystem::path(KVBENCH_TESTS_DIR) / "fixtures" / "qwen3_reference").string());
  models::Transformer model{loaded.config, models::to_device(loaded.weights, torch::kCPU, torch::kFloat32)};
  models::Tokenizer tokenizer{loaded.tokenizer_path};
};

inline const Qwen3ReferenceCheckpoint& qwen3_reference_checkpoint() {
  static const Qwen3ReferenceCheckpoint c;
  return c;
}

}  // namespace kvbench::testing
