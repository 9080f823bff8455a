#pragma once
// A sentencepiece tokenizer (tokenizer.model): Llama-2's 32k, stories260K's tok512, Mistral's.
#include <memory>
#include <string>
#include <vector>

namespace kvbench::models {

class SentencePieceInterface;

class Tokenizer {
 public:
  explicit Tokenizer(const std::string& model_path);  // throws ModelLoadError naming the file
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  std::vector<int> encode(const std::string& text, bool add_bos) const;
  std::string decode(const std::vector<int>& ids) const;
  int bos_id() const;
  int eos_id() const;
  int vocab_size() const;
  std::string piece(int id) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<SentencePieceInterface> sp_;
};

}  // namespace kvbench::models
