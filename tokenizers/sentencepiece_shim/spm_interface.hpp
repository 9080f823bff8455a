#pragma once
// The boundary between kvbench and libsentencepiece. Debian's libsentencepiece embeds its own
// protobuf (3.14) and exports those symbols; libtorch uses the system libprotobuf (3.21). Linked
// into one program, one of them always binds to the other's protobuf and dies (a segfault at load,
// or a fatal version check when a model is parsed). So sentencepiece lives in a small shared
// library of ours, libkvb_sentencepiece.so, that kvbench dlopen()s with RTLD_LOCAL|RTLD_DEEPBIND:
// its references resolve to its own protobuf first, and nothing of it enters the global scope.
#include <string>
#include <vector>

namespace kvbench::models {

class SentencePieceInterface {
 public:
  virtual ~SentencePieceInterface() = default;
  virtual std::vector<int> encode(const std::string& text) const = 0;
  virtual std::string decode(const std::vector<int>& ids) const = 0;
  virtual int bos_id() const = 0;
  virtual int eos_id() const = 0;
  virtual int piece_size() const = 0;
  virtual std::string id_to_piece(int id) const = 0;
};

}  // namespace kvbench::models

// Returns nullptr and fills *error when the model cannot be loaded.
extern "C" kvbench::models::SentencePieceInterface* kvbench_spm_create(const char* model_path, std::string* error);
