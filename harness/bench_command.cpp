// `kvbench bench`: one summary table for a model, context, policy and budget (prefill and decode
// tokens/s, per-step policy cost, KV bytes), so a grid can be sized before it runs; with
// --programs, the Google Benchmark programs built beside kvbench (build/bench/).
// Speed and memory targets live in those programs, never in timed unit tests.
#include <ATen/record_function.h>
#include <sys/wait.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "harness/command.hpp"
#include "harness/runtime_options.hpp"
#include "models/cpu_threads.hpp"
#include "policies/registry.hpp"
#include "policies/timed_policy.hpp"

namespace kvbench::harness {
namespace {

int run_programs(const std::string& filter, const std::string& only) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = exe.parent_path() / "bench";
  if (ec || !std::filesystem::is_directory(dir))
    throw std::runtime_error(dir.string() + ": no benchmark programs (build with -DKVBENCH_BUILD_BENCH=ON)");
  std::vector<std::filesystem::path> programs;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && (only.empty() || entry.path().filename().string().find(only) != std::string::npos))
      programs.push_back(entry.path());
  std::sort(programs.begin(), programs.end());
  int worst = 0;
  for (const auto& program : programs) {
    std::cout << "== " << program.filename().string() << "\n" << std::flush;
    std::string command = program.string() + (filter.empty() ? "" : " --benchmark_filter='" + filter + "'");
    const int status = std::system(command.c_str());
    worst = std::max(worst, WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  return worst;
}

struct BenchArgs {
  ModelOptions model;
  PolicyOptions policy;
  int64_t context = 1024;
  int64_t decode = 64;
  int runs = 3;
  int warmup = 0;
  std::string attention = "auto";
  int threads = 0;
  bool json = false;
  bool programs = false;
  std::string filter, program;
  std::string trace;  // a Chrome trace of one more run's decode steps
};

struct Run {
  double prefill_tps = 0, decode_tps = 0, policy_us_per_step = 0, step_us = 0;
  int64_t peak_bytes = 0, end_bytes = 0, max_len = 0, budget = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// A deterministic synthetic prompt: the speed of a step does not depend on which tokens they are.
std::vector<int64_t> synthetic_tokens(int64_t count, int64_t vocab) {
  std::vector<int64_t> out{1};
  for (int64_t i = 1; i < count; ++i) out.push_back(3 + (i * 7919) % std::max<int64_t>(1, vocab - 3));
  return out;
}

// `trace`: a path to write the torch profiler's Chrome trace of the decode steps to (each step
// one "decode_step" event; scripts/trace_ops.py sums it per operator).
Run run_once(const models::Transformer& model, const BenchArgs& args, const std::string& trace = "") {
  auto inner = policies::make_policy(args.policy.policy, args.policy.params_json());
  policies::TimedPolicy policy(*inner);
  models::SessionOptions options = session_options(args.policy);
  options.fused_attention = args.attention == "auto";
  models::InferenceSession session(model, &policy, options);
  const std::vector<int64_t> prompt = synthetic_tokens(args.context, model.config().vocab_size);
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  torch::Tensor logits = session.prefill(prompt);
  int64_t next = logits.reshape({-1}).argmax().item<int64_t>();  // waits for the device
  auto t1 = clock::now();
  policy.reset();
  std::unique_ptr<torch::autograd::profiler::RecordProfile> profile;
  if (!trace.empty()) profile = std::make_unique<torch::autograd::profiler::RecordProfile>(trace);
  for (int64_t i = 0; i < args.decode; ++i) {
    RECORD_FUNCTION("decode_step", std::vector<c10::IValue>());
    next = session.step(next).argmax().item<int64_t>();
  }
  auto t2 = clock::now();
  profile.reset();  // writes the trace
  Run r;
  const double prefill_s = std::chrono::duration<double>(t1 - t0).count();
  const double decode_s = std::chrono::duration<double>(t2 - t1).count();
  r.prefill_tps = static_cast<double>(args.context) / prefill_s;
  r.decode_tps = args.decode > 0 ? static_cast<double>(args.decode) / decode_s : 0;
  r.step_us = args.decode > 0 ? 1e6 * decode_s / static_cast<double>(args.decode) : 0;
  r.policy_us_per_step = args.decode > 0 ? 1e6 * policy.seconds() / static_cast<double>(args.decode) : 0;
  r.peak_bytes = session.peak_logical_bytes();
  r.end_bytes = session.cache().logical_bytes();
  r.max_len = session.max_cache_len();
  r.budget = session.budget_tokens();
  return r;
}

std::string mib(int64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

int run_summary(const BenchArgs& args) {
  if (args.context < 1) throw std::invalid_argument("--context must be at least 1");
  if (args.decode < 0) throw std::invalid_argument("--decode must be >= 0");
  if (args.runs < 1) throw std::invalid_argument("--runs must be at least 1");
  if (args.warmup < 0) throw std::invalid_argument("--warmup must be >= 0");
  if (!args.trace.empty() && !std::ofstream(args.trace))
    throw std::invalid_argument(args.trace + ": cannot write the trace (--trace)");
  models::use_cpu_threads(args.threads);
  const auto load_start = std::chrono::steady_clock::now();
  LoadedRuntime rt = load_runtime(args.model);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  const auto& c = rt.transformer->config();
  // Warm-up runs pay one-off costs (CUDA context, kernel loading, allocator growth) and are not counted.
  for (int i = 0; i < args.warmup; ++i) run_once(*rt.transformer, args);
  std::vector<Run> runs;
  for (int i = 0; i < args.runs; ++i) runs.push_back(run_once(*rt.transformer, args));
  if (!args.trace.empty()) run_once(*rt.transformer, args, args.trace);  // the profiler slows it: not counted
  auto med = [&](double Run::*field) {
    std::vector<double> v;
    for (const auto& r : runs) v.push_back(r.*field);
    return median(v);
  };
  const Run& last = runs.back();
  const double prefill = med(&Run::prefill_tps), decode = med(&Run::decode_tps), policy_us = med(&Run::policy_us_per_step),
               step_us = med(&Run::step_us);
  const std::string dtype = c10::toString(rt.transformer->dtype());
  if (args.json) {
    nlohmann::json j = {{"model", rt.loaded.name},
                        {"device", rt.transformer->device().str()},
                        {"dtype", dtype},
                        {"threads", args.threads},
                        {"intra_op_threads", at::get_num_threads()},
                        {"blas_threads", models::blas_threads()},
                        {"context", args.context},
                        {"decode", args.decode},
                        {"policy", args.policy.policy},
                        {"policy_params", args.policy.params_json()},
                        {"budget", args.policy.budget},
                        {"budget_tokens", last.budget},
                        {"protocol", args.policy.protocol},
                        {"load_s", load_s},
                        {"runs", args.runs},
                        {"warmup", args.warmup},
                        {"attention", args.attention},
                        {"prefill_tokens_per_s", prefill},
                        {"decode_tokens_per_s", decode},
                        {"decode_step_us", step_us},
                        {"policy_us_per_decode_step", policy_us},
                        {"kv_bytes_peak", last.peak_bytes},
                        {"kv_bytes_end", last.end_bytes},
                        {"max_cache_len", last.max_len}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::ostringstream head;
  head << rt.loaded.name << " (" << c.n_layers << " layers, " << c.n_heads << " heads / " << c.n_kv_heads
       << " KV heads, head_dim " << c.head_dim << "), " << rt.transformer->device().str() << " " << dtype << ", "
       << models::blas_threads() << " BLAS threads, " << at::get_num_threads() << " intra-op";
  std::cout << head.str() << "\ncontext " << args.context << " + " << args.decode << " decoded, policy "
            << args.policy.policy << ", budget " << args.policy.budget << " (" << last.budget << " tokens per KV head), protocol "
            << args.policy.protocol << "; median of " << args.runs << " runs\n\n";
  std::ostringstream policy_cell;
  policy_cell << std::fixed << std::setprecision(1) << policy_us << " us (" << std::setprecision(1)
              << (step_us > 0 ? 100.0 * policy_us / step_us : 0.0) << "% of a step)";
  std::ostringstream load_cell;
  load_cell << std::fixed << std::setprecision(2) << load_s << " s";
  const std::vector<std::pair<std::string, std::string>> rows{
      {"model load (weights on the device)", load_cell.str()},
      {"prefill tokens/s", std::to_string(static_cast<int64_t>(prefill + 0.5))},
      {"decode tokens/s", std::to_string(static_cast<int64_t>(decode + 0.5))},
      {"decode step", std::to_string(static_cast<int64_t>(step_us + 0.5)) + " us"},
      {"policy per decode step", policy_cell.str()},
      {"KV bytes, peak (logical)", mib(last.peak_bytes)},
      {"KV bytes, end (logical)", mib(last.end_bytes)},
      {"max cache length", std::to_string(last.max_len)}};
  std::cout << "| metric | value |\n|---|---|\n";
  for (const auto& [k, v] : rows) std::cout << "| " << k << " | " << v << " |\n";
  return 0;
}

const CommandRegistration registration(
    "bench",
    "Summary table: prefill/decode tokens/s, per-step policy cost and KV bytes for a model, context, policy and "
    "budget (--programs: the Google Benchmark programs)",
    [](CLI::App& app) {
      auto args = std::make_shared<BenchArgs>();
      args->model.add_to(app);
      args->policy.add_to(app);
      app.add_option("--context", args->context, "prompt tokens (synthetic ids)")->capture_default_str();
      app.add_option("--decode", args->decode, "tokens decoded after the prompt")->capture_default_str();
      app.add_option("--runs", args->runs, "repetitions; the table shows the median")->capture_default_str();
      app.add_option("--warmup", args->warmup, "runs before the measured ones, not counted (one-off CUDA costs)")
          ->capture_default_str();
      app.add_option("--attention", args->attention,
                     "auto (the fused kernel where libtorch has one and the policy needs no statistics) or chunked "
                     "(always the matmul-softmax path, to compare the two)")
          ->capture_default_str()
          ->check(CLI::IsMember({"auto", "chunked"}));
      app.add_option("--threads", args->threads, "threads for the BLAS products, one for elementwise ops (models/cpu_threads.hpp; 0 = the cores, as every command)")->capture_default_str();
      app.add_option("--trace", args->trace,
                     "write a Chrome trace (torch profiler) of the decode steps of one more run, not counted; "
                     "scripts/trace_ops.py sums it per operator");
      app.add_flag("--json", args->json, "print a JSON object");
      app.add_flag("--programs", args->programs, "run the Google Benchmark programs in build/bench instead");
      app.add_option("--filter", args->filter, "with --programs: Google Benchmark --benchmark_filter regex");
      app.add_option("--program", args->program, "with --programs: only programs whose name contains this");
      return [args] { return args->programs ? run_programs(args->filter, args->program) : run_summary(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
