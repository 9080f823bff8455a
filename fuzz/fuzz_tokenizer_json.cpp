// fuzz-sources: models/hf_tokenizer.cpp models/hf_tokenizer_json.cpp models/bpe_model.cpp models/hf_normalizer.cpp models/hf_pre_tokenizer.cpp models/hf_post_processor.cpp models/hf_decoder.cpp models/added_vocabulary.cpp models/json_fields.cpp models/onig_regex.cpp models/utf8_text.cpp models/byte_level.cpp models/model_json.cpp datasets/json_parse.cpp datasets/regular_file.cpp
// libFuzzer target: arbitrary bytes as a tokenizer.json. Loading must either succeed or throw
// ModelLoadError (or an exception for an input the tokenizer rejects) — never crash,
// hang or read out of bounds; a tokenizer that loads must encode and decode a few texts.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "models/hf_tokenizer.hpp"
#include "models/model_error.hpp"

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
