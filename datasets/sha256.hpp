#pragma once
// SHA-256 (FIPS 180-4), for the dataset and model checksums that enter every job id.
#include <cstdint>
#include <string>

namespace kvbench::datasets {

std::string sha256_hex(const std::string& bytes);
// Streams the file; throws std::runtime_error naming it when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace kvbench::datasets
