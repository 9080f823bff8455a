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

#include <unistd.h>

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

// Hostile inputs (issue #31 H2, H3): the work must grow linearly with the input. Google Benchmark
// fits the complexity; an O(N^2) regression shows as a bad fit and minutes at the largest size.
std::string combining_marks(int64_t pairs) {
  std::string text = "a";
  for (int64_t i = 0; i < pairs; ++i) text += "\xCC\x81\xCC\x96";  // U+0301 (ccc 230), U+0316 (ccc 220)
  return text;
}

void BM_NormalizeCombiningMarks(benchmark::State& state) {
  const kvbench::models::Tokenizer tok(tokenizer_dir(1));  // Qwen3: NFC
  const std::string text = combining_marks(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(tok.encode(text, false).size());
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_NormalizeCombiningMarks)->RangeMultiplier(4)->Range(4096, 65536)->Complexity()->Unit(benchmark::kMillisecond);

void BM_LoadManyAddedTokens(benchmark::State& state) {
  nlohmann::json j = nlohmann::json::parse(std::ifstream(tokenizer_dir(0) + "/tokenizer.json"));
  for (int64_t i = 0; i < state.range(0); ++i)
    j["added_tokens"].push_back({{"id", 0}, {"content", "<|extra_" + std::to_string(i) + "|>"}, {"single_word", false},
                                 {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", true}});
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kvbench-bench-added-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer.json") << j.dump();
  for (auto _ : state) {
    kvbench::models::Tokenizer tok(dir.string());
    benchmark::DoNotOptimize(tok.vocab_size());
  }
  std::filesystem::remove_all(dir);
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_LoadManyAddedTokens)->RangeMultiplier(4)->Range(12500, 200000)->Complexity()->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
