// Malformed llama2.c checkpoints: each is one clear error naming the file and what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "models/llama2c_loader.hpp"
#include "tokenizers/model_error.hpp"
#include "models/model_loader.hpp"
#include "scratch_dirs.hpp"

namespace kvbench::models {
namespace {
namespace fs = std::filesystem;

const std::string kBin = std::string(KVBENCH_SHARED_DIR) + "/models/stories260K/stories260K.bin";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// In a folder removed when the test program ends (each call its own, so no test sees another's).
std::string write_temp(const std::string& bytes) {
  const std::string path = (testing::fresh_dir("kvbench-bin") / "model.bin").string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

std::string error_of(const std::string& bytes) {
  const std::string path = write_temp(bytes);
  try {
    load_llama2c(path);
  } catch (const ModelLoadError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path, 0), 0u) << "the error must start with the file: " << what;
    return what;
  }
  return "(no error)";
}

TEST(Llama2cErrors, TruncatedFile) {
  const std::string bytes = read_bytes(kBin);
  EXPECT_NE(error_of(bytes.substr(0, bytes.size() / 2)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(bytes.substr(0, 10)).find("shorter than the 28-byte llama2.c header"), std::string::npos);
}

TEST(Llama2cErrors, ImpossibleHeaderNamesTheField) {
  std::string bytes = read_bytes(kBin);
  const int32_t heads = 0;
  std::memcpy(bytes.data() + 12, &heads, 4);  // n_heads
  EXPECT_NE(error_of(bytes).find("impossible header: n_heads = 0"), std::string::npos);
  bytes = read_bytes(kBin);
  const int32_t kv_heads = 3;  // does not divide n_heads = 8
  std::memcpy(bytes.data() + 16, &kv_heads, 4);
  EXPECT_NE(error_of(bytes).find("n_heads is not a multiple of n_kv_heads"), std::string::npos);
}

TEST(Llama2cErrors, TrailingBytesDoNotMatchTheHeader) {
  EXPECT_NE(error_of(read_bytes(kBin) + "xxxx").find("header does not match the file"), std::string::npos);
}

// The truncation is the problem to report, not the tokenizer a lone broken file lacks.
TEST(Llama2cErrors, TruncatedFileWithoutATokenizerIsReportedAsTruncated) {
  const std::string path = write_temp(read_bytes(kBin).substr(0, 20));  // alone in its folder
  std::string error = "(no error)";
  try {
    load_model(path);
  } catch (const ModelLoadError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find(path + ": truncated: shorter than the 28-byte llama2.c header"), std::string::npos) << error;
}

}  // namespace
}  // namespace kvbench::models
