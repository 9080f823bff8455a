// safetensors: the 8-byte header length, the JSON header, dtypes, shapes, data_offsets
// (bounds, sizes, overlaps), then every tensor read back.
// fuzz-sources: tensorio/safetensors.cpp tensorio/mapped_file.cpp datasets/json_parse.cpp datasets/regular_file.cpp
// fuzz-torch
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input_file.hpp"
#include "tokenizers/model_error.hpp"
#include "tensorio/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvbench::fuzz::InputFile file(data, size);
  try {
    const auto st = kvbench::models::SafetensorsFile::open(file.path());
    for (const auto& name : st.names()) {
      torch::Tensor t = st.tensor(name);
      if (t.numel() > 0) (void)t.flatten()[t.numel() - 1].item<double>();  // touches the last byte
    }
  } catch (const kvbench::models::ModelLoadError&) {
  }
  return 0;
}
