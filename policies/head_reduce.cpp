#include "policies/head_reduce.hpp"

#include <stdexcept>

namespace kvbench::policies {

HeadReduce parse_head_reduce(const std::string& name) {
  if (name == "mean") return HeadReduce::kMean;
  if (name == "max") return HeadReduce::kMax;
  if (name == "sum") return HeadReduce::kSum;
  throw std::invalid_argument("head_reduce must be mean, max or sum, got '" + name + "'");
}

params::Param head_reduce_param() {
  return params::Param::choice("head_reduce", "mean", {"mean", "max", "sum"},
                               "how a GQA group's query-head scores become their KV head's");
}

const char* to_string(HeadReduce mode) {
  switch (mode) {
    case HeadReduce::kMean: return "mean";
    case HeadReduce::kMax: return "max";
    case HeadReduce::kSum: return "sum";
  }
  return "?";
}

torch::Tensor reduce_to_kv_heads(const torch::Tensor& scores, int64_t n_kv_heads, HeadReduce mode) {
  const int64_t heads = scores.size(0);
  if (heads == n_kv_heads) return scores;
  if (heads % n_kv_heads != 0) throw std::invalid_argument("reduce_to_kv_heads: heads not a multiple of kv heads");
  std::vector<int64_t> shape{n_kv_heads, heads / n_kv_heads};
  for (int64_t d = 1; d < scores.dim(); ++d) shape.push_back(scores.size(d));
  torch::Tensor grouped = scores.reshape(shape);
  switch (mode) {
    case HeadReduce::kMean: return grouped.mean(1);
    case HeadReduce::kMax: return std::get<0>(grouped.max(1));
    case HeadReduce::kSum: return grouped.sum(1);
  }
  return grouped.mean(1);
}

}  // namespace kvbench::policies
