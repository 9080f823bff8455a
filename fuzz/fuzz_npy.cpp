// .npy (the learned presses' curves, e.g. LU-KV's): magic, version, header length, the header's
// descr / fortran_order / shape, the element count against the bytes that follow.
// fuzz-sources: tensorio/npy.cpp tensorio/mapped_file.cpp
// fuzz-torch
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input_file.hpp"
#include "tensorio/npy.hpp"
#include "tokenizers/model_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvbench::fuzz::InputFile file(data, size);
  try {
    const torch::Tensor t = kvbench::models::read_npy(file.path());
    if (t.numel() > 0) (void)t.flatten()[t.numel() - 1].item<double>();  // touches the last element
  } catch (const kvbench::models::ModelLoadError&) {
  }
  return 0;
}
