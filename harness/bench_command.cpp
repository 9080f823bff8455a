// `kvbench bench`: one summary table for a model, with a row per context and policy cell (prefill
// and decode tokens/s, per-step policy cost, KV bytes, device memory), the model loaded once, so
// a grid can be sized before it runs; with
// --programs, the Google Benchmark programs built beside kvbench (build/bench/).
// Speed and memory targets live in those programs, never in timed unit tests.
#include <ATen/record_function.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "harness/bench_cells.hpp"
#include "harness/command.hpp"
#include "harness/error_message.hpp"
#include "harness/progress_bar.hpp"
#include "harness/runtime_options.hpp"
#include "models/cpu_threads.hpp"
#include "models/device_memory.hpp"
#include "models/op_trace.hpp"
#include "policies/budget.hpp"
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
  std::vector<std::string> cells;        // --cell: JSON objects (harness/bench_cells.hpp)
  std::vector<int64_t> contexts{1024};   // every cell runs at each
  int64_t decode = 64;
  int runs = 3;
  int warmup = 0;
  std::string attention = "auto";
  bool cuda_graphs = false;
  int threads = 0;
  bool json = false;
  bool programs = false;
  std::string filter, program;
  std::string trace;  // a Chrome trace of one more run's decode steps
};

struct Run {
  double prefill_tps = 0, decode_tps = 0, policy_us_per_step = 0, step_us = 0;
  int64_t peak_bytes = 0, end_bytes = 0, allocated_peak_bytes = 0, max_len = 0, budget = 0;
  int64_t graphed_steps = 0;  // decode steps that replayed CUDA graphs (a cell may ask and not get them)
};

// One row of the table: a cell at one context, the median of its runs, or why it failed (a cell
// that runs out of device memory does not stop the others).
struct Row {
  BenchCell cell;
  int64_t context = 0;
  Run median;
  std::optional<models::DevicePeak> device_peak;
  std::string error;
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
Run run_once(const LoadedRuntime& rt, const BenchCell& cell, int64_t context, const BenchArgs& args,
             const std::function<void()>& on_step, const std::string& trace = "") {
  const models::Transformer& model = *rt.transformer;
  auto inner = policies::make_policy(cell.policy.policy, cell.policy.params_json());
  policies::TimedPolicy policy(*inner);
  models::SessionOptions options = session_options(cell.policy, rt);
  options.attention = cell.attention;
  options.cuda_graphs = cell.cuda_graphs;
  models::InferenceSession session(model, &policy, options);
  const std::vector<int64_t> prompt = synthetic_tokens(context, model.config().vocab_size);
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  torch::Tensor logits = session.prefill(prompt);
  int64_t next = logits.reshape({-1}).argmax().item<int64_t>();  // waits for the device
  auto t1 = clock::now();
  const int64_t graphed_before = model.graphed_steps();
  policy.reset();
  std::unique_ptr<models::OpTrace> profile;
  if (!trace.empty()) profile = std::make_unique<models::OpTrace>(trace);
  for (int64_t i = 0; i < args.decode; ++i) {
    RECORD_FUNCTION("decode_step", std::vector<c10::IValue>());
    next = session.step(next).argmax().item<int64_t>();
    on_step();
  }
  auto t2 = clock::now();
  profile.reset();  // writes the trace
  Run r;
  const double prefill_s = std::chrono::duration<double>(t1 - t0).count();
  const double decode_s = std::chrono::duration<double>(t2 - t1).count();
  r.prefill_tps = static_cast<double>(context) / prefill_s;
  r.decode_tps = args.decode > 0 ? static_cast<double>(args.decode) / decode_s : 0;
  r.step_us = args.decode > 0 ? 1e6 * decode_s / static_cast<double>(args.decode) : 0;
  r.policy_us_per_step = args.decode > 0 ? 1e6 * policy.seconds() / static_cast<double>(args.decode) : 0;
  r.peak_bytes = session.peak_logical_bytes();
  r.end_bytes = session.cache().logical_bytes();
  r.allocated_peak_bytes = session.peak_allocated_bytes();
  r.max_len = session.max_cache_len();
  r.budget = session.budget_tokens();
  r.graphed_steps = model.graphed_steps() - graphed_before;
  return r;
}

Row measure(const LoadedRuntime& rt, const BenchCell& cell, int64_t context, const BenchArgs& args) {
  const models::Transformer& model = *rt.transformer;
  Row row;
  row.cell = cell;
  row.context = context;
  try {
    // A row that cannot fit is refused from its shapes before it allocates (gigabytes and minutes
    // went before "can't allocate" otherwise); the other rows still run.
    require_memory(memory_need(model.config(), model.dtype(), session_options(cell.policy), {context, args.decode, false}),
                   model.device(),
                   std::to_string(context) + " prompt tokens and " + std::to_string(args.decode) + " decode steps");
    // The allocator's cache from the cell before is freed, so each row's device peak is its own.
    models::restart_device_peak(model.device());
    // Decoding past the trained context is long enough to look like a hang: its progress on stderr
    // (a bar on a terminal, else a line per tenth of the row's decode steps).
    const int64_t total_steps = (int64_t{args.warmup} + args.runs + (args.trace.empty() ? 0 : 1)) * args.decode;
    std::unique_ptr<ProgressBar> bar;
    if (args.decode > 0 && context + args.decode > model.config().max_seq_len)
      bar = std::make_unique<ProgressBar>(std::cerr, total_steps, ProgressBar::stderr_is_terminal());
    int64_t steps = 0, tenth = 0;
    const std::function<void()> on_step = [&] {
      if (!bar) return;
      bar->update(static_cast<double>(++steps), "decode steps");
      if (steps * 10 / total_steps > tenth && steps < total_steps) {
        tenth = steps * 10 / total_steps;
        bar->message("bench: context " + std::to_string(context) + ", " + cell.policy.policy + ": " +
                     std::to_string(steps) + " of " + std::to_string(total_steps) + " decode steps");
      }
    };
    // Warm-up runs pay one-off costs (CUDA context, kernel loading, allocator growth) and are not counted.
    for (int i = 0; i < args.warmup; ++i) run_once(rt, cell, context, args, on_step);
    std::vector<Run> runs;
    for (int i = 0; i < args.runs; ++i) runs.push_back(run_once(rt, cell, context, args, on_step));
    if (!args.trace.empty()) run_once(rt, cell, context, args, on_step, args.trace);  // the profiler slows it: not counted
    if (bar) bar->finish();
    auto med = [&](double Run::*field) {
      std::vector<double> v;
      for (const auto& r : runs) v.push_back(r.*field);
      return median(v);
    };
    row.median = runs.back();  // the byte counts and lengths are the same in every run
    row.median.prefill_tps = med(&Run::prefill_tps);
    row.median.decode_tps = med(&Run::decode_tps);
    row.median.policy_us_per_step = med(&Run::policy_us_per_step);
    row.median.step_us = med(&Run::step_us);
    row.device_peak = models::device_peak(model.device());
  } catch (const std::exception& e) {
    row.error = user_message(e);  // libtorch's message without its stack of frames
  }
  return row;
}

std::string mib(int64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

nlohmann::json row_json(const Row& row, const LoadedRuntime& rt, const BenchArgs& args, double load_s) {
  const Run& r = row.median;
  nlohmann::json j = {{"model", rt.loaded.name},
                      {"device", rt.transformer->device().str()},
                      {"dtype", c10::toString(rt.transformer->dtype())},
                      {"threads", args.threads},
                      {"intra_op_threads", at::get_num_threads()},
                      {"blas_threads", models::blas_threads()},
                      {"context", row.context},
                      {"decode", args.decode},
                      {"policy", row.cell.policy.policy},
                      {"policy_params", row.cell.policy.params_json()},
                      {"budget", row.cell.policy.budget},
                      {"protocol", row.cell.policy.protocol},
                      {"load_s", load_s},
                      {"runs", args.runs},
                      {"warmup", args.warmup},
                      {"attention", models::attention_path_name(row.cell.attention)},
                      {"cuda_graphs", row.cell.cuda_graphs}};
  if (!row.error.empty()) {
    j["error"] = row.error;
    return j;
  }
  // With --decode 0 there is no decode step to time: null, not a rate of 0.
  auto per_step = [&](double value) { return args.decode > 0 ? nlohmann::json(value) : nlohmann::json(nullptr); };
  j.update({{"budget_tokens", r.budget},
            {"prefill_tokens_per_s", r.prefill_tps},
            {"decode_tokens_per_s", per_step(r.decode_tps)},
            {"decode_step_us", per_step(r.step_us)},
            {"policy_us_per_decode_step", per_step(r.policy_us_per_step)},
            {"kv_bytes_peak", r.peak_bytes},
            {"kv_bytes_end", r.end_bytes},
            {"kv_bytes_allocated_peak", r.allocated_peak_bytes},
            {"max_cache_len", r.max_len},
            {"graphed_decode_steps", r.graphed_steps},
            // As torch.cuda.max_memory_allocated / max_memory_reserved; null off CUDA.
            {"device_peak_allocated_bytes", row.device_peak ? nlohmann::json(row.device_peak->allocated_bytes) : nullptr},
            {"device_peak_reserved_bytes", row.device_peak ? nlohmann::json(row.device_peak->reserved_bytes) : nullptr}});
  return j;
}

// The table's first lines: what ran where, and its columns.
void print_table_head(const LoadedRuntime& rt, const BenchArgs& args, double load_s, bool device_memory) {
  const auto& c = rt.transformer->config();
  std::cout << rt.loaded.name << " (" << c.n_layers << " layers, " << c.n_heads << " heads / " << c.n_kv_heads
            << " KV heads, head_dim " << c.head_dim << "), " << rt.transformer->device().str() << " "
            << c10::toString(rt.transformer->dtype()) << ", " << models::blas_threads() << " BLAS threads, "
            << at::get_num_threads() << " intra-op; loaded in " << std::fixed << std::setprecision(2) << load_s
            << " s\n"
            << args.decode << " tokens decoded after each prompt; median of " << args.runs << " runs"
            << (args.warmup > 0 ? " after " + std::to_string(args.warmup) + " warm-up" : std::string()) << "\n\n"
            << "| context | policy | budget (tokens per KV head) | protocol | prefill tok/s | decode tok/s | decode step "
               "| policy per step | KV peak | KV end | KV allocated (peak) | max cache len |"
            << (device_memory ? " device peak allocated / reserved |" : "") << "\n"
            << "|---|---|---|---|---|---|---|---|---|---|---|---|" << (device_memory ? "---|" : "") << std::endl;
}

void print_table_row(const Row& row, bool device_memory, bool decoded) {
  const Run& r = row.median;
  std::ostringstream line;
  const PolicyOptions& policy = row.cell.policy;
  const bool own_kernel = row.cell.attention != models::AttentionPath::kAuto;
  line << "| " << row.context << " | " << policy.policy << (policy.params == "{}" ? "" : " " + policy.params)
       << (own_kernel ? ", " + models::attention_path_name(row.cell.attention) + " attention" : "")
       << (row.cell.cuda_graphs ? ", CUDA graphs" : "") << " | "
       << policy.budget;
  if (!row.error.empty()) {
    std::string error = row.error.substr(0, row.error.find('\n'));  // a table row is one line
    std::cout << line.str() << " | " << policy.protocol << " | failed: " << error << " |" << std::endl;
    return;
  }
  if (!policies::Budget::parse(policy.budget).is_unlimited()) line << " (" << r.budget << ")";
  line << " | " << policy.protocol << " | " << static_cast<int64_t>(r.prefill_tps + 0.5) << " | ";
  if (decoded)
    line << static_cast<int64_t>(r.decode_tps + 0.5) << " | " << static_cast<int64_t>(r.step_us + 0.5) << " us | "
         << std::fixed << std::setprecision(1) << r.policy_us_per_step << " us ("
         << (r.step_us > 0 ? 100.0 * r.policy_us_per_step / r.step_us : 0.0) << "%) | ";
  else
    line << "- | - | - | ";  // --decode 0: no step to time
  line << mib(r.peak_bytes) << " | "
       << mib(r.end_bytes) << " | " << mib(r.allocated_peak_bytes) << " | " << r.max_len << " |";
  if (device_memory)
    line << " " << (row.device_peak ? mib(row.device_peak->allocated_bytes) + " / " + mib(row.device_peak->reserved_bytes)
                                    : std::string("-"))
         << " |";
  std::cout << line.str() << std::endl;
}

int run_summary(const BenchArgs& args) {
  if (args.decode < 0) throw std::invalid_argument("--decode must be >= 0");
  require_positions(args.decode, "--decode " + std::to_string(args.decode));
  for (int64_t context : args.contexts) {
    if (context < 1) throw std::invalid_argument("--context must be at least 1, got " + std::to_string(context));
    const std::string what = "--context " + std::to_string(context) + " with --decode " + std::to_string(args.decode);
    require_positions(context, what);  // each within the bound first: the sum cannot wrap
    require_positions(context + args.decode, what);
  }
  if (args.runs < 1) throw std::invalid_argument("--runs must be at least 1");
  if (args.warmup < 0) throw std::invalid_argument("--warmup must be >= 0");
  const std::vector<BenchCell> cells =
      parse_bench_cells(args.cells, BenchCell{args.policy, models::parse_attention_path(args.attention), args.cuda_graphs});
  for (const BenchCell& cell : cells) {
    check_attention_path(cell.attention, args.model.device);
    check_cuda_graphs(cell.cuda_graphs, args.model.device);
  }
  if (!args.trace.empty() && cells.size() * args.contexts.size() != 1)
    throw std::invalid_argument("--trace records one cell at one context; this command has " +
                                std::to_string(cells.size() * args.contexts.size()));
  if (!args.trace.empty() && !models::OpTrace::available())
    throw std::invalid_argument("--trace: this build's libtorch has no legacy profiler (RecordProfile)");
  if (!args.trace.empty() && !std::ofstream(args.trace))
    throw std::invalid_argument(args.trace + ": cannot write the trace (--trace)");
  models::use_cpu_threads(args.threads);
  const auto load_start = std::chrono::steady_clock::now();
  LoadedRuntime rt = load_runtime(args.model);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  const bool device_memory = models::device_peak(rt.transformer->device()).has_value();
  // Beyond the trained context the speed is real but the model's outputs are not, and a long
  // context on a small model takes long enough to look like a hang.
  const int64_t trained = rt.loaded.config.max_seq_len;
  const int64_t longest = *std::max_element(args.contexts.begin(), args.contexts.end()) + args.decode;
  if (longest > trained)
    std::cerr << "kvbench bench: warning: " << longest << " tokens (context + --decode) is more than the model's context of "
              << trained << " (" << trained_context_field(rt.loaded)
              << "; positions beyond it were never trained; prefill grows quadratically with the context)\n";
  if (!args.json) print_table_head(rt, args, load_s, device_memory);
  // Rows are printed as they finish (a JSON object per line with --json): a long grid shows
  // progress, and what finished is kept if a later cell is cut short.
  int failed = 0;
  for (const BenchCell& cell : cells)
    for (int64_t context : args.contexts) {
      const Row row = measure(rt, cell, context, args);
      failed += !row.error.empty();
      if (args.json) std::cout << row_json(row, rt, args, load_s).dump() << std::endl;
      else print_table_row(row, device_memory, args.decode > 0);
    }
  if (failed > 0) std::cerr << failed << " of " << cells.size() * args.contexts.size() << " rows failed\n";
  return failed > 0 ? 1 : 0;
}

const CommandRegistration bench_registration(
    "bench",
    "Summary table: prefill/decode tokens/s, per-step policy cost, KV bytes and device memory for a model, a row per "
    "context and policy cell, the model loaded once (--programs: the Google Benchmark programs)",
    [](CLI::App& app) {
      auto args = std::make_shared<BenchArgs>();
      args->model.add_to(app);
      args->policy.add_to(app);
      // allow_extra_args(false): one JSON value per --cell, whole; a vector option otherwise splits
      // a value in brackets at its commas ('[1,2]' reached the parser as "1" and "2").
      app.add_option("--cell", args->cells,
                     "a row's policy as a JSON object, e.g. '{\"policy\": \"snapkv\", \"budget\": 1024, \"protocol\": "
                     "\"oneshot\"}' (keys " + std::string(kBenchCellKeys) + "; the others "
                     "come from the options above); repeat for more rows, each run at every --context")
          ->allow_extra_args(false);
      app.add_option("--context", args->contexts, "prompt tokens (synthetic ids); several, comma-separated, give a row each")
          ->delimiter(',')
          ->capture_default_str();
      app.add_option("--decode", args->decode,
                     "tokens decoded after the prompt (context + decode at most 2^24 = 16777216 positions)")
          ->capture_default_str();
      app.add_option("--runs", args->runs, "repetitions; the table shows the median")->capture_default_str();
      app.add_option("--warmup", args->warmup, "runs before the measured ones, not counted (one-off CUDA costs)")
          ->capture_default_str();
      app.add_option("--attention", args->attention,
                     "auto (the fused kernel where libtorch has one and the policy needs no statistics), chunked "
                     "(always the matmul-softmax path, to compare the two) or split_k (a decoding query on CUDA "
                     "through kvbench's split-K kernel, the statistics a policy wants from the chunked pass; a CUDA build only)")
          ->capture_default_str()
          ->check(CLI::IsMember(models::attention_path_names()));
      app.add_flag("--cuda-graphs", args->cuda_graphs,
                   "decoding steps replay their dense work (everything but the KV append and the attention) as "
                   "CUDA graphs, one launch per layer instead of ~30 (CUDA builds only; the same kernels, the same tokens)");
      app.add_option("--threads", args->threads,
                     "threads for the BLAS products, one for elementwise ops (models/cpu_threads.hpp; 0 = libtorch's "
                     "default, OMP_NUM_THREADS or the physical cores, as every command)")
          ->capture_default_str()
          ->check(CLI::Range(0, 4096));
      app.add_option("--trace", args->trace,
                     "write a Chrome trace (torch profiler) of the decode steps of one more run, not counted; "
                     "scripts/trace_ops.py sums it per operator");
      app.add_flag("--json", args->json, "print a JSON object");
      CLI::Option* programs =
          app.add_flag("--programs", args->programs, "run the Google Benchmark programs in build/bench instead");
      app.add_option("--filter", args->filter, "with --programs: Google Benchmark --benchmark_filter regex")->needs(programs);
      app.add_option("--program", args->program, "with --programs: only programs whose name contains this")->needs(programs);
      return [args] { return args->programs ? run_programs(args->filter, args->program) : run_summary(*args); };
    });

}  // namespace
}  // namespace kvbench::harness
