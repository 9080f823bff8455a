// Built into libkvb_sentencepiece.so (not into kvb_tokenizers): see spm_interface.hpp for why.
#include <sentencepiece_processor.h>

#include <stdexcept>

#include "tokenizers/sentencepiece_shim/spm_interface.hpp"

namespace {

class Processor : public kvbench::models::SentencePieceInterface {
 public:
  sentencepiece::SentencePieceProcessor sp;

  std::vector<int> encode(const std::string& text) const override {
    std::vector<int> ids;
    const auto status = sp.Encode(text, &ids);
    if (!status.ok()) throw std::runtime_error(status.ToString());
    return ids;
  }
  std::string decode(const std::vector<int>& ids) const override {
    std::string text;
    const auto status = sp.Decode(ids, &text);
    if (!status.ok()) throw std::runtime_error(status.ToString());
    return text;
  }
  int bos_id() const override { return sp.bos_id(); }
  int eos_id() const override { return sp.eos_id(); }
  int piece_size() const override { return sp.GetPieceSize(); }
  std::string id_to_piece(int id) const override { return sp.IdToPiece(id); }
};

}  // namespace

extern "C" kvbench::models::SentencePieceInterface* kvbench_spm_create(const char* model_path, std::string* error) {
  auto processor = new Processor();
  const auto status = processor->sp.Load(model_path);
  if (!status.ok()) {
    if (error) *error = status.ToString();
    delete processor;
    return nullptr;
  }
  return processor;
}
