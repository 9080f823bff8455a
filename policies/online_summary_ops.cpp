#include "policies/online_summary_ops.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "policies/selection.hpp"

namespace kvbench::policies {

void OnlineSummaryOps::reserve(int64_t rows, int64_t kv_heads, int64_t head_dim, const torch::Device& device) {
  if (rows <= capacity_) return;
  const int64_t capacity = std::max(rows, capacity_ + capacity_ / 4 + 16);
  const auto doubles = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  torch::Tensor sim = torch::zeros({kv_heads, capacity, capacity}, doubles);
  torch::Tensor unit = torch::zeros({kv_heads, capacity, head_dim}, doubles);
  torch::Tensor member = torch::zeros({kv_heads, capacity}, doubles.dtype(torch::kBool));
  if (capacity_ > 0) {
    sim.narrow(1, 0, capacity_).narrow(2, 0, capacity_).copy_(sim_);
    unit.narrow(1, 0, capacity_).copy_(unit_);
    member.narrow(1, 0, capacity_).copy_(member_);
  }
  sim_ = sim;
  unit_ = unit;
  member_ = member;
  itself_ = torch::eye(capacity, doubles.dtype(torch::kBool));
  capacity_ = capacity;
}

torch::Tensor OnlineSummaryOps::join(const torch::Tensor& keys, const torch::Tensor& slots) {
  const int64_t kvh = slots.size(0), j = slots.size(1), d = keys.size(-1);
  // The lowest free rows (rows are storage: which ones does not change any choice).
  torch::Tensor rows = first_true_columns(member_.logical_not(), j);
  torch::Tensor unit = submodular::unit_rows(keys.gather(1, slots.unsqueeze(-1).expand({kvh, j, d})));  // [kvh, j, d]
  unit_.scatter_(1, rows.unsqueeze(-1).expand({kvh, j, d}), unit);
  // Against every row (a free row's products are stored and never read: it is no member).
  torch::Tensor products = torch::relu(torch::bmm(unit_, unit.transpose(1, 2)));  // [kvh, capacity, j]
  sim_.scatter_(2, rows.unsqueeze(1).expand({kvh, capacity_, j}), products);
  sim_.scatter_(1, rows.unsqueeze(2).expand({kvh, j, capacity_}), products.transpose(1, 2));
  member_.scatter_(1, rows, true);
  return rows;
}

torch::Tensor OnlineSummaryOps::least_gain(const torch::Tensor& rows, const torch::Tensor& weights) const {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t older = rows.size(1);
  const torch::Tensor in = member_.gather(1, rows);  // [kvh, older]: members, in arrival order
  const torch::Tensor a = torch::where(in, weights, torch::zeros_like(weights));
  const torch::Tensor total = a.cumsum(1).narrow(1, older - 1, 1);  // [kvh, 1], summed oldest first as the host path
  const torch::Tensor phi_total = phi_(total);
  // f_FL over S': sim(i,i) − max(0, max over the other members j of sim(i,j)), over |S'|.
  const torch::Tensor others = sim_.masked_fill(member_.logical_not().unsqueeze(1).logical_or(itself_), -inf);
  const torch::Tensor nearest = std::get<0>(others.max(2)).clamp_min(0.0).gather(1, rows);
  const torch::Tensor itself = sim_.diagonal(0, 1, 2).gather(1, rows);
  const torch::Tensor fl_gain = (itself - nearest) / static_cast<double>(members_);
  const torch::Tensor c_gain = (phi_total - phi_(total - a)) / phi_total.clamp_min(1e-300);
  const torch::Tensor gain = lambda_ * fl_gain + (1 - lambda_) * c_gain;
  // Ties: the oldest member; no gain below +inf (NaN): the oldest member.
  const torch::Tensor score = torch::where(in.logical_and(gain.eq(gain)), gain, torch::full_like(gain, inf));  // eq: not NaN
  const torch::Tensor lowest = score.argmin(1, /*keepdim=*/true);
  const torch::Tensor oldest_member = in.to(torch::kInt64).argmax(1, /*keepdim=*/true);
  return torch::where(score.gather(1, lowest) == inf, oldest_member, lowest);
}

torch::Tensor OnlineSummaryOps::discard(LayerCache& cache, const torch::Tensor& acc, int64_t window, int64_t k) {
  const int64_t kvh = cache.kv_heads(), n = cache.size();
  const auto device = cache.keys().device();
  if (members_ < 0 || kv_heads_ != kvh || !cache.has_state("bb_row")) {  // start afresh
    members_ = 0;
    kv_heads_ = kvh;
    capacity_ = 0;
    cache.state("bb_row", {}, torch::kInt64).zero_();
  }
  torch::Tensor bb_row = cache.state("bb_row", {}, torch::kInt64);  // 1 + the slot's row; 0 for none
  const int64_t older = std::max<int64_t>(n - window, 0), e = std::max<int64_t>(older - k, 0);
  // S' = the tokens outside the window, oldest first: the members, and those that just left the window.
  const torch::Tensor order = cache.arrival_order().expand({kvh, n}).narrow(1, 0, older);
  torch::Tensor rows = bb_row.gather(1, order) - 1;  // -1: joins now
  const int64_t joining = older - members_;
  if (joining < 0) throw std::logic_error("bumblebee: the summary lost members it did not discard");
  reserve(older, kvh, cache.head_dim(), device);
  if (joining > 0) {
    const torch::Tensor at = first_true_columns(rows.lt(0), joining);  // oldest first
    const torch::Tensor slots = order.gather(1, at);
    const torch::Tensor joined = join(cache.keys(), slots);
    rows.scatter_(1, at, joined);
    bb_row.scatter_(1, slots, joined + 1);
    members_ = older;
  }
  if (e == 0) return torch::empty({kvh, 0}, torch::TensorOptions().dtype(torch::kInt64).device(device));
  const torch::Tensor weights = acc.to(torch::kFloat64).gather(1, order).clamp_min(0.0);  // a_i ≥ 0, arrival order
  std::vector<torch::Tensor> gone;
  for (int64_t r = 0; r < e; ++r) {
    const torch::Tensor worst = least_gain(rows, weights);  // [kvh, 1], a position in S'
    member_.scatter_(1, rows.gather(1, worst), false);      // its slot leaves the cache with its row
    --members_;
    gone.push_back(order.gather(1, worst));
  }
  return torch::cat(gone, 1);
}

}  // namespace kvbench::policies
