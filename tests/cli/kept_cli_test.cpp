// `kvbench kept` on stories260K: the positions each head keeps equal kvpress's rule for
// kvpress:knorm (the lowest key norms) and kvpress:observed_attention (the mean attention a token
// received from the queries that saw it, averaged over each KV head's query heads), both computed
// here from a float64 forward written independently of models/ (llama2.c's interleaved RoPE); and
// kvpress:finch with a fixed window (the attention of the prompt's last w tokens to the others, row i
// multiplied by the T − w + i tokens it sees, the window itself kept).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>
#include <sstream>

#include "cli/run_binary.hpp"
#include "harness/temp_dir.hpp"
#include "models/model_loader.hpp"

namespace kvbench::testing {
namespace {

using torch::Tensor;


struct Float64Layer {
  Tensor keys;   // [kv_heads, T, head_dim], rotated
  Tensor probs;  // [heads, T, T], causal softmax
};

// llama2.c's forward in float64 (RMSNorm, interleaved RoPE, GQA attention, SwiGLU MLP).
std::vector<Float64Layer> float64_forward(const models::LoadedModel& m, const std::vector<int64_t>& ids) {
  const models::ModelConfig& c = m.config;
  const int64_t T = static_cast<int64_t>(ids.size()), d = c.head_dim, H = c.n_heads, KV = c.n_kv_heads;
  auto f64 = [](const Tensor& t) { return t.to(torch::kFloat64); };
  auto rms = [&](const Tensor& x, const Tensor& w) { return f64(w) * (x / torch::sqrt(x.square().mean(-1, true) + c.norm_eps)); };
  Tensor freq = torch::pow(c.rope_theta, -torch::arange(0, d, 2, torch::kFloat64) / static_cast<double>(d));
  Tensor angle = torch::outer(torch::arange(T, torch::kFloat64), freq);  // [T, d/2]
  auto rotate = [&](const Tensor& t) {  // [n, T, d]: pairs (2i, 2i+1) turned by angle[:, i]
    Tensor a = t.slice(-1, 0, d, 2), b = t.slice(-1, 1, d, 2);
    return torch::stack({a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()}, -1).flatten(-2);
  };
  auto heads = [&](const Tensor& h, const Tensor& w, int64_t n) { return torch::matmul(h, f64(w).t()).reshape({T, n, d}).transpose(0, 1); };
  Tensor x = f64(m.weights.embedding.index_select(0, torch::tensor(ids)));
  std::vector<Float64Layer> layers;
  for (const models::LayerWeights& w : m.weights.layers) {
    Tensor h = rms(x, w.attn_norm);
    Tensor q = rotate(heads(h, w.wq, H)), k = rotate(heads(h, w.wk, KV)), v = heads(h, w.wv, KV);
    Tensor k_rep = k.repeat_interleave(H / KV, 0), v_rep = v.repeat_interleave(H / KV, 0);
    Tensor logits = torch::matmul(q, k_rep.transpose(1, 2)) / std::sqrt(static_cast<double>(d));
    logits.masked_fill_(torch::ones({T, T}, torch::kBool).triu(1), -INFINITY);
    Tensor probs = logits.softmax(-1);
    x = x + torch::matmul(torch::matmul(probs, v_rep).transpose(0, 1).reshape({T, H * d}), f64(w.wo).t());
    Tensor g = rms(x, w.ffn_norm);
    x = x + torch::matmul(torch::silu(torch::matmul(g, f64(w.w_gate).t())) * torch::matmul(g, f64(w.w_up).t()), f64(w.w_down).t());
    layers.push_back({k, probs});
  }
  return layers;
}

// Compares kvbench's kept positions of one head with the top `kept` of `scores` [T] (float64):
// equal, except among tokens whose score is within a hair of the boundary (float32 vs float64).
// Returns whether the boundary was that close.
bool expect_top(const std::vector<int64_t>& ours, const Tensor& scores, int64_t kept, const std::string& where) {
  std::vector<int64_t> order(scores.size(0));
  std::iota(order.begin(), order.end(), 0);
  auto s = scores.accessor<double, 1>();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  const double boundary = s[order[kept - 1]], next = s[order[kept]];
  const double eps = 1e-5 * std::max(1.0, std::abs(boundary));
  std::set<int64_t> want, near;
  for (int64_t i = 0; i < static_cast<int64_t>(order.size()); ++i) {
    if (std::abs(s[order[i]] - boundary) <= eps || std::abs(s[order[i]] - next) <= eps) near.insert(order[i]);
    else if (i < kept) want.insert(order[i]);
  }
  std::set<int64_t> got(ours.begin(), ours.end()), got_outside;
  for (int64_t p : got)
    if (!near.count(p)) got_outside.insert(p);
  EXPECT_EQ(static_cast<int64_t>(got.size()), kept) << where;
  EXPECT_EQ(got_outside, want) << where;
  return std::abs(boundary - next) <= eps;
}

nlohmann::json kept_json(const std::string& policy, const std::string& budget, int tokens, const std::string& params = "") {
  CommandResult r = run_kvbench("kept --text-file " + kTinyStories + " --max-tokens " + std::to_string(tokens) + " --policy " +
                                policy + (params.empty() ? "" : " --policy-params '" + params + "'") + " --budget " + budget + " --json 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output);
}

class KeptCli : public ::testing::Test {
 protected:
  void check(const std::string& policy, const std::function<Tensor(const Float64Layer&, int64_t kv_heads)>& rule,
             const std::string& params = "") {
    const double ratio = 0.6;
    const nlohmann::json out = kept_json(policy, "ratio:0.6", 160, params);
    const std::vector<int64_t> ids = out["ids"];
    const models::LoadedModel m = models::load_model("stories260K");
    const std::vector<Float64Layer> layers = float64_forward(m, ids);
    const int64_t T = static_cast<int64_t>(ids.size()), kept = static_cast<int64_t>(static_cast<double>(T) * (1 - ratio));
    ASSERT_EQ(out["layers"].size(), layers.size());
    int strict = 0, selections = 0;
    for (size_t l = 0; l < layers.size(); ++l) {
      const Tensor scores = rule(layers[l], m.config.n_kv_heads);  // [kv_heads, T]
      ASSERT_EQ(out["layers"][l].size(), static_cast<size_t>(m.config.n_kv_heads));
      for (int64_t h = 0; h < m.config.n_kv_heads; ++h, ++selections)
        strict += !expect_top(out["layers"][l][h], scores[h], kept, policy + " layer " + std::to_string(l) + " head " + std::to_string(h));
    }
    // Ties do occur (a token repeated in the text has one key norm in layer 0: RoPE keeps norms),
    // but most selections must have a clear boundary for the test to mean much.
    EXPECT_GE(4 * strict, 3 * selections) << "too many near-ties";
  }
};

TEST_F(KeptCli, KnormKeepsTheLowestKeyNormsOfAFloat64Forward) {
  check("kvpress:knorm", [](const Float64Layer& l, int64_t) { return l.keys.norm(2, -1).neg(); });
}

TEST_F(KeptCli, ObservedAttentionKeepsTheMostAttendedTokensOfAFloat64Forward) {
  check("kvpress:observed_attention", [](const Float64Layer& l, int64_t kv_heads) {
    const int64_t H = l.probs.size(0), T = l.probs.size(1);
    Tensor seen_by = torch::arange(T, 0, -1, torch::kFloat64);  // token j is seen by the T − j queries from j on
    Tensor mean = l.probs.sum(1) / seen_by;                         // [H, T]
    return mean.reshape({kv_heads, H / kv_heads, T}).mean(1);
  });
}

TEST_F(KeptCli, FinchKeepsWhatItsWindowAttendsMostOfAFloat64Forward) {
  const int64_t w = 16;
  check("kvpress:finch", [w](const Float64Layer& l, int64_t kv_heads) {
    const int64_t H = l.probs.size(0), T = l.probs.size(1);
    Tensor rows = l.probs.slice(1, T - w, T).slice(2, 0, T - w) * torch::arange(T - w, T, torch::kFloat64).reshape({1, w, 1});
    Tensor scores = rows.mean(1).reshape({kv_heads, H / kv_heads, T - w}).mean(1);
    return torch::cat({scores, torch::full({kv_heads, w}, INFINITY, torch::kFloat64)}, 1);  // the window is kept
  }, R"({"window_size": 16})");
}

// The page escapes the text it shows and shades every token of every layer.
TEST(KeptCliPage, HtmlShowsEveryLayerAndEscapesTheText) {
  TempDir dir;
  const std::string text = dir / "text.txt", page = dir / "kept.html";
  std::ofstream(text) << "Tom said <b>hi</b> & \"bye\" to the dog.";
  CommandResult r = run_kvbench("kept --text-file " + text + " --policy kvpress:knorm --budget 50% --html " + page + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("layer 4: 4 heads keep"), std::string::npos) << r.output;
  std::ifstream in(page);
  std::stringstream html;
  html << in.rdbuf();
  const std::string s = html.str();
  EXPECT_EQ(s.find("<b>"), std::string::npos);
  EXPECT_NE(s.find("&lt;"), std::string::npos);
  EXPECT_NE(s.find("<h2>layer 4</h2>"), std::string::npos);
  EXPECT_NE(s.find("kept by 0% of heads"), std::string::npos);
  EXPECT_NE(s.find("kept by 100% of heads"), std::string::npos);
}

TEST(KeptCliPage, AnUnknownPolicyIsOneError) {
  CommandResult r = run_kvbench("kept --text-file " + kTinyStories + " --policy kvpress:nope --budget 50% 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("unknown policy 'kvpress:nope'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kvbench::testing
