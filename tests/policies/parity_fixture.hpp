#pragma once
// Parity fixtures of the policies' official codes (tests/fixtures/policy_parity/<name>.json, written
// by scripts/policy_parity/*.py running the reference Python classes): fixed random queries/keys
// and, per step and stored head, the positions the reference kept. run_fixture() feeds the same
// queries/keys through kvbench as the runtime does — append_model_heads, models::attend with the
// policy's StatsRequest, observe(), compress() — and every stored head must keep the same set of
// positions. Where the reference's choice among equal scores is unspecified (a tie group
// straddling the selection boundary, recorded per head as "ties"), the sets must agree outside
// the tie group and hold as many of it; such selections are counted and printed. A case with
// "compression_ratio" (kvpress) runs under that ratio, and its "budget" must be what the
// `ratio:<r>` budget form resolves to.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "models/attention.hpp"
#include "models/rope.hpp"
#include "policies/budget.hpp"
#include "policies/gqa_mode.hpp"
#include "policies/kv_cache.hpp"
#include "policies/registry.hpp"

namespace kvbench::policies::parity {


namespace fs = std::filesystem;
using nlohmann::json;

inline const fs::path kFixtures = fs::path(KVBENCH_TESTS_DIR) / "fixtures" / "policy_parity";

struct ParityCount {
  int cases = 0, steps = 0, selections = 0, tied = 0;
};

inline Phase phase_of(const std::string& name) {
  if (name == "prefill") return Phase::kPrefill;
  if (name == "block") return Phase::kPrefillBlock;
  if (name == "decode") return Phase::kDecode;
  throw std::invalid_argument("fixture: unknown phase '" + name + "'");
}

inline torch::Tensor tensor_of(const json& values, std::vector<int64_t> shape) {
  std::vector<float> v;
  if (values.is_array() && !values.empty() && values[0].is_array())  // nested rows
    for (const json& row : values) for (float x : row.get<std::vector<float>>()) v.push_back(x);
  else
    v = values.get<std::vector<float>>();
  torch::Tensor t = torch::tensor(v, torch::kFloat32);
  if (t.numel() != std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>()))
    throw std::invalid_argument("fixture: tensor size does not match its shape");
  return t.reshape(shape);
}

// The row of lc.positions() that holds head h's (a homogeneous cache may keep one for all heads).
inline int64_t positions_row(const LayerCache& lc, int64_t h) { return lc.positions().size(0) == 1 ? 0 : h; }

inline std::set<int64_t> kept_positions(const LayerCache& cache, int64_t head) {
  std::set<int64_t> out;
  torch::Tensor pos = cache.positions().to(torch::kCPU)[positions_row(cache, head)];
  torch::Tensor valid = cache.valid();
  for (int64_t j = 0; j < cache.size(); ++j)
    if (!valid.defined() || valid[head][j].item<bool>()) out.insert(pos[j].item<int64_t>());
  return out;
}

inline std::string show(const std::set<int64_t>& s) {
  std::string out = "{";
  for (int64_t x : s) out += (out.size() > 1 ? "," : "") + std::to_string(x);
  return out + "}";
}

// Every stored head of `lc` keeps `want` [[positions] per head]; where `ties` names a tie group
// at the reference's selection boundary, the sets agree outside it and have one size.
inline void expect_kept(const LayerCache& lc, const json& want, const json& ties_per_head, ParityCount& count) {
  const int64_t d = lc.head_dim();
  ASSERT_EQ(lc.kv_heads(), static_cast<int64_t>(want.size())) << "stored heads";
  // Honest memory: every stored head counts (gqa repeat stores the query heads).
  int64_t slots = 0;
  for (int64_t h = 0; h < lc.kv_heads(); ++h) slots += static_cast<int64_t>(kept_positions(lc, h).size());
  EXPECT_EQ(lc.logical_bytes(), 2 * slots * d * 4);
  for (int64_t h = 0; h < lc.kv_heads(); ++h) {
    std::set<int64_t> ours = kept_positions(lc, h);
    std::set<int64_t> theirs = want[h].get<std::set<int64_t>>();
    std::set<int64_t> ties = ties_per_head.is_array() ? ties_per_head[h].get<std::set<int64_t>>() : std::set<int64_t>{};
    ++count.selections;
    if (ties.empty()) {
      EXPECT_EQ(ours, theirs) << "head " << h << ": kvbench " << show(ours) << " vs reference " << show(theirs);
      continue;
    }
    ++count.tied;
    auto outside = [&](const std::set<int64_t>& x) {
      std::set<int64_t> o;
      for (int64_t p : x)
        if (!ties.count(p)) o.insert(p);
      return o;
    };
    EXPECT_EQ(ours.size(), theirs.size()) << "head " << h;
    EXPECT_EQ(outside(ours), outside(theirs)) << "head " << h << " outside the tie group " << show(ties) << ": kvbench "
                                              << show(ours) << " vs reference " << show(theirs);
  }
}

// The values a step appends: the layer's "v" when given; with the case's "values": "positions"
// (kvpress's recordings, whose presses may read values) each token's position in feature 0, as
// common.position_values; else zeros (the policies that never read values).
inline torch::Tensor values_of(const json& c, const json& layer, const torch::Tensor& k, const torch::Tensor& positions) {
  if (layer.contains("v")) return tensor_of(layer["v"], k.sizes().vec());
  torch::Tensor v = torch::zeros_like(k);
  if (c.value("values", "") == "positions") v.select(-1, 0).copy_(positions.to(torch::kFloat32).expand({k.size(0), k.size(1)}));
  return v;
}

// The case's sequence: shapes, prompt, budget; with "compression_ratio" (kvpress) that ratio, whose
// `ratio:<r>` budget must resolve to the case's budget.
inline SequenceInfo sequence_info(const json& c, int64_t layers) {
  SequenceInfo info;
  info.n_layers = layers;
  info.n_heads = c["heads"];
  info.n_kv_heads = c["kv_heads"];
  info.head_dim = c["head_dim"];
  info.prompt_len = c["prompt_len"];
  info.budget = c["budget"];
  if (c.contains("compression_ratio")) {
    const double ratio = c["compression_ratio"];
    info.compression_ratio = ratio;
    EXPECT_EQ(Budget::compression_ratio(ratio).resolve(info.prompt_len), info.budget) << "ratio:" << ratio;
  }
  return info;
}

// Where the reference rewrites keys or values (kvpress's ThinKPress, MergingPress), the rows each
// head of `rows` (lc's keys or values) holds at its kept positions, ascending: [[[d floats] per
// kept position] per head].
inline void expect_kept_rows(const torch::Tensor& rows, const LayerCache& lc, const json& want) {
  for (int64_t h = 0; h < lc.kv_heads(); ++h) {
    const torch::Tensor positions = lc.positions().to(torch::kCPU)[positions_row(lc, h)];
    torch::Tensor slots = positions.argsort();
    if (lc.valid().defined()) slots = slots.masked_select(lc.valid().to(torch::kCPU)[h].index_select(0, slots));
    const torch::Tensor ours = rows.to(torch::kCPU, torch::kFloat32)[h].index_select(0, slots);
    const torch::Tensor theirs = tensor_of(want[h], {static_cast<int64_t>(want[h].size()), lc.head_dim()});
    ASSERT_EQ(ours.sizes(), theirs.sizes()) << "head " << h;
    EXPECT_TRUE(torch::allclose(ours, theirs, 1e-5, 1e-5))
        << "head " << h << ": largest difference " << (ours - theirs).abs().max().item<float>();
  }
}

inline void run_case(const std::string& policy_name, const json& c, ParityCount& count) {
  SCOPED_TRACE("case " + c["name"].get<std::string>());
  const int64_t H = c["heads"], kvh = c["kv_heads"], d = c["head_dim"], L = c["layers"];
  json params = c.value("params", json::object());
  auto policy = make_policy(policy_name, params);
  policy->begin(sequence_info(c, L));

  models::ModelConfig config;
  config.head_dim = d;
  config.n_heads = H;
  config.n_kv_heads = kvh;
  models::Rope rope(config);
  KVCache cache(L, kvh, d, torch::kFloat32, policy->position_mode());
  models::AttentionRequest request;
  request.mode = policy->position_mode();
  request.stats = policy->wants();

  int64_t position = 0;
  for (size_t s = 0; s < c["steps"].size(); ++s) {
    const json& step = c["steps"][s];
    SCOPED_TRACE("step " + std::to_string(s));
    const int64_t T = step["tokens"];
    const Phase phase = phase_of(step["phase"]);
    torch::Tensor positions = torch::arange(position, position + T, torch::kInt64);
    for (int64_t l = 0; l < L; ++l) {
      SCOPED_TRACE("layer " + std::to_string(l));
      const json& layer = step["layers"][l];
      torch::Tensor q = tensor_of(layer["q"], {H, T, d});
      torch::Tensor k = tensor_of(layer["k"], {kvh, T, d});
      LayerCache& lc = cache.layer(l);
      append_model_heads(lc, k, values_of(c, layer, k, positions), positions);  // as models/transformer.cpp
      models::AttentionResult attn = models::attend(q, lc, rope, request);
      // W_o [hidden, heads·d] where the fixture gives one (kvpress's CriticalKVPress reads it).
      if (layer.contains("wo")) attn.stats.output_projection = tensor_of(layer["wo"], {static_cast<int64_t>(layer["wo"].size()) / (H * d), H * d});
      policy->observe(l, lc, attn.stats, phase);
      if (step["compress"].get<bool>()) policy->compress(l, lc, phase);

      expect_kept(lc, layer["kept"], layer.contains("ties") ? layer["ties"] : json(), count);
      if (layer.contains("kept_values")) expect_kept_rows(lc.values(), lc, layer["kept_values"]);
    }
    position += T;
    ++count.steps;
  }
  ++count.cases;
}

inline json load_fixture(const std::string& file) {
  std::ifstream in(kFixtures / file);
  if (!in) throw std::runtime_error("missing fixture " + (kFixtures / file).string());
  return json::parse(in);
}

inline void report(const std::string& what, const json& fixture, const ParityCount& count) {
  std::cout << what << " vs " << fixture["reference"]["repo"].get<std::string>() << ": " << count.cases << " cases, "
            << count.steps << " steps, " << count.selections << " head selections (" << count.tied
            << " with boundary ties)\n";
  ::testing::Test::RecordProperty("cases", count.cases);
  ::testing::Test::RecordProperty("steps", count.steps);
  ::testing::Test::RecordProperty("selections", count.selections);
  ::testing::Test::RecordProperty("tied_selections", count.tied);
}

inline ParityCount run_fixture(const std::string& file) {
  const json fixture = load_fixture(file);
  ParityCount count;
  for (const json& c : fixture["cases"]) run_case(c.value("policy", fixture["policy"].get<std::string>()), c, count);
  report(fixture["policy"], fixture, count);
  return count;
}

// The RoPE of a recorded case: transformers' half-split layout at the case's theta, as the
// recorders' module.rotary_emb.
inline models::Rope recorded_rope(const json& c) {
  models::ModelConfig config;
  config.head_dim = c["head_dim"];
  config.n_heads = c["heads"];
  config.n_kv_heads = c["kv_heads"];
  config.rope_theta = c["rope_theta"];
  config.rope_style = models::RopeStyle::kHalfSplit;
  return models::Rope(config);
}

// Runs every case of a fixture with `run_case`, which adds what it compared to the count; reports
// the count as `what`'s and returns it.
inline ParityCount run_cases(const std::string& file, const std::string& what,
                             const std::function<void(const json&, ParityCount&)>& run_case) {
  const json fixture = load_fixture(file);
  ParityCount count;
  for (const json& c : fixture["cases"]) run_case(c, count);
  report(what, fixture, count);
  return count;
}

// Runs every case of a fixture whose cases name their own policy; returns the policies named.
inline std::set<std::string> policies_run(const std::string& fixture, const std::function<void(const json&)>& run_case) {
  const json cases = load_fixture(fixture)["cases"];
  std::set<std::string> policies;
  for (const json& c : cases) {
    run_case(c);
    policies.insert(c["policy"]);
  }
  return policies;
}

// After a rescoring press's scoring forwards: every layer compressed as the session does it, each
// keeping the recorded positions ("per_layer"[l]["kept"]), its widest head at the layer's budget.
inline void compress_every_layer_as_recorded(Policy& policy, KVCache& cache, const json& c) {
  for (int64_t l = 0; l < cache.n_layers(); ++l) {
    policy.compress(l, cache.layer(l), Phase::kPrefill);
    ParityCount count;
    expect_kept(cache.layer(l), c["per_layer"][l]["kept"], json(), count);
    EXPECT_EQ(cache.layer(l).max_head_length(), policy.layer_budget(l));
  }
}

}  // namespace kvbench::policies::parity
