// fuzz-sources: tokenizers/hf_tokenizer.cpp tokenizers/hf_tokenizer_json.cpp tokenizers/bpe_model.cpp tokenizers/hf_normalizer.cpp tokenizers/hf_pre_tokenizer.cpp tokenizers/hf_post_processor.cpp tokenizers/hf_decoder.cpp tokenizers/added_vocabulary.cpp tokenizers/json_fields.cpp tokenizers/onig_regex.cpp tokenizers/utf8_text.cpp tokenizers/byte_level.cpp tokenizers/model_json.cpp datasets/json_parse.cpp datasets/regular_file.cpp
// libFuzzer target: arbitrary bytes as a tokenizer.json. Loading must either succeed or throw
// ModelLoadError (or an exception for an input the tokenizer rejects) — never crash,
// hang or read out of bounds; a tokenizer that loads must encode and decode a few texts.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "tokenizers/hf_tokenizer.hpp"
#include "tokenizers/model_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/kvbench_fuzz_tokenizer_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    auto tok = kvbench::models::load_tokenizer_json(path);
    for (const char* text : {"", "Hello world", "  a\n\nb\t123 <|end|> caf\xC3\xA9 \xF0\x9F\x98\x80"}) {
      const std::vector<int> ids = tok->encode(text, true);
      (void)tok->decode(ids, false);
      (void)tok->decode(ids, true);
    }
    (void)tok->decode({0, 1, 2, -1, 1 << 30}, false);
  } catch (const kvbench::models::ModelLoadError&) {
  } catch (const std::invalid_argument&) {  // e.g. a normalizer rejecting the text
  } catch (const std::runtime_error&) {     // e.g. Oniguruma's backtracking limit on a pathological pattern
  }
  return 0;
}
