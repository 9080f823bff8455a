// Every `context` and `input` of ../shared/data/longbench/*.jsonl survives encode -> decode through
// Llama-3's and Qwen3's tokenizers (Qwen3 normalizes to NFC first, so its round trip is NFC(x)).
#include <utf8proc.h>

#include "datasets/jsonl_reader.hpp"
#include "tokenizers/tokenizer_test_support.hpp"

namespace kvbench::testing {
namespace {

std::vector<std::string> longbench_texts() {
  std::vector<std::string> texts;
  for (const auto& entry : std::filesystem::directory_iterator(kShared + "/data/longbench")) {
    if (entry.path().extension() != ".jsonl") continue;
    datasets::for_each_jsonl(entry.path().string(), [&](const datasets::JsonRecord& r) {
      for (const char* field : {"context", "input"})
        if (r.has(field)) texts.push_back(r.string_field(field));
      return true;
    });
  }
  return texts;
}

std::string nfc(const std::string& s) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()), static_cast<utf8proc_ssize_t>(s.size()),
                              &out, static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::string r(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  free(out);
  return r;
}

class LongBenchRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(LongBenchRoundTrip, EveryContextAndInputDecodesBackToItself) {
  static const std::vector<std::string> texts = longbench_texts();
  ASSERT_GE(texts.size(), 400u);
  const models::Tokenizer& tok = real_tokenizer(GetParam());
  const bool normalizes = GetParam() == "qwen3";
  size_t tokens = 0, bytes = 0;
  for (const std::string& text : texts) {
    const std::vector<int> ids = tok.encode(text, false);
    EXPECT_EQ(tok.decode(ids), normalizes ? nfc(text) : text) << text.substr(0, 100);
    tokens += ids.size();
    bytes += text.size();
  }
  // Byte-level BPE over English prose and code: about 4 bytes per token.
  EXPECT_GT(static_cast<double>(bytes) / static_cast<double>(tokens), 3.0);
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, LongBenchRoundTrip, ::testing::Values("llama3", "qwen3"));

}  // namespace
}  // namespace kvbench::testing
