#include "harness/bench_cells.hpp"

#include <stdexcept>

#include "datasets/json_parse.hpp"
#include "models/captured_pieces.hpp"
#include "models/device_options.hpp"

namespace kvbench::harness {

const char* const kBenchCellKeys = "policy, policy_params, budget, protocol, block, attention, cuda_graphs";

namespace {

std::string text_field(const nlohmann::json& value, const std::string& key) {
  if (!value.is_string()) throw std::invalid_argument("\"" + key + "\" must be a string, got " + value.dump());
  return value.get<std::string>();
}

BenchCell parse_cell(const std::string& spec, const BenchCell& defaults) {
  nlohmann::json object;
  try {
    object = datasets::parse_json(spec, "cell");
  } catch (const datasets::DataError& e) {
    throw std::invalid_argument(e.what());
  }
  if (!object.is_object()) throw std::invalid_argument("a cell is a JSON object, got " + object.dump());
  BenchCell cell = defaults;
  PolicyOptions& policy = cell.policy;
  for (const auto& [key, value] : object.items()) {
    if (key == "policy") {
      policy.policy = text_field(value, key);
    } else if (key == "protocol") {
      policy.protocol = text_field(value, key);
    } else if (key == "policy_params") {
      if (!value.is_object()) throw std::invalid_argument("\"policy_params\" must be an object, got " + value.dump());
      policy.params = value.dump();
    } else if (key == "budget") {
      // Tokens per KV head as a number, or the --budget forms as text ("20%", "full").
      if (value.is_number_unsigned()) policy.budget = std::to_string(value.get<uint64_t>());
      else if (value.is_string()) policy.budget = value.get<std::string>();
      else throw std::invalid_argument("\"budget\" must be a token count (512) or text (\"20%\", \"full\"), got " + value.dump());
    } else if (key == "block") {
      if (!value.is_number_unsigned() || value.get<uint64_t>() == 0)
        throw std::invalid_argument("\"block\" must be a positive integer, got " + value.dump());
      policy.block = value.get<int64_t>();
    } else if (key == "attention") {
      cell.attention = models::parse_attention_path(text_field(value, key));
    } else if (key == "cuda_graphs") {
      if (!value.is_boolean()) throw std::invalid_argument("\"cuda_graphs\" must be true or false, got " + value.dump());
      cell.cuda_graphs = value.get<bool>();
    } else {
      throw std::invalid_argument("unknown key \"" + key + "\" (a cell takes " + kBenchCellKeys + ")");
    }
  }
  return cell;
}

// The checks `kvbench bench` would otherwise meet after loading the model.
void validate(const BenchCell& cell) {
  cell.policy.params_json();
  session_options(cell.policy);
}

}  // namespace

std::vector<BenchCell> parse_bench_cells(const std::vector<std::string>& specs, const BenchCell& defaults) {
  if (specs.empty()) {
    validate(defaults);
    return {defaults};
  }
  std::vector<BenchCell> cells;
  for (size_t i = 0; i < specs.size(); ++i) {
    try {
      cells.push_back(parse_cell(specs[i], defaults));
      validate(cells.back());
    } catch (const std::exception& e) {
      throw std::invalid_argument("--cell " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  return cells;
}

void check_attention_path(models::AttentionPath path, const std::string& device) {
  if (path != models::AttentionPath::kSplitK) return;
  if (!models::split_k_decode_built())
    throw std::invalid_argument("attention \"split_k\": this build has no split-K kernel (it needs a CUDA libtorch and "
                                "a CUDA compiler: scripts/cuda_build.sh)");
  if (!models::parse_device(device).is_cuda())
    throw std::invalid_argument("attention \"split_k\" runs on CUDA only, and the device is \"" + device + "\"");
}

void check_cuda_graphs(bool cuda_graphs, const std::string& device) {
  if (!cuda_graphs) return;
  const torch::Device parsed = models::parse_device(device);
  if (!parsed.is_cuda()) throw std::invalid_argument("CUDA graphs run on CUDA only, and the device is \"" + device + "\"");
  if (!models::CapturedPieces::captures(parsed))
    throw std::invalid_argument("CUDA graphs: this build has none (it needs a CUDA libtorch with at::cuda::CUDAGraph: "
                                "scripts/cuda_build.sh)");
}

}  // namespace kvbench::harness
