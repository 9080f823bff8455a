#pragma once
// Which kernel computes attention's output: the choice `kvbench bench --attention` and a bench
// cell's "attention" make, carried from SessionOptions through CacheControl to attend().
#include <string>
#include <vector>

namespace kvbench::models {

enum class AttentionPath {
  kAuto,     // the fused kernel where libtorch has one (>= 2) and no statistics are needed
  kChunked,  // always the matmul-softmax (to compare the kernels)
  kSplitK,   // a decoding query on CUDA through kvbench's split-K kernel where it applies, else as kAuto
};

// "auto", "chunked", "split_k", in the enum's order.
const std::vector<std::string>& attention_path_names();
const std::string& attention_path_name(AttentionPath path);
// Throws std::invalid_argument naming the accepted names.
AttentionPath parse_attention_path(const std::string& name);

// Whether this build has the split-K kernel (a CUDA build with a CUDA compiler: KVBENCH_SPLIT_K_DECODE).
bool split_k_decode_built();

}  // namespace kvbench::models
