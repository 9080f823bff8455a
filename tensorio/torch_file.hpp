#pragma once
// A file torch.save wrote (the zip archive of torch >= 1.6: <name>/data.pkl, the pickle, and
// <name>/data/<key>, one stored entry per storage), read without running anything: a small
// unpickler builds tensors (torch._utils._rebuild_tensor_v2 / _rebuild_parameter over the
// archive's storages), dicts and OrderedDicts, lists, tuples, strings, numbers, booleans and None;
// any other global (a NumPy array saved beside the tensors, an argparse Namespace) becomes an opaque
// value that calls and state leave opaque, so such a file still reads and only what the caller
// looks at must be tensors. Untrusted input: every length and index is checked against the file,
// and each error names the file and what is wrong (ModelLoadError).
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kvbench::models {

struct PickleValue;
using PickleRef = std::shared_ptr<PickleValue>;

struct PickleValue {
  enum class Kind { kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict, kTensor, kGlobal, kOpaque };
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0.0;
  std::string text;                                // a string or bytes; a global's or opaque's "module.name"
  std::vector<PickleRef> items;                    // list, tuple
  std::vector<std::pair<PickleRef, PickleRef>> entries;  // dict, in insertion order
  torch::Tensor tensor;

  // Frees nested values without recursing: a hostile pickle nests a million lists in two bytes each.
  ~PickleValue();
  // The dict's value at string key `key`, or null.
  const PickleValue* get(const std::string& key) const;
  static const char* kind_name(Kind kind);
};

// The object torch.save wrote to `path`.
PickleRef read_torch_file(const std::string& path);

}  // namespace kvbench::models
