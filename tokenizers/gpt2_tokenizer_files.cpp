// GPT-2's vocab.json + merges.txt -> HfTokenizer with the pipeline transformers' GPT2TokenizerFast
// builds from these two files (tokenization_gpt2 / convert_slow_tokenizer GPT2Converter).
#include <fstream>
#include <sstream>

#include "tokenizers/byte_level.hpp"
#include "tokenizers/hf_tokenizer.hpp"
#include "tokenizers/model_error.hpp"
#include "tokenizers/model_json.hpp"

namespace kvbench::models {

std::unique_ptr<HfTokenizer> load_gpt2_vocab_merges(const std::string& vocab_path, const std::string& merges_path) {
  const nlohmann::json vocab_json = read_model_json(vocab_path, "vocab.json");
  if (!vocab_json.is_object()) throw ModelLoadError(vocab_path, "must be an object of token: id");
  BpeModel::Vocab vocab;
  for (auto it = vocab_json.begin(); it != vocab_json.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > (1 << 24) - 1)
      throw ModelLoadError(vocab_path, it.key() + ": must be a non-negative integer id below 2^24");
    vocab.emplace(it.key(), it.value().get<int>());
  }
  if (const std::string problem = vocab_problem(vocab); !problem.empty()) throw ModelLoadError(vocab_path, problem);

  std::ifstream min(merges_path, std::ios::binary);
  if (!min) throw ModelLoadError(merges_path, "cannot read the file");
  BpeModel::Merges merges;
  std::vector<int> lines;  // file line of each merge, for errors
  std::string line;
  for (int number = 1; std::getline(min, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("#version", 0) == 0) continue;
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      throw ModelLoadError(merges_path + ":" + std::to_string(number), "a merge is two tokens separated by one space, got \"" + line + "\"");
    merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    lines.push_back(number);
  }

  HfPipeline p;
  p.model = std::make_unique<BpeModel>(std::move(vocab), merges, BpeOptions{}, [&](size_t i, const std::string& what) {
    throw ModelLoadError(merges_path + ":" + std::to_string(lines[i]), what);
  });
  p.pre_tokenizer = make_byte_level_pre_tokenizer(/*add_prefix_space=*/false, /*use_regex=*/true,
                                                  {vocab_path, "the ByteLevel pre-tokenizer's GPT-2 pattern"});
  p.decoder = make_byte_level_decoder();
  if (auto eot = p.model->token_to_id("<|endoftext|>")) {
    AddedToken t;
    t.content = "<|endoftext|>";
    t.id = *eot;
    t.special = true;
    p.added_tokens.push_back(t);
  }
  return std::make_unique<HfTokenizer>(std::move(p), "vocab.json+merges.txt");
}

}  // namespace kvbench::models
