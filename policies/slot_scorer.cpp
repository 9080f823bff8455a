#include "policies/slot_scorer.hpp"

#include <stdexcept>

namespace kvbench::policies {

const torch::Tensor& observed_row(const std::map<int64_t, torch::Tensor>& rows, int64_t layer,
                                  const LayerCache& cache) {
  auto it = rows.find(layer);
  if (it == rows.end() || it->second.size(-1) != cache.size())
    throw std::logic_error("scorer: compress() without observe() of the same forward on layer " +
                           std::to_string(layer));
  return it->second;
}

}  // namespace kvbench::policies
