// tensorio/torch_file: what torch.save wrote (the FastKVzip gate files of
// scripts/policy_parity/kvpress_fastkvzip.py, NumPy arrays beside bfloat16 and float32 tensors)
// reads back exactly; a damaged file is one ModelLoadError naming it, never a crash.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "tensorio/torch_file.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

const std::filesystem::path kParityFixtures = std::filesystem::path(KVBENCH_TESTS_DIR) / "fixtures" / "policy_parity";

std::string bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(TorchFile, ReadsWhatTorchSaveWrote) {
  std::ifstream in(kParityFixtures / "kvpress_fastkvzip.json");
  const nlohmann::json reader = nlohmann::json::parse(in)["reference"]["reader"];
  const PickleRef root = read_torch_file((kParityFixtures / reader["file"].get<std::string>()).string());
  ASSERT_EQ(root->kind, PickleValue::Kind::kDict);
  std::vector<std::string> keys;
  for (const auto& [k, v] : root->entries) keys.push_back(k->text);
  EXPECT_EQ(keys, (std::vector<std::string>{"module", "loss", "acc", "loss_train", "acc_train"})) << "insertion order";
  EXPECT_EQ(root->get("loss")->kind, PickleValue::Kind::kOpaque) << "a NumPy array is read past, not run";
  EXPECT_EQ(root->get("loss")->text, "numpy.core.multiarray._reconstruct");
  const PickleValue* module = root->get("module");
  ASSERT_EQ(module->kind, PickleValue::Kind::kList);
  ASSERT_EQ(module->items.size(), 1u);
  const PickleValue& state = *module->items[0];
  ASSERT_EQ(state.entries.size(), reader["tensors"].size());
  for (const auto& [name, want] : reader["tensors"].items()) {
    SCOPED_TRACE(name);
    const PickleValue* t = state.get(name);
    ASSERT_TRUE(t && t->kind == PickleValue::Kind::kTensor);
    EXPECT_EQ(std::string(c10::toString(t->tensor.scalar_type())), want["dtype"] == "bfloat16" ? "BFloat16" : "Float");
    EXPECT_EQ(t->tensor.sizes().vec(), want["shape"].get<std::vector<int64_t>>());
    const std::vector<float> values = want["values"].get<std::vector<float>>();
    EXPECT_TRUE(torch::equal(t->tensor.to(torch::kFloat32).reshape(-1), torch::tensor(values)));
  }
}

// A zip archive of one stored entry (what torch.save writes, without its alignment padding).
std::string stored_zip(const std::string& name, const std::string& data) {
  auto le = [](uint64_t v, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
  };
  const std::string sizes = le(0, 4) + le(data.size(), 4) + le(data.size(), 4) + le(name.size(), 2) + le(0, 2);
  const std::string local = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + sizes + name + data;
  const std::string central = le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + sizes + le(0, 2) + le(0, 2) +
                              le(0, 2) + le(0, 4) + le(0, 4) + name;
  return local + central + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(1, 2) + le(1, 2) + le(central.size(), 4) + le(local.size(), 4) + le(0, 2);
}

TEST(TorchFile, DamagedFilesAreOneErrorNamingThem) {
  const std::string good = bytes_of(kParityFixtures / "fastkvzip" / "bf16_L1.pt");
  const std::string path = (std::filesystem::temp_directory_path() / ("kvbench_damaged_" + std::to_string(::getpid()) + ".pt")).string();
  auto read = [&](const std::string& bytes) -> std::string {
    std::ofstream(path, std::ios::binary) << bytes;
    try {
      read_torch_file(path);
    } catch (const ModelLoadError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(read("PK\x03\x04 not really a zip").find(path + ": torch.save archive: not a zip archive"), std::string::npos);
  EXPECT_NE(read(good.substr(0, good.size() / 2)).find(path + ": torch.save archive"), std::string::npos);
  // Every damaged byte either reads (data, names) or is one ModelLoadError: no other exception,
  // no crash, no runaway allocation.
  std::mt19937 rng(7);
  int errors = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bad = good;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    errors += !read(bad).empty();
  }
  EXPECT_GT(errors, 0);
  // A million nested lists (two opcodes each) read and free without exhausting the stack.
  const size_t at = good.find("data.pkl");
  ASSERT_NE(at, std::string::npos);
  std::string nested = "\x80\x02";
  for (int i = 0; i < 1000000; ++i) nested += "]";
  for (int i = 0; i < 999999; ++i) nested += "a";
  nested += ".";
  EXPECT_EQ(read(stored_zip("deep/data.pkl", nested)), "");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kvbench::models
