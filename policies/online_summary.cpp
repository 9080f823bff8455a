#include "policies/online_summary.hpp"

#include <algorithm>
#include <limits>

namespace kvbench::policies {
namespace {

// ReLU(a · bᵀ) for a [m, d], b [t, d], as a batch of one: the same product (and rounding) as the
// batched similarity of every head at once.
torch::Tensor relu_products(const torch::Tensor& a, const torch::Tensor& b) {
  return torch::relu(torch::matmul(a.unsqueeze(0), b.t().unsqueeze(0))).squeeze(0);
}

}  // namespace

void OnlineSummary::reserve(int64_t ids, int64_t head_dim) {
  if (ids <= capacity_) return;
  // The similarity buffer is quadratic: grow by a quarter, not by doubling.
  const int64_t capacity = std::max(ids, capacity_ + capacity_ / 4 + 16);
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
    head.member.resize(capacity, 0);
    head.nearest.resize(capacity, 0.0);
    head.nearest_id.resize(capacity, -1);
  }
}

void OnlineSummary::rebuild(LayerCache& cache) {
  const int64_t kvh = cache.kv_heads(), n = cache.size();
  heads_.assign(kvh, Head{});
  capacity_ = 0;
  reserve(n + 16, cache.head_dim());
  torch::Tensor unit = submodular::unit_rows(cache.keys());  // [kvh, n, d]
  unit_.narrow(1, 0, n).copy_(unit);
  sim_.narrow(1, 0, n).narrow(2, 0, n).copy_(torch::relu(torch::matmul(unit, unit.transpose(1, 2))));
  for (Head& head : heads_) head.next_id = n;
  cache.state("bb_id", {}, torch::kInt64).copy_(torch::arange(1, n + 1, torch::kInt64).expand({kvh, n}));
}

void OnlineSummary::add_new_tokens(LayerCache& cache) {
  const int64_t kvh = cache.kv_heads(), n = cache.size();
  torch::Tensor state = cache.state("bb_id", {}, torch::kInt64);  // id + 1; 0 for a slot not seen yet
  torch::Tensor ids = state.to(torch::kCPU).contiguous();
  auto id = ids.accessor<int64_t, 2>();
  std::vector<std::vector<int64_t>> new_slots(kvh), new_ids(kvh);
  int64_t most = capacity_;
  for (int64_t h = 0; h < kvh; ++h) {
    Head& head = heads_[h];
    for (int64_t j = 0; j < n; ++j) {
      if (id[h][j] != 0) continue;
      int64_t fresh = head.next_id;
      if (!head.free_ids.empty()) {
        fresh = head.free_ids.back();
        head.free_ids.pop_back();
      } else {
        ++head.next_id;
      }
      id[h][j] = fresh + 1;
      new_slots[h].push_back(j);
      new_ids[h].push_back(fresh);
      most = std::max(most, fresh + 1);
    }
  }
  if (std::all_of(new_slots.begin(), new_slots.end(), [](const auto& s) { return s.empty(); })) return;
  reserve(most, cache.head_dim());
  state.copy_(ids);
  torch::Tensor keys = cache.keys();
  for (int64_t h = 0; h < kvh; ++h) {
    if (new_slots[h].empty()) continue;
    torch::Tensor slots = torch::tensor(new_slots[h], torch::kInt64), fresh = torch::tensor(new_ids[h], torch::kInt64);
    torch::Tensor unit = submodular::unit_rows(keys[h].index_select(0, slots.to(keys.device())));  // [t, d]
    unit_[h].index_copy_(0, fresh, unit);
    // Against every id handed out (a discarded token's id holds a stale key until it is reused:
    // its similarities are never read), so no gather of the live keys.
    const int64_t used = heads_[h].next_id;
    torch::Tensor products = relu_products(unit_[h].narrow(0, 0, used), unit);  // [used, t]
    torch::Tensor sim = sim_[h];
    // Columns first, then rows: between two new tokens a and b, sim(a, b) comes from b's column
    // of products, as when the matrix grew by a block.
    for (int64_t c = 0; c < products.size(1); ++c) sim.select(1, new_ids[h][c]).narrow(0, 0, used).copy_(products.select(1, c));
    for (int64_t c = 0; c < products.size(1); ++c) sim.select(0, new_ids[h][c]).narrow(0, 0, used).copy_(products.select(1, c));
  }
}

void OnlineSummary::find_nearest(Head& head, const double* sim, int64_t i, const std::vector<int64_t>& summary) const {
  double best = 0;
  int64_t arg = -1;
  const double* row = sim + i * capacity_;
  for (int64_t j : summary)
    if (j != i && head.member[j] && row[j] > best) best = row[j], arg = j;
  head.nearest[i] = best;
  head.nearest_id[i] = arg;
}

void OnlineSummary::join(Head& head, const double* sim, int64_t y, const std::vector<int64_t>& summary) const {
  for (int64_t i : summary) {
    if (!head.member[i]) continue;
    const double s = sim[i * capacity_ + y];
    if (s > head.nearest[i]) head.nearest[i] = s, head.nearest_id[i] = y;
  }
  find_nearest(head, sim, y, summary);
  head.member[y] = 1;
  ++head.members;
}

torch::Tensor OnlineSummary::discard(LayerCache& cache, const torch::Tensor& acc, int64_t window, int64_t k) {
  const int64_t kvh = cache.kv_heads(), n = cache.size();
  if (static_cast<int64_t>(heads_.size()) != kvh || !sim_.defined() || !cache.has_state("bb_id")) rebuild(cache);
  else add_new_tokens(cache);
  torch::Tensor ids = cache.state("bb_id", {}, torch::kInt64).to(torch::kCPU).contiguous();
  torch::Tensor order = cache.arrival_order().to(torch::kCPU).expand({kvh, n}).contiguous();
  torch::Tensor weights = acc.to(torch::kCPU, torch::kFloat64).contiguous();
  const int64_t older = std::max<int64_t>(n - window, 0), e = std::max<int64_t>(older - k, 0);
  torch::Tensor evicted = torch::empty({kvh, e}, torch::kInt64);
  auto id = ids.accessor<int64_t, 2>();
  auto slot_order = order.accessor<int64_t, 2>();
  auto a = weights.accessor<double, 2>();
  auto out = evicted.accessor<int64_t, 2>();
  for (int64_t h = 0; h < kvh; ++h) {
    Head& head = heads_[h];
    const double* sim = sim_[h].data_ptr<double>();
    // S' in arrival order (oldest first): ids and their slots.
    std::vector<int64_t> summary(older), slots(older);
    int64_t present = 0;
    for (int64_t p = 0; p < older; ++p) {
      slots[p] = slot_order[h][p];
      summary[p] = id[h][slots[p]] - 1;
      present += head.member[summary[p]];
    }
    if (present != head.members) {  // members left S' some other way: start the summary afresh
      std::fill(head.member.begin(), head.member.end(), 0);
      std::fill(head.nearest.begin(), head.nearest.end(), 0.0);
      std::fill(head.nearest_id.begin(), head.nearest_id.end(), -1);
      head.members = 0;
    }
    for (int64_t y : summary)
      if (!head.member[y]) join(head, sim, y, summary);
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
      --head.members;
      head.free_ids.push_back(x);  // its slot leaves the cache with its id
      out[h][r] = slots[worst];
      for (int64_t i : summary)
        if (head.member[i] && head.nearest_id[i] == x) find_nearest(head, sim, i, summary);
    }
  }
  return evicted;
}

}  // namespace kvbench::policies
