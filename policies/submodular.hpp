#pragma once
// The submodular machinery of BumbleBee (bumblebee.txt §4–5, App. D–E): a mixture
//   g_λ(A) = λ·f_FL(A)/f_FL(V) + (1−λ)·c(A)/c(V)
// of facility location over ReLU(cosine) similarities of the keys (eq. 2) and a feature-based
// function c(A) = ϕ(Σ_{v∈A} a_v) of the accumulated attention (eq. 3, one feature: |U| = 1),
// both normalised to [0, 1] as §5 requires, and the greedy maximisers of Alg. 1.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kvbench::policies::submodular {

// ϕ, monotone non-decreasing concave with ϕ(0) = 0: log(1+x) (♥), or the power-based inverse of
// g(y) = α·y^(1/α) + β·y (♦, α = 0.04, β = 1 in the paper).
struct Concave {
  enum class Kind { kLog, kPower } kind = Kind::kLog;
  double alpha = 0.04;
  double beta = 1.0;
  double operator()(double x) const;
  // Elementwise on a float64 tensor, on its device: the same operations (the power form's
  // bisection stops per element where the scalar one does).
  torch::Tensor operator()(const torch::Tensor& x) const;
  static Concave parse(const std::string& name, double alpha, double beta);  // "log" | "power"
};

// Keys [..., d] as float64 unit rows on the keys' device (the norm clamped at 1e-12).
torch::Tensor unit_rows(const torch::Tensor& keys);

// sim[i][j] = max(0, cos(k_i, k_j)) for keys [n, d] -> [n, n] float64 on the keys' device.
torch::Tensor relu_cosine_similarity(const torch::Tensor& keys);

// The mixture over a ground set V of n items (sim [n, n], weights a [n] ≥ 0).
class Mixture {
 public:
  Mixture(torch::Tensor sim, torch::Tensor weights, double lambda, Concave phi);
  int64_t size() const { return n_; }
  double value(const std::vector<int64_t>& subset) const;  // g_λ(A) ∈ [0, 1]

  // Incremental state for greedy: coverage[v] = max_{a∈A} sim(v, a), weight sum of A.
  struct State {
    std::vector<double> coverage;
    double weight_sum = 0;
    std::vector<int64_t> chosen;
  };
  State empty_state() const;
  double gain(const State& state, int64_t item) const;  // g(A ∪ {item}) − g(A)
  void add(State& state, int64_t item) const;

 private:
  int64_t n_;
  torch::Tensor sim_;  // contiguous float64
  std::vector<double> weights_;
  double lambda_;
  Concave phi_;
  double fl_norm_;  // f_FL(V)
  double c_norm_;   // c(V)
};

enum class Greedy { kNaive, kLazy, kStochastic };
Greedy parse_greedy(const std::string& name);  // naive | lazy | stochastic

// Alg. 1: a size-k subset of `candidates` maximising the mixture greedily. Lazy greedy (Minoux)
// returns the same set as naive greedy; stochastic greedy (Mirzasoleiman et al. 2015) evaluates
// ⌈(n/k)·ln(1/ε)⌉ random candidates per step. Returns the chosen items in selection order.
std::vector<int64_t> maximize(const Mixture& g, const std::vector<int64_t>& candidates, int64_t k, Greedy method,
                              double epsilon, uint64_t seed);

}  // namespace kvbench::policies::submodular
