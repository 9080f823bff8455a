// llama2.c checkpoints: the 7-int header (ranges, divisibility, the size it implies), then the
// weights as tensors.
// fuzz-sources: models/llama2c_loader.cpp datasets/regular_file.cpp
// fuzz-torch
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input_file.hpp"
#include "models/llama2c_loader.hpp"
#include "tokenizers/model_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvbench::fuzz::InputFile file(data, size);
  try {
    const auto ck = kvbench::models::load_llama2c(file.path());
    if (static_cast<int64_t>(ck.weights.layers.size()) != ck.config.n_layers) __builtin_trap();
  } catch (const kvbench::models::ModelLoadError&) {
  }
  return 0;
}
