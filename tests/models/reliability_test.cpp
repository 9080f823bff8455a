// Issue #14 in the model loaders: non-regular files, tokenizer/model mismatch, device and dtype
// names, NaN in a llama2.c checkpoint.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>

#include "models/device_options.hpp"
#include "tokenizers/model_error.hpp"
#include "models/model_loader.hpp"
#include "models/weight_checks.hpp"
#include "error_text.hpp"

namespace kvbench::models {
namespace {
namespace fs = std::filesystem;

const std::string kStoriesDir = std::string(KVBENCH_SHARED_DIR) + "/models/stories260K";

using kvbench::testing::error_of;
using kvbench::testing::contains;

TEST(ModelFiles, FifoAndDevicesAreRefusedWithoutBlocking) {
  const std::string fifo = (fs::temp_directory_path() / ("kvbench_model_fifo_" + std::to_string(::getpid()))).string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string tokenizer = kStoriesDir + "/tok512.model";
  // Run in a thread with a deadline: the bug was a process blocked forever in open().
  auto pending = std::async(std::launch::async, [&] { return error_of([&] { load_model(fifo, tokenizer); }); });
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "blocked on the FIFO";
  const std::string msg = pending.get();
  EXPECT_TRUE(contains(msg, fifo + ": the model must be a regular file or a model directory, this is a FIFO")) << msg;
  fs::remove(fifo);
  const std::string zero = error_of([&] { load_model("/dev/zero", tokenizer); });
  EXPECT_TRUE(contains(zero, "/dev/zero: the model must be a regular file or a model directory, this is a character device"))
      << zero;
  EXPECT_TRUE(contains(error_of([&] { locate_model(kStoriesDir + "/stories260K.bin", "/dev/zero"); }),
                       "the tokenizer must be a regular file"));
}

TEST(ModelFiles, TokenizerLargerThanTheEmbeddingIsAnErrorNamingBoth) {
  LoadedModel m = locate_model(kStoriesDir);
  m.config.vocab_size = 512;
  const std::string msg = error_of([&] { check_tokenizer_vocab(32000, m); });
  EXPECT_TRUE(contains(msg, m.tokenizer_path + ": the tokenizer has 32000 tokens, more than the 512 rows")) << msg;
  EXPECT_TRUE(contains(msg, m.weights_path)) << msg;
  EXPECT_NO_THROW(check_tokenizer_vocab(512, m));
  EXPECT_NO_THROW(check_tokenizer_vocab(500, m));  // models may pad their vocabulary
}

TEST(DeviceOptions, NamesAreCheckedBeforeLibtorchSeesThem) {
  for (const std::string bad : {"tpu", "", "cuda:", "cuda:x", "CPU", "cuda:99999"}) {
    const std::string msg = error_of([&] { parse_device(bad); });
    EXPECT_TRUE(contains(msg, "device must be cpu, cuda or cuda:N, got '" + bad + "'")) << msg;
    EXPECT_FALSE(contains(msg, "Exception raised from")) << msg;
  }
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  EXPECT_EQ(parse_device("cuda:1").index(), 1);
  EXPECT_TRUE(contains(error_of([] { parse_dtype("float16", torch::Device(torch::kCPU)); }), "float16 runs on CUDA only"));
  EXPECT_EQ(parse_dtype("float16", torch::Device(torch::kCUDA)), torch::kFloat16);
  EXPECT_EQ(parse_dtype("auto", torch::Device(torch::kCPU)), torch::kFloat32);
  EXPECT_TRUE(contains(error_of([] { parse_dtype("fp8", torch::Device(torch::kCPU)); }), "got 'fp8'"));
}

TEST(ModelFiles, NanInALlama2cCheckpointIsRefusedNamingTheTensor) {
  const std::string copy = (fs::temp_directory_path() / ("kvbench_nan_" + std::to_string(::getpid()) + ".bin")).string();
  fs::copy_file(kStoriesDir + "/stories260K.bin", copy, fs::copy_options::overwrite_existing);
  int32_t header[7];
  std::ifstream(copy, std::ios::binary).read(reinterpret_cast<char*>(header), sizeof header);
  const int64_t dim = header[0], layers = header[2], vocab = std::abs(header[5]);
  // The first float of layer 0's wq: after the embedding and the attention norms.
  const int64_t offset = 28 + 4 * (vocab * dim + layers * dim);
  const float nan = std::nanf("");
  {
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offset);
    f.write(reinterpret_cast<const char*>(&nan), 4);
  }
  const std::string msg = error_of([&] { load_model(copy, kStoriesDir + "/tok512.model"); });
  fs::remove(copy);
  EXPECT_TRUE(contains(msg, copy + ": tensor 'layers.0.wq' holds NaN or infinite values")) << msg;
}

}  // namespace
}  // namespace kvbench::models
