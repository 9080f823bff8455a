#include "models/model_loader.hpp"

#include <filesystem>

#include "datasets/regular_file.hpp"
#include "models/hf_loader.hpp"
#include "models/llama2c_loader.hpp"
#include "tokenizers/model_error.hpp"
#include "tokenizers/tokenizer.hpp"
#include "models/weight_checks.hpp"

namespace kvbench::models {
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> files_with_extension(const fs::path& dir, const std::string& ext) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ext) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string tokenizer_beside(const fs::path& dir, const std::string& what) {
  auto models = files_with_extension(dir, ".model");
  if (models.size() == 1) return models[0].string();
  if (models.empty())
    throw ModelLoadError(what, "no tokenizer: put one sentencepiece .model beside it or pass --tokenizer");
  throw ModelLoadError(what, "several .model files beside it; choose one with --tokenizer");
}

// A directory's llama2.c checkpoint: the one legacy float32 .bin (a `-q8` export and llama2.c's
// tokenizer .bin files are not checkpoints).
fs::path checkpoint_in(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& p : files_with_extension(dir, ".bin")) {
    const std::string stem = p.stem().string();
    if (stem.find("-q8") != std::string::npos || stem.rfind("tok", 0) == 0) continue;
    found.push_back(p);
  }
  if (found.size() == 1) return found[0];
  if (found.empty()) throw ModelLoadError(dir.string(), "no config.json and no llama2.c .bin checkpoint in this directory");
  throw ModelLoadError(dir.string(), "several .bin checkpoints in this directory; name one");
}

}  // namespace

// A FIFO would block forever on open and /dev/zero never ends: only regular files are read.
void require_regular(const std::string& path, const std::string& what) {
  const std::string kind = datasets::non_regular_kind(path);
  if (!kind.empty()) throw ModelLoadError(path, "the " + what + " must be a regular file or a model directory, this is " + kind);
}

LoadedModel locate_model(const std::string& path_in, const std::string& tokenizer) {
  std::string path = path_in;
  if (path == "stories260K") path = std::string(KVBENCH_SHARED_DIR) + "/models/stories260K";
  if (!fs::exists(path)) throw ModelLoadError(path, "no such model file or directory");
  if (!fs::is_directory(path)) require_regular(path, "model");
  LoadedModel m;
  m.name = fs::path(path).lexically_normal().filename().string();
  if (m.name.empty()) m.name = fs::path(path).lexically_normal().parent_path().filename().string();
  fs::path bin;
  if (fs::is_directory(path) && fs::exists(fs::path(path) / "config.json")) {
    m.format = "hf";
    m.weights_path = path;
    m.weight_files = hf_weight_files(path);
    m.weight_files.insert(m.weight_files.begin(), (fs::path(path) / "config.json").string());
    // tokenizer.json when present, else tokenizer.model (tokenizers/tokenizer.hpp).
    m.tokenizer_path = resolve_tokenizer_file(tokenizer.empty() ? path : tokenizer);  // a regular file
    for (const auto& file : m.weight_files)
      if (fs::exists(file)) require_regular(file, "weight file");
    return m;
  }
  m.format = "llama2c";
  if (fs::is_directory(path)) {
    bin = checkpoint_in(path);
  } else {
    bin = path;
  }
  m.weights_path = bin.string();
  m.weight_files = {bin.string()};
  // A truncated or foreign .bin is the problem to report, not the tokenizer it lacks.
  read_llama2c_config(m.weights_path);
  m.tokenizer_path =
      tokenizer.empty() ? tokenizer_beside(bin.parent_path(), bin.string()) : resolve_tokenizer_file(tokenizer);
  if (m.name.size() > 4 && m.name.substr(m.name.size() - 4) == ".bin") m.name = bin.stem().string();
  return m;
}

LoadedModel load_model(const std::string& path, const std::string& tokenizer) {
  LoadedModel m = locate_model(path, tokenizer);
  if (m.format == "hf") {
    HfCheckpoint hf = load_hf(m.weights_path);
    m.config = hf.config;
    m.weights = std::move(hf.weights);
  } else {
    Llama2cCheckpoint ck = load_llama2c(m.weights_path);
    m.config = ck.config;
    m.weights = std::move(ck.weights);
  }
  m.config.origin = m.weights_path;
  validate_weights(m.config, m.weights, m.weights_path);
  check_finite_weights(m.weights, m.weights_path);
  return m;
}

}  // namespace kvbench::models
