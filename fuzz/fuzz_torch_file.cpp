// torch.save archives (FastKVzip's gate files): the zip directory (zip64 included), stored entries,
// the pickle's opcodes, memo and marks, persistent storages and the tensors viewed over them.
// fuzz-sources: tensorio/torch_file.cpp tensorio/mapped_file.cpp
// fuzz-torch
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input_file.hpp"
#include "tensorio/torch_file.hpp"
#include "tokenizers/model_error.hpp"

namespace {

// Touches every tensor's last element, through dicts, lists and tuples (a memo can make a list
// hold itself: at most `budget` visits).
void touch(const kvbench::models::PickleValue& v, int& budget) {
  if (--budget < 0) return;
  if (v.tensor.defined() && v.tensor.numel() > 0) (void)v.tensor.flatten()[v.tensor.numel() - 1].item<double>();
  for (const auto& item : v.items) touch(*item, budget);
  for (const auto& [key, value] : v.entries) touch(*value, budget);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvbench::fuzz::InputFile file(data, size);
  try {
    int budget = 10000;
    touch(*kvbench::models::read_torch_file(file.path()), budget);
  } catch (const kvbench::models::ModelLoadError&) {
  }
  return 0;
}
