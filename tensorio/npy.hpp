#pragma once
// NumPy's .npy format (numpy/lib/format.py, versions 1.0–3.0): the magic "\x93NUMPY", a version,
// a little-endian header length (2 bytes in 1.0, 4 in 2.0/3.0), a Python-literal dict
// {'descr': '<f8', 'fortran_order': False, 'shape': (99, 32, 8), } padded with spaces, then the raw
// data. kvbench reads little-endian floats and integers in C order (what np.save writes for such
// arrays; object arrays need pickle and are refused, as np.load(allow_pickle=False) refuses them).
#include <torch/torch.h>

#include <string>

namespace kvbench::models {

// The array as a tensor of its dtype (a copy). Throws ModelLoadError naming the file and the field.
torch::Tensor read_npy(const std::string& path);

}  // namespace kvbench::models
