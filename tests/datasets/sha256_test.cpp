#include <gtest/gtest.h>

#include "datasets/sha256.hpp"

namespace kvbench::datasets {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FilesHashLikeTheirBytes) {
  // PROVENANCE.md records this file's sha256.
  EXPECT_EQ(sha256_file(std::string(KVBENCH_SHARED_DIR) + "/models/stories260K/stories260K.bin"),
            "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696");
  EXPECT_THROW(sha256_file("/nonexistent"), std::runtime_error);
}

}  // namespace
}  // namespace kvbench::datasets
