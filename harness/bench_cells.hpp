#pragma once
// The cells of `kvbench bench`: each names a policy, its parameters, budget and protocol, and runs
// at every --context, so one process (one model load) measures a grid's worth of rows. A cell is
// a JSON object, e.g. --cell '{"policy": "snapkv", "budget": 1024, "protocol": "oneshot"}'; keys it
// does not name take the command line's values (--policy, --policy-params, --budget, --protocol,
// --block, --attention, --cuda-graphs); unknown keys are errors.
#include <string>
#include <vector>

#include "harness/runtime_options.hpp"
#include "models/attention_path.hpp"

namespace kvbench::harness {

struct BenchCell {
  PolicyOptions policy;
  models::AttentionPath attention = models::AttentionPath::kAuto;
  bool cuda_graphs = false;  // decoding steps as CUDA graphs (models/captured_pieces.hpp)
};

// The keys a cell takes, for errors and --help.
extern const char* const kBenchCellKeys;

// Without specs, the one cell the command line describes. Every cell is checked (policy and its
// parameters, budget, protocol) before anything loads; errors name the cell: "--cell 2: ...".
std::vector<BenchCell> parse_bench_cells(const std::vector<std::string>& specs, const BenchCell& defaults);

// Refuses a cell whose attention path this build or `device` cannot take: split_k needs the
// split-K kernel (a CUDA build) and a CUDA device.
void check_attention_path(models::AttentionPath path, const std::string& device);
// Refuses cuda_graphs where this build or `device` cannot capture graphs.
void check_cuda_graphs(bool cuda_graphs, const std::string& device);

}  // namespace kvbench::harness
