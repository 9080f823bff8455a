// tensorio/npy: the .npy files numpy writes (the recorded LU-KV curve, written by np.save) read back
// exactly; malformed ones are one error naming the file and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "tensorio/npy.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

const std::string kCurve = std::string(KVBENCH_TESTS_DIR) + "/fixtures/policy_parity/kvpress_lukv_curve.npy";

TEST(Npy, ReadsWhatNumpyWrote) {
  const torch::Tensor curve = read_npy(kCurve);
  EXPECT_EQ(curve.scalar_type(), torch::kFloat64);
  EXPECT_EQ(curve.sizes().vec(), (std::vector<int64_t>{99, 2, 4}));
  // The recorder clips the prune ratios to [0, 1] and they rise with the row.
  EXPECT_GE(curve.min().item<double>(), 0.0);
  EXPECT_LE(curve.max().item<double>(), 1.0);
  EXPECT_LT(curve[0].mean().item<double>(), curve[98].mean().item<double>());
}

// `bytes` as a file of this test process's own, removed when the returned guard goes.
struct ScratchNpy {
  std::string path;
  ScratchNpy(const std::string& name, const std::string& bytes)
      : path((std::filesystem::temp_directory_path() / ("kvbench_" + std::to_string(::getpid()) + "_" + name)).string()) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~ScratchNpy() { std::filesystem::remove(path); }
};

std::string npy_error(const std::string& bytes) {
  const ScratchNpy file("bad.npy", bytes);
  try {
    read_npy(file.path);
  } catch (const ModelLoadError& e) {
    return e.what();
  }
  return "";
}

std::string npy(const std::string& header, const std::string& data) {
  std::string h = header;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

TEST(Npy, MalformedFilesNameTheField) {
  EXPECT_NE(npy_error("not numpy at all").find("no \\x93NUMPY magic"), std::string::npos);
  EXPECT_NE(npy_error(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", std::string(8, '\0'))).find("truncated"),
            std::string::npos);
  EXPECT_NE(npy_error(npy("{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'))).find("'descr'"),
            std::string::npos);
  EXPECT_NE(npy_error(npy("{'descr': '<f8', 'fortran_order': True, 'shape': (1,), }", std::string(8, '\0'))).find("Fortran"),
            std::string::npos);
  EXPECT_NE(npy_error(npy("{'descr': '<f8', 'fortran_order': False, }", "")).find("'shape'"), std::string::npos);
  const torch::Tensor one = [] {
    double v = 2.5;
    const ScratchNpy file("one.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }",
                                         std::string(reinterpret_cast<const char*>(&v), 8)));
    return read_npy(file.path);
  }();
  EXPECT_EQ(one.sizes().vec(), (std::vector<int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(one.item<double>(), 2.5);
}

// An array with no elements (fuzz_npy's first find: a copy from a tensor with no data).
TEST(Npy, AnEmptyArrayReadsAsAnEmptyTensor) {
  const ScratchNpy file("empty.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", ""));
  const torch::Tensor t = read_npy(file.path);
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(t.scalar_type(), torch::kFloat32);
}

}  // namespace
}  // namespace kvbench::models
