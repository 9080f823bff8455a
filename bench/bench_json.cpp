// How parse_json (datasets/json_parse.hpp) scales with one array of objects, the shape of a
// tokenizer.json's added_tokens (issue #31, H2). nlohmann's callback parser, which parse_json used
// before, rescans the parent array after every object: 200,000 objects took 30 s. The fitted
// complexity (Complexity(oN)) and the per-object time should stay flat from 25k to 200k objects;
// BM_PlainNlohmann is nlohmann's own DOM parser (no checks) on the same text, the floor.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "datasets/json_parse.hpp"

namespace {

// {"model": {...}, "added_tokens": [n objects as in a Hugging Face tokenizer.json]}
const std::string& added_tokens_json(int64_t n) {
  static std::map<int64_t, std::string> cache;
  std::string& s = cache[n];
  if (s.empty()) {
    s = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}, \"added_tokens\": [\n";
    for (int64_t k = 0; k < n; ++k) {
      s += "{\"id\": " + std::to_string(128256 + k) + ", \"content\": \"<|kvbench_extra_" + std::to_string(k) +
           "|>\", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": "
           "true}" + (k + 1 < n ? ",\n" : "\n");
    }
    s += "]}\n";
  }
  return s;
}

void BM_ParseJson_AddedTokens(benchmark::State& state) {
  const std::string& text = added_tokens_json(state.range(0));
  for (auto _ : state) {
    nlohmann::json j = kvbench::datasets::parse_json(text, "tokenizer.json");
    benchmark::DoNotOptimize(j);
  }
  state.SetComplexityN(state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseJson_AddedTokens)
    ->RangeMultiplier(2)
    ->Range(25000, 200000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

void BM_PlainNlohmann_AddedTokens(benchmark::State& state) {
  const std::string& text = added_tokens_json(state.range(0));
  for (auto _ : state) {
    nlohmann::json j = nlohmann::json::parse(text);
    benchmark::DoNotOptimize(j);
  }
  state.SetComplexityN(state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_PlainNlohmann_AddedTokens)
    ->RangeMultiplier(2)
    ->Range(25000, 200000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);

}  // namespace

BENCHMARK_MAIN();
