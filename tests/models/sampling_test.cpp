// The sampler against transformers' logits processors (logits_process.py run on Debian's
// python3-torch: tests/fixtures/reasoning/sampling_cases.json, scripts/reasoning_reference/
// record_sampling.py) and against torch.multinomial's draws (multinomial_draws.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "../metrics/golden.hpp"
#include "models/logits_processors.hpp"
#include "models/sampler.hpp"

namespace kvbench::models {
namespace {

using nlohmann::json;

float decode_float(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "-inf") return -std::numeric_limits<float>::infinity();
    if (s == "inf") return std::numeric_limits<float>::infinity();
    return std::numeric_limits<float>::quiet_NaN();
  }
  return static_cast<float>(v.get<double>());
}

torch::Tensor floats(const json& list) {
  std::vector<float> v;
  for (const auto& x : list) v.push_back(decode_float(x));
  return torch::tensor(v, torch::kFloat32);
}

std::vector<float> values(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// The recorded version's softmax/cumsum are the ones the knife-edge cases need bit for bit.
bool recorded_torch(const json& fixture) { return fixture.at("torch_version").get<std::string>().rfind(TORCH_VERSION, 0) == 0; }

SamplingSettings settings_of(const json& s) {
  SamplingSettings out;
  out.repetition_penalty = s.at("repetition_penalty").get<double>();
  out.temperature = s.at("temperature").get<double>();
  out.top_k = s.at("top_k").is_null() ? 0 : s.at("top_k").get<int64_t>();
  out.top_p = s.at("top_p").get<double>();
  out.min_p = s.at("min_p").is_null() ? 0 : s.at("min_p").get<double>();
  return out;
}

torch::Tensor apply_single(const std::string& processor, const json& params, const torch::Tensor& logits, const std::vector<int64_t>& ids) {
  if (processor == "RepetitionPenaltyLogitsProcessor") return apply_repetition_penalty(logits, ids, params.at("penalty"));
  if (processor == "TemperatureLogitsWarper") return logits / params.at("temperature").get<double>();
  if (processor == "TopKLogitsWarper") return apply_top_k(logits, params.at("top_k"));
  if (processor == "TopPLogitsWarper") return apply_top_p(logits, params.at("top_p"));
  if (processor == "MinPLogitsWarper") return apply_min_p(logits, params.at("min_p"));
  throw std::runtime_error("unknown processor " + processor);
}

// Where the recorded torch sort broke a tie (tie_order_dependent), which of the equal tokens
// survive is the sort's choice; the scores kept, as a multiset, are not.
void expect_scores(const std::vector<float>& got, const std::vector<float>& want, bool tie_order_dependent, const std::string& name) {
  ASSERT_EQ(got.size(), want.size()) << name;
  std::vector<float> g = got, w = want;
  if (tie_order_dependent) {
    std::sort(g.begin(), g.end());
    std::sort(w.begin(), w.end());
  }
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_TRUE(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) << name << " [" << i << "]: " << g[i] << " vs " << w[i];
}

TEST(LogitsProcessors, EqualTransformersProcessorsOnEveryRecordedCase) {
  const json fixture = test::load_fixture("reasoning/sampling_cases.json");
  const bool exact = recorded_torch(fixture);
  int compared = 0;
  for (const json& c : fixture.at("cases")) {
    const std::string name = c.at("name");
    const bool beams = c.contains("settings") ? c.at("settings").at("min_tokens_to_keep") != 1
                                              : c.at("params").value("min_tokens_to_keep", 1) != 1;
    if (beams) continue;  // min_tokens_to_keep 2 comes with beam search, which kvbench does not run
    if (!exact && c.at("knife_edge").get<bool>()) continue;  // needs the recorded torch's softmax bit for bit
    const torch::Tensor logits = floats(c.at("logits"));
    const std::vector<int64_t> ids = c.at("input_ids");
    const torch::Tensor out = c.at("kind") == "single" ? apply_single(c.at("processor"), c.at("params"), logits, ids)
                                                       : process_logits(logits, ids, settings_of(c.at("settings")));
    expect_scores(values(out), values(floats(c.at("output_scores"))), c.at("tie_order_dependent"), name);
    if (c.contains("greedy")) {  // do_sample=False: the repetition penalty, then argmax
      SamplingSettings greedy = settings_of(c.at("settings"));
      greedy.temperature = 0;
      const torch::Tensor scores = process_logits(logits, ids, greedy);
      expect_scores(values(scores), values(floats(c.at("greedy").at("scores"))), false, name + " greedy");
      EXPECT_EQ(Sampler(greedy, 0).next(logits, ids), c.at("greedy").at("argmax").get<int64_t>()) << name;
    }
    ++compared;
  }
  EXPECT_GE(compared, exact ? 55 : 40);
}

TEST(Sampler, DrawsWhatTorchMultinomialDrawsWithTheSameSeed) {
  const json fixture = test::load_fixture("reasoning/multinomial_draws.json");
  if (!recorded_torch(fixture)) GTEST_SKIP() << "draws recorded with torch " << fixture.at("torch_version") << ", this is " << TORCH_VERSION;
  SamplingSettings s;
  s.temperature = 1;  // no processor: softmax and the draw alone
  for (const json& run : fixture.at("runs")) {
    Sampler sampler(s, run.at("seed").get<uint64_t>());
    std::vector<int64_t> drawn;
    for (const json& step : fixture.at("scores_per_step")) drawn.push_back(sampler.next(floats(step), {}));
    EXPECT_EQ(drawn, run.at("tokens").get<std::vector<int64_t>>()) << "seed " << run.at("seed");
  }
}

TEST(Sampler, OneSeedOneSequenceAndTheFilterIsHonoured) {
  SamplingSettings s;
  s.temperature = 0.6;
  s.top_k = 5;
  s.top_p = 0.95;
  const torch::Tensor logits = torch::linspace(-3, 3, 50);
  auto draw = [&](uint64_t seed) {
    Sampler sampler(s, seed);
    std::vector<int64_t> out;
    for (int i = 0; i < 200; ++i) out.push_back(sampler.next(logits, {}));
    return out;
  };
  const std::vector<int64_t> a = draw(7);
  EXPECT_EQ(a, draw(7));
  EXPECT_NE(a, draw(8));
  const std::set<int64_t> seen(a.begin(), a.end());
  EXPECT_GT(seen.size(), 1u);
  for (int64_t id : seen) EXPECT_GE(id, 45) << "top_k 5 keeps ids 45..49 only";
}

TEST(Sampler, RefusesSettingsOutsideTransformersRanges) {
  const double nan = std::nan("");
  auto refused = [](auto edit) {
    SamplingSettings s;
    edit(s);
    EXPECT_THROW(Sampler(s, 0), std::invalid_argument);
  };
  refused([&](SamplingSettings& s) { s.temperature = nan; });
  refused([](SamplingSettings& s) { s.temperature = -0.5; });
  refused([](SamplingSettings& s) { s.temperature = std::numeric_limits<double>::infinity(); });
  refused([&](SamplingSettings& s) { s.top_p = nan; });
  refused([](SamplingSettings& s) { s.top_p = 1.5; });
  refused([](SamplingSettings& s) { s.top_k = -1; });
  refused([](SamplingSettings& s) { s.min_p = 2; });
  refused([](SamplingSettings& s) { s.repetition_penalty = 0; });
  SamplingSettings ok;
  ok.temperature = 0.7;
  ok.top_p = 0.9;
  EXPECT_NO_THROW(Sampler(ok, 0));
}

}  // namespace
}  // namespace kvbench::models
