#include "tokenizers/sentencepiece_tokenizer.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "tokenizers/model_error.hpp"
#include "tokenizers/sentencepiece_shim/spm_interface.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {
namespace {

using CreateFn = SentencePieceInterface* (*)(const char*, std::string*);

// Where libkvb_sentencepiece.so is: $KVBENCH_SPM_SHIM, the build tree, or beside the executable.
std::vector<std::string> shim_candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("KVBENCH_SPM_SHIM")) out.push_back(env);
  out.push_back(KVBENCH_SPM_SHIM_PATH);
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / "libkvb_sentencepiece.so").string());
  return out;
}

CreateFn load_shim() {
  static CreateFn create = nullptr;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string& path : shim_candidates()) {
      if (!std::filesystem::exists(path)) continue;
      // DEEPBIND: sentencepiece's own (builtin) protobuf wins inside it; LOCAL: nothing leaks out.
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!handle) {
        failure = dlerror();
        continue;
      }
      create = reinterpret_cast<CreateFn>(dlsym(handle, "kvbench_spm_create"));
      if (create) return;
      failure = path + ": no kvbench_spm_create";
    }
    if (failure.empty()) failure = "libkvb_sentencepiece.so not found (set KVBENCH_SPM_SHIM)";
  });
  if (!create) throw std::runtime_error("sentencepiece: " + failure);
  return create;
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_path) {
  if (!std::filesystem::is_regular_file(model_path)) throw ModelLoadError(model_path, "tokenizer file not found");
  std::string error;
  sp_.reset(load_shim()(model_path.c_str(), &error));
  if (!sp_) throw ModelLoadError(model_path, "not a sentencepiece model: " + error);
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int> SentencePieceTokenizer::encode(const std::string& text, bool add_special_tokens,
                                                const std::vector<ExtraSpecialToken>& extra) const {
  // sentencepiece would map invalid bytes to U+FFFD and score a different text: refused, as the
  // tokenizer.json backend refuses it.
  utf8::require_valid(text, "tokenizer input");
  // transformers' LlamaTokenizer splits the text on its special tokens' strings (a chat template
  // writes "<s>") and encodes each piece between them on its own (legacy mode).
  std::vector<std::pair<std::string, int>> specials;
  for (int id : {bos_id(), eos_id()})
    if (id >= 0 && id < vocab_size()) specials.emplace_back(sp_->id_to_piece(id), id);
  for (const ExtraSpecialToken& t : extra) specials.emplace_back(t.content, t.id);
  std::vector<int> ids;
  if (add_special_tokens) ids.push_back(bos_id());
  size_t start = 0;
  while (start <= text.size()) {
    size_t found = std::string::npos;
    const std::pair<std::string, int>* which = nullptr;
    for (const auto& special : specials) {
      const size_t at = special.first.empty() ? std::string::npos : text.find(special.first, start);
      if (at < found) found = at, which = &special;
    }
    const std::string part = text.substr(start, found == std::string::npos ? std::string::npos : found - start);
    if (!part.empty()) {
      const std::vector<int> piece_ids = sp_->encode(part);
      ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
    }
    if (!which) break;
    ids.push_back(which->second);
    start = found + which->first.size();
  }
  return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int>& ids, bool) const {
  std::vector<int> clean;
  clean.reserve(ids.size());
  for (int id : ids)
    if (id != bos_id() && id != eos_id() && id >= 0 && id < vocab_size()) clean.push_back(id);
  return sp_->decode(clean);
}

std::optional<int> SentencePieceTokenizer::token_to_id(const std::string& token) const {
  for (int id = 0; id < vocab_size(); ++id)
    if (sp_->id_to_piece(id) == token) return id;
  return std::nullopt;
}

int SentencePieceTokenizer::bos_id() const { return sp_->bos_id(); }
int SentencePieceTokenizer::eos_id() const { return sp_->eos_id(); }
int SentencePieceTokenizer::vocab_size() const { return sp_->piece_size(); }
std::string SentencePieceTokenizer::piece(int id) const { return id >= 0 && id < vocab_size() ? sp_->id_to_piece(id) : ""; }

}  // namespace kvbench::models
