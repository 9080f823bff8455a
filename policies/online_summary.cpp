#include "policies/online_summary.hpp"

#include <algorithm>
#include <limits>

namespace kvbench::policies {

void OnlineSummary::reserve(int64_t rows, int64_t head_dim) {
  if (rows <= capacity_) return;
  // The similarity buffer is quadratic: grow by a quarter, not by doubling.
  const int64_t capacity = std::max(rows, capacity_ + capacity_ / 4 + 16);
  const int64_t kvh = static_cast<int64_t>(heads_.size());
  torch::Tensor sim = torch::zeros({kvh, capacity, capacity}, torch::kFloat64);
  torch::Tensor unit = torch::zeros({kvh, capacity, head_dim}, torch::kFloat64);
  if (capacity_ > 0) {
    sim.narrow(1, 0, capacity_).narrow(2, 0, capacity_).copy_(sim_);
    unit.narrow(1, 0, capacity_).copy_(unit_);
  }
  sim_ = sim;
  unit_ = unit;
  capacity_ = capacity;
  for (Head& head : heads_) {
    head.taken.resize(capacity, 0);
    head.member.resize(capacity, 0);
    head.nearest.resize(capacity, 0.0);
    head.nearest_row.resize(capacity, -1);
  }
}

void OnlineSummary::forget(Head& head) const {
  head.free_rows.clear();
  for (int64_t r = head.rows - 1; r >= 0; --r) head.free_rows.push_back(r);  // lowest rows first
  std::fill(head.taken.begin(), head.taken.end(), 0);
  std::fill(head.member.begin(), head.member.end(), 0);
  std::fill(head.nearest.begin(), head.nearest.end(), 0.0);
  std::fill(head.nearest_row.begin(), head.nearest_row.end(), -1);
  head.members = 0;
}

std::vector<int64_t> OnlineSummary::place(int64_t h, const torch::Tensor& keys, const std::vector<int64_t>& slots) {
  const int64_t t = static_cast<int64_t>(slots.size());
  std::vector<int64_t> rows(t);
  if (t == 0) return rows;
  {
    Head& head = heads_[h];
    for (int64_t c = 0; c < t; ++c) {
      if (head.free_rows.empty()) {
        rows[c] = head.rows++;
      } else {
        rows[c] = head.free_rows.back();
        head.free_rows.pop_back();
      }
    }
    reserve(head.rows, keys.size(-1));
  }
  Head& head = heads_[h];  // reserve() resized every head's vectors
  for (int64_t r : rows) head.taken[r] = 1;
  torch::Tensor at = torch::tensor(slots, torch::kInt64).to(keys.device());
  torch::Tensor unit = submodular::unit_rows(keys[h].index_select(0, at));  // [t, d]
  unit_[h].index_copy_(0, torch::tensor(rows, torch::kInt64), unit);
  // Against every row handed out (a free row holds a stale key: its products are not stored).
  const int64_t used = head.rows;
  torch::Tensor products = torch::relu(torch::matmul(unit_[h].narrow(0, 0, used), unit.t())).contiguous();  // [used, t]
  const double* p = products.data_ptr<double>();
  double* sim = sim_[h].data_ptr<double>();
  for (int64_t c = 0; c < t; ++c) {
    const int64_t y = rows[c];
    for (int64_t r = 0; r < used; ++r) {
      if (!head.taken[r]) continue;
      const double s = p[r * t + c];
      sim[r * capacity_ + y] = s;
      sim[y * capacity_ + r] = s;
    }
  }
  return rows;
}

void OnlineSummary::find_nearest(Head& head, const double* sim, int64_t i, const std::vector<int64_t>& summary) const {
  double best = 0;
  int64_t arg = -1;
  const double* row = sim + i * capacity_;
  for (int64_t j : summary)
    if (j != i && j >= 0 && head.member[j] && row[j] > best) best = row[j], arg = j;
  head.nearest[i] = best;
  head.nearest_row[i] = arg;
}

void OnlineSummary::join(Head& head, const double* sim, int64_t y, const std::vector<int64_t>& summary) const {
  for (int64_t i : summary) {
    if (i < 0 || !head.member[i]) continue;
    const double s = sim[i * capacity_ + y];
    if (s > head.nearest[i]) head.nearest[i] = s, head.nearest_row[i] = y;
  }
  find_nearest(head, sim, y, summary);
  head.member[y] = 1;
  ++head.members;
}

torch::Tensor OnlineSummary::discard(LayerCache& cache, const torch::Tensor& acc, int64_t window, int64_t k) {
  const int64_t kvh = cache.kv_heads(), n = cache.size();
  if (static_cast<int64_t>(heads_.size()) != kvh || !cache.has_state("bb_row")) {
    heads_.assign(kvh, Head{});
    capacity_ = 0;
    cache.state("bb_row", {}, torch::kInt64).zero_();
  }
  torch::Tensor state = cache.state("bb_row", {}, torch::kInt64);  // 1 + the slot's row; 0 for none
  torch::Tensor rows_by_slot = state.to(torch::kCPU).contiguous().clone();
  torch::Tensor order = cache.arrival_order().to(torch::kCPU).expand({kvh, n}).contiguous();
  torch::Tensor weights = acc.to(torch::kCPU, torch::kFloat64).contiguous();
  const torch::Tensor keys = cache.keys();
  const int64_t older = std::max<int64_t>(n - window, 0), e = std::max<int64_t>(older - k, 0);
  torch::Tensor evicted = torch::empty({kvh, e}, torch::kInt64);
  auto row_of = rows_by_slot.accessor<int64_t, 2>();
  auto slot_order = order.accessor<int64_t, 2>();
  auto a = weights.accessor<double, 2>();
  auto out = evicted.accessor<int64_t, 2>();
  for (int64_t h = 0; h < kvh; ++h) {
    // S' in arrival order (oldest first): slots, then their rows.
    std::vector<int64_t> slots(older), joiners;
    int64_t present = 0;
    for (int64_t p = 0; p < older; ++p) {
      slots[p] = slot_order[h][p];
      present += row_of[h][slots[p]] > 0;
    }
    if (present != heads_[h].members) {  // members left S' some other way: start the summary afresh
      forget(heads_[h]);
      for (int64_t j = 0; j < n; ++j) row_of[h][j] = 0;
    }
    for (int64_t slot : slots)
      if (row_of[h][slot] == 0) joiners.push_back(slot);
    const std::vector<int64_t> joined = place(h, keys, joiners);
    for (size_t c = 0; c < joiners.size(); ++c) row_of[h][joiners[c]] = joined[c] + 1;
    std::vector<int64_t> summary(older);
    for (int64_t p = 0; p < older; ++p) summary[p] = row_of[h][slots[p]] - 1;
    Head& head = heads_[h];
    const double* sim = sim_[h].data_ptr<double>();
    for (int64_t y : joined) join(head, sim, y, summary);
    for (int64_t r = 0; r < e; ++r) {
      double total = 0;
      for (int64_t p = 0; p < older; ++p)
        if (head.member[summary[p]]) total += std::max(0.0, a[h][slots[p]]);
      const double phi_total = phi_(total), c_norm = std::max(phi_total, 1e-300);
      const double m = static_cast<double>(head.members);
      int64_t worst = -1, first = -1;
      double worst_gain = std::numeric_limits<double>::infinity();
      for (int64_t p = 0; p < older; ++p) {
        const int64_t i = summary[p];
        if (!head.member[i]) continue;
        if (first < 0) first = p;
        // Ground set = S': f_FL(S') − f_FL(S' \ i) = sim(i,i) − max_{j≠i} sim(i,j), over |S'|.
        const double fl_gain = (sim[i * capacity_ + i] - head.nearest[i]) / m;
        const double c_gain = (phi_total - phi_(total - std::max(0.0, a[h][slots[p]]))) / c_norm;
        const double gain = lambda_ * fl_gain + (1 - lambda_) * c_gain;
        // Ties: discard the older element, keeping the newest information.
        if (gain < worst_gain) worst_gain = gain, worst = p;
      }
      if (worst < 0) worst = first;  // no gain below +inf (NaN): the oldest member
      const int64_t x = summary[worst];
      head.member[x] = 0;
      head.taken[x] = 0;
      --head.members;
      head.free_rows.push_back(x);  // its slot leaves the cache with its row
      out[h][r] = slots[worst];
      for (int64_t i : summary)
        if (i >= 0 && head.member[i] && head.nearest_row[i] == x) find_nearest(head, sim, i, summary);
    }
  }
  state.copy_(rows_by_slot);
  return evicted;
}

}  // namespace kvbench::policies
