#pragma once
// Replays a parity fixture (tests/fixtures/policy_parity/<name>.json, recorded from the official
// code by scripts/policy_parity/<policy>.py) through a kvbench policy the way the runtime feeds
// it: per step the new tokens' keys join a LayerCache, models::attend computes the attention and
// the statistics the policy asks for, then observe() and compress(). After every step the kept
// positions of every KV head are compared, as sets, with the reference's. The fixture's attention
// has no rotary embedding (the scripts use none: positions play no part in the selection).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "models/attention.hpp"
#include "models/rope.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies::testing {

inline nlohmann::json load_parity_fixture(const std::string& name) {
  const std::string path = std::string(KVBENCH_TESTS_DIR) + "/fixtures/policy_parity/" + name + ".json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

struct ParityReport {
  int64_t steps = 0;
  int64_t differing_steps = 0;  // steps after which some head's kept set differs
  std::string first_difference;
};

inline torch::Tensor fixture_tensor(const nlohmann::json& rows) {  // [N][heads][d] -> float32
  const int64_t n = rows.size(), h = rows[0].size(), d = rows[0][0].size();
  std::vector<float> flat;
  flat.reserve(n * h * d);
  for (const auto& tok : rows)
    for (const auto& head : tok)
      for (const auto& x : head) flat.push_back(x.get<float>());
  return torch::tensor(flat).reshape({n, h, d});
}

inline std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// `params` overlays the fixture's parameters (to show that another setting differs).
inline ParityReport replay_parity(const nlohmann::json& fx, const nlohmann::json& params = nlohmann::json::object()) {
  const int64_t heads = fx["heads"].get<int64_t>(), kv_heads = fx["kv_heads"].get<int64_t>();
  const int64_t head_dim = fx["head_dim"].get<int64_t>();
  nlohmann::json resolved = fx["params"];
  resolved.update(params);
  auto policy = make_policy(fx["policy"].get<std::string>(), resolved);
  SequenceInfo info;
  info.n_layers = 1;
  info.n_heads = heads;
  info.n_kv_heads = kv_heads;
  info.head_dim = head_dim;
  info.budget = fx["budget"].get<int64_t>();
  policy->begin(info);

  models::ModelConfig config;
  config.dim = heads * head_dim;
  config.n_heads = heads;
  config.n_kv_heads = kv_heads;
  config.head_dim = head_dim;
  config.max_seq_len = 4096;
  const models::Rope rope(config);  // unused: kOriginal mode with keys and queries as given
  models::AttentionRequest request;
  request.mode = PositionMode::kOriginal;
  request.stats = policy->wants();

  const torch::Tensor keys = fixture_tensor(fx["keys"]), queries = fixture_tensor(fx["queries"]);
  LayerCache cache(kv_heads, head_dim, torch::kFloat32);
  ParityReport report;
  int64_t start = 0;
  const auto& steps = fx["steps"];
  for (size_t i = 0; i < steps.size(); ++i) {
    const int64_t T = steps[i].get<int64_t>();
    const Phase phase = i == 0 ? Phase::kPrefill : T > 1 ? Phase::kPrefillBlock : Phase::kDecode;
    torch::Tensor k = keys.narrow(0, start, T).permute({1, 0, 2}).contiguous();
    cache.append(k, k.clone(), torch::arange(start, start + T, torch::kInt64));
    torch::Tensor q = queries.narrow(0, start, T).permute({1, 0, 2}).contiguous();
    models::AttentionResult attended = models::attend(q, cache, rope, request);
    policy->observe(0, cache, attended.stats, phase);
    policy->compress(0, cache, phase);
    start += T;
    ++report.steps;
    const int64_t n = cache.size();
    torch::Tensor positions = cache.positions().to(torch::kCPU).contiguous();
    torch::Tensor valid = cache.all_valid() ? torch::ones({kv_heads, n}, torch::kBool)
                                            : cache.valid().to(torch::kCPU, torch::kBool).contiguous();
    const int64_t* pos = positions.data_ptr<int64_t>();
    const bool* ok = valid.data_ptr<bool>();
    bool differs = false;
    std::string what;
    for (int64_t h = 0; h < kv_heads; ++h) {
      std::vector<int64_t> got;
      for (int64_t j = 0; j < n; ++j)
        if (ok[h * n + j]) got.push_back(pos[h * n + j]);
      std::sort(got.begin(), got.end());
      std::vector<int64_t> want = fx["kept"][i][h].get<std::vector<int64_t>>();
      std::sort(want.begin(), want.end());
      if (got != want && !differs) {
        differs = true;
        what = "step " + std::to_string(i) + " (" + std::to_string(start) + " tokens) head " + std::to_string(h) +
               ": kvbench {" + join(got) + "} reference {" + join(want) + "}";
      }
    }
    if (differs && report.differing_steps++ == 0) report.first_difference = what;
  }
  return report;
}

}  // namespace kvbench::policies::testing
