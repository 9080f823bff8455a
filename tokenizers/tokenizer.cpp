#include "tokenizers/tokenizer.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "datasets/regular_file.hpp"
#include "tokenizers/generation_config.hpp"
#include "tokenizers/hf_tokenizer.hpp"
#include "tokenizers/model_error.hpp"
#include "tokenizers/sentencepiece_tokenizer.hpp"

namespace kvbench::models {
namespace fs = std::filesystem;

namespace {

std::unique_ptr<TokenizerBackend> open_backend(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name == "vocab.json" || name == "merges.txt")
    return load_gpt2_vocab_merges((file.parent_path() / "vocab.json").string(), (file.parent_path() / "merges.txt").string());
  if (file.extension() == ".json") return load_tokenizer_json(file.string());
  return std::make_unique<SentencePieceTokenizer>(file.string());
}

int id_of_named_token(const TokenizerBackend& backend, const std::string& config_path, const std::string& field,
                      const std::string& token) {
  auto id = backend.token_to_id(token);
  if (!id) throw ModelLoadError(config_path, field + ": \"" + token + "\" is not a token of the tokenizer");
  return *id;
}

}  // namespace

std::string resolve_tokenizer_file(const std::string& path) {
  if (!fs::exists(path)) throw ModelLoadError(path, "tokenizer file not found");
  if (!fs::is_directory(path)) {
    // A FIFO would block on open and /dev/zero never ends: only regular files are read.
    const std::string kind = datasets::non_regular_kind(path);
    if (!kind.empty())
      throw ModelLoadError(path, "the tokenizer must be a regular file or a directory, this is " + kind);
    return path;
  }
  const fs::path dir(path);
  for (const char* name : {"tokenizer.json", "tokenizer.model", "vocab.json"})
    if (fs::is_regular_file(dir / name)) return (dir / name).string();
  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".model") models.push_back(entry.path());
  if (models.size() == 1) return models[0].string();
  if (models.empty())
    throw ModelLoadError(path, "no tokenizer in this directory (tokenizer.json, tokenizer.model, vocab.json + merges.txt)");
  throw ModelLoadError(path, "several .model files in this directory; name one");
}

Tokenizer::Tokenizer(const std::string& path) : path_(resolve_tokenizer_file(path)) {
  const fs::path file(path_);
  backend_ = open_backend(file);
  bos_id_ = backend_->bos_id();
  eos_id_ = backend_->eos_id();
  const fs::path config_path = file.parent_path() / "tokenizer_config.json";
  const bool hugging_face = backend_->format() != "sentencepiece";
  if (fs::is_regular_file(config_path)) {
    config_ = read_tokenizer_config(config_path.string());
    if (hugging_face) {
      // A Hugging Face tokenizer's BOS/EOS are whatever the config names (Qwen3: no BOS).
      bos_id_ = config_.bos_token ? id_of_named_token(*backend_, config_path.string(), "bos_token", *config_.bos_token) : -1;
      eos_id_ = config_.eos_token ? id_of_named_token(*backend_, config_path.string(), "eos_token", *config_.eos_token) : -1;
    }
  } else if (backend_->format() == "vocab.json+merges.txt") {
    // GPT-2's tokenizer class defaults: <|endoftext|> is BOS and EOS.
    if (auto eot = backend_->token_to_id("<|endoftext|>")) bos_id_ = eos_id_ = *eot;
  }
  if (eos_id_ >= 0) stop_ids_.push_back(eos_id_);
  const fs::path generation = file.parent_path() / "generation_config.json";
  if (fs::is_regular_file(generation))
    for (int id : read_generation_eos_ids(generation.string()))
      if (std::find(stop_ids_.begin(), stop_ids_.end(), id) == stop_ids_.end()) stop_ids_.push_back(id);
}

Tokenizer::~Tokenizer() = default;

std::vector<int> Tokenizer::encode(const std::string& text, bool add_special_tokens) const {
  return backend_->encode(text, add_special_tokens);
}

std::vector<int> Tokenizer::encode(const std::string& text, bool add_special_tokens,
                                   const std::vector<std::string>& added_special_tokens) const {
  std::vector<ExtraSpecialToken> extra;
  int next_id = vocab_size();
  for (const std::string& content : added_special_tokens) {
    if (content.empty()) throw std::invalid_argument("tokenizer: an added special token is empty");
    const std::optional<int> known = token_to_id(content);
    extra.push_back({content, known ? *known : next_id++});
  }
  return backend_->encode(text, add_special_tokens, extra);
}

std::string Tokenizer::decode(const std::vector<int>& ids, bool skip_special_tokens) const {
  return backend_->decode(ids, skip_special_tokens);
}

}  // namespace kvbench::models
