#pragma once
// A small valid tokenizer.json for the tests of bad files, and what loading a variant of it says.
#include "tokenizers/model_error.hpp"
#include "tokenizers/tokenizer_test_support.hpp"

namespace kvbench::testing {

// A small valid byte-level tokenizer.json: every byte, three merges, one special token.
inline nlohmann::json small_tokenizer() {
  nlohmann::json vocab = nlohmann::json::object();
  const nlohmann::json gpt2 = read_json(kShared + "/models/gpt2-tokenizer/vocab.json");
  for (auto it = gpt2.begin(); it != gpt2.end(); ++it)
    if (it.value().get<int>() < 256) vocab[it.key()] = it.value();
  vocab["he"] = 256;
  vocab["ll"] = 257;
  vocab["hell"] = 258;
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", {{{"id", 259}, {"content", "<|end|>"}, {"single_word", false}, {"lstrip", false},
                             {"rstrip", false}, {"normalized", false}, {"special", true}}}},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", {{"Regex", "\\p{L}+|\\s+|\\p{N}"}}}, {"behavior", "Isolated"}, {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
          {"model",
           {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
            {"vocab", vocab}, {"merges", {"h e", "l l", "he ll"}}}}};
}

inline std::string load_error(const std::string& text) {
  ScratchDir dir;
  const std::string path = dir.write("tokenizer.json", text);
  try {
    models::Tokenizer tok(path);
  } catch (const models::ModelLoadError& e) {
    return e.what();
  }
  return "no error";
}

inline std::string load_error(const nlohmann::json& json) { return load_error(json.dump()); }

inline void expect_error(const std::string& error, const std::string& field, const std::string& what) {
  EXPECT_NE(error.find("tokenizer.json: " + field + ": "), std::string::npos) << error;
  EXPECT_NE(error.find(what), std::string::npos) << error;
}

}  // namespace kvbench::testing
