// Encoding throughput of the Hugging Face tokenizers (Llama-3, Qwen3) over every LongBench
// `context` and `input` in ../shared/data/longbench, one thread. Target (issue #11): >= 5 MB/s.
// "Cold" builds a fresh tokenizer per iteration (empty word cache, load time excluded); "Warm"
// reuses one, as a run does after its first prompts. Also the tokenizer.json load time.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.hpp"

namespace {

const std::string kShared = KVBENCH_SHARED_DIR;

const std::vector<std::string>& longbench_texts() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(kShared + "/data/longbench"))
      if (e.path().extension() == ".jsonl") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto j = nlohmann::json::parse(line);
        for (const char* field : {"context", "input"})
          if (j.contains(field) && j[field].is_string()) out.push_back(j[field].get<std::string>());
      }
    }
    return out;
  }();
  return texts;
}

int64_t total_bytes() {
  int64_t n = 0;
  for (const auto& t : longbench_texts()) n += static_cast<int64_t>(t.size());
  return n;
}

std::string tokenizer_dir(int which) { return kShared + (which == 0 ? "/models/llama3-tokenizer" : "/models/qwen3-tokenizer"); }
const char* tokenizer_name(int which) { return which == 0 ? "llama3" : "qwen3"; }

void BM_EncodeLongBench_Warm(benchmark::State& state) {
  const kvbench::models::Tokenizer tok(tokenizer_dir(static_cast<int>(state.range(0))));
  size_t tokens = 0;
  for (const auto& t : longbench_texts()) tokens += tok.encode(t, false).size();  // fills the word cache
  for (auto _ : state) {
    tokens = 0;
    for (const auto& t : longbench_texts()) tokens += tok.encode(t, false).size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
  state.SetLabel(std::string(tokenizer_name(static_cast<int>(state.range(0)))) + ", " + std::to_string(tokens) + " tokens");
}
BENCHMARK(BM_EncodeLongBench_Warm)->Arg(0)->Arg(1)->ArgName("qwen3")->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_EncodeLongBench_Cold(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto tok = std::make_unique<kvbench::models::Tokenizer>(tokenizer_dir(static_cast<int>(state.range(0))));
    state.ResumeTiming();
    size_t tokens = 0;
    for (const auto& t : longbench_texts()) tokens += tok->encode(t, false).size();
    benchmark::DoNotOptimize(tokens);
    state.PauseTiming();
    tok.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
  state.SetLabel(tokenizer_name(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_EncodeLongBench_Cold)->Arg(0)->Arg(1)->ArgName("qwen3")->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_LoadTokenizerJson(benchmark::State& state) {
  for (auto _ : state) {
    kvbench::models::Tokenizer tok(tokenizer_dir(static_cast<int>(state.range(0))));
    benchmark::DoNotOptimize(tok.vocab_size());
  }
  state.SetLabel(tokenizer_name(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_LoadTokenizerJson)->Arg(0)->Arg(1)->ArgName("qwen3")->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
