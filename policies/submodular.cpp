#include "policies/submodular.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <random>
#include <stdexcept>

namespace kvbench::policies::submodular {

double Concave::operator()(double x) const {
  if (x <= 0) return 0;
  if (kind == Kind::kLog) return std::log1p(x);
  // Solve α·y^(1/α) + β·y = x for y ≥ 0 by bisection: g is increasing and g(x/β) ≥ x.
  double lo = 0, hi = x / beta;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    const double g = alpha * std::pow(mid, 1.0 / alpha) + beta * mid;
    (g < x ? lo : hi) = mid;
    if (hi - lo <= 1e-15 * std::max(1.0, hi)) break;
  }
  return 0.5 * (lo + hi);
}

Concave Concave::parse(const std::string& name, double alpha, double beta) {
  Concave c;
  c.alpha = alpha;
  c.beta = beta;
  if (name == "log") c.kind = Kind::kLog;
  else if (name == "power") c.kind = Kind::kPower;
  else throw std::invalid_argument("bumblebee: phi must be log or power, got '" + name + "'");
  if (c.kind == Kind::kPower && (alpha <= 0 || beta <= 0)) throw std::invalid_argument("bumblebee: alpha, beta must be > 0");
  return c;
}

torch::Tensor Concave::operator()(const torch::Tensor& x) const {
  const torch::Tensor positive = x > 0;
  if (kind == Kind::kLog) return torch::where(positive, torch::log1p(x), torch::zeros_like(x));
  torch::Tensor lo = torch::zeros_like(x), hi = x / beta;
  torch::Tensor active = positive.clone();
  for (int i = 0; i < 200; ++i) {
    const torch::Tensor mid = 0.5 * (lo + hi);
    const torch::Tensor g = alpha * mid.pow(1.0 / alpha) + beta * mid;
    const torch::Tensor below = g < x;
    lo = torch::where(active.logical_and(below), mid, lo);
    hi = torch::where(active.logical_and(below.logical_not()), mid, hi);
    active = active.logical_and((hi - lo > 1e-15 * hi.clamp_min(1.0)));
  }
  return torch::where(positive, 0.5 * (lo + hi), torch::zeros_like(x));
}

torch::Tensor unit_rows(const torch::Tensor& keys) {
  torch::Tensor k = keys.to(torch::kFloat64);
  return k / k.norm(2, -1, true).clamp_min(1e-12);
}

torch::Tensor relu_cosine_similarity(const torch::Tensor& keys) {
  torch::Tensor unit = unit_rows(keys);
  return torch::relu(torch::matmul(unit, unit.t())).contiguous();
}

Mixture::Mixture(torch::Tensor sim, torch::Tensor weights, double lambda, Concave phi)
    : n_(sim.size(0)), sim_(sim.to(torch::kCPU, torch::kFloat64).contiguous()), lambda_(lambda), phi_(phi) {
  torch::Tensor w = weights.to(torch::kCPU, torch::kFloat64).clamp_min(0).contiguous();
  weights_.assign(w.data_ptr<double>(), w.data_ptr<double>() + n_);
  // f_FL(V) = Σ_v max_u sim(v, u); c(V) = ϕ(Σ a). Guard the degenerate zero cases.
  fl_norm_ = std::get<0>(sim_.max(1)).sum().item<double>();
  double total = 0;
  for (double a : weights_) total += a;
  c_norm_ = phi_(total);
  if (fl_norm_ <= 0) fl_norm_ = 1;
  if (c_norm_ <= 0) c_norm_ = 1;
}

Mixture::State Mixture::empty_state() const { return {std::vector<double>(n_, 0.0), 0.0, {}}; }

double Mixture::gain(const State& state, int64_t item) const {
  const double* row = sim_.data_ptr<double>() + item * n_;  // symmetric: sim(v, item) = row[v]
  double fl = 0;
  for (int64_t v = 0; v < n_; ++v) fl += std::max(0.0, row[v] - state.coverage[v]);
  const double c = phi_(state.weight_sum + weights_[item]) - phi_(state.weight_sum);
  return lambda_ * fl / fl_norm_ + (1 - lambda_) * c / c_norm_;
}

void Mixture::add(State& state, int64_t item) const {
  const double* row = sim_.data_ptr<double>() + item * n_;
  for (int64_t v = 0; v < n_; ++v) state.coverage[v] = std::max(state.coverage[v], row[v]);
  state.weight_sum += weights_[item];
  state.chosen.push_back(item);
}

double Mixture::value(const std::vector<int64_t>& subset) const {
  State s = empty_state();
  for (int64_t i : subset) add(s, i);
  double fl = 0;
  for (double c : s.coverage) fl += c;
  return lambda_ * fl / fl_norm_ + (1 - lambda_) * phi_(s.weight_sum) / c_norm_;
}

Greedy parse_greedy(const std::string& name) {
  if (name == "naive") return Greedy::kNaive;
  if (name == "lazy") return Greedy::kLazy;
  if (name == "stochastic") return Greedy::kStochastic;
  throw std::invalid_argument("bumblebee: greedy must be naive, lazy or stochastic, got '" + name + "'");
}

std::vector<int64_t> maximize(const Mixture& g, const std::vector<int64_t>& candidates, int64_t k, Greedy method,
                              double epsilon, uint64_t seed) {
  k = std::min<int64_t>(k, static_cast<int64_t>(candidates.size()));
  Mixture::State state = g.empty_state();
  if (k <= 0) return {};
  if (method == Greedy::kLazy) {
    // Minoux's lazy greedy: stale gains are upper bounds (submodularity); re-evaluate the top one
    // until it stays on top. Ties go to the earlier candidate, as in naive greedy.
    using Entry = std::pair<double, int64_t>;  // (gain, -position)
    std::priority_queue<Entry> heap;
    for (size_t p = 0; p < candidates.size(); ++p) heap.push({g.gain(state, candidates[p]), -static_cast<int64_t>(p)});
    std::vector<int64_t> fresh_at(candidates.size(), 0);
    while (static_cast<int64_t>(state.chosen.size()) < k && !heap.empty()) {
      auto [gain, neg_pos] = heap.top();
      heap.pop();
      const size_t p = static_cast<size_t>(-neg_pos);
      const int64_t round = static_cast<int64_t>(state.chosen.size());
      if (fresh_at[p] == round) {
        g.add(state, candidates[p]);
        continue;
      }
      fresh_at[p] = round;
      heap.push({g.gain(state, candidates[p]), neg_pos});
    }
    return state.chosen;
  }
  std::vector<char> taken(candidates.size(), 0);
  std::mt19937_64 rng(seed);
  const int64_t n = static_cast<int64_t>(candidates.size());
  const int64_t sample = method == Greedy::kStochastic
                             ? static_cast<int64_t>(std::ceil(static_cast<double>(n) / k * std::log(1.0 / epsilon)))
                             : n;
  std::vector<size_t> pool;
  for (int64_t round = 0; round < k; ++round) {
    pool.clear();
    for (size_t p = 0; p < candidates.size(); ++p)
      if (!taken[p]) pool.push_back(p);
    if (sample < static_cast<int64_t>(pool.size())) {
      // A uniform sample without replacement, kept in candidate order so ties go to the earlier one.
      std::shuffle(pool.begin(), pool.end(), rng);
      pool.resize(sample);
      std::sort(pool.begin(), pool.end());
    }
    size_t best = pool.front();
    double best_gain = -1;
    for (size_t p : pool) {
      const double gain = g.gain(state, candidates[p]);
      if (gain > best_gain) best_gain = gain, best = p;
    }
    taken[best] = 1;
    g.add(state, candidates[best]);
  }
  return state.chosen;
}

}  // namespace kvbench::policies::submodular
