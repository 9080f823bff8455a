#pragma once
// Rewrites the JSON header of a safetensors file in place; the data bytes (whose offsets are
// relative to the end of the header) stay as they are. For tests that corrupt one header field.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

namespace kvbench::testing {

inline void edit_safetensors_header(const std::filesystem::path& file, const std::function<void(nlohmann::json&)>& edit) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint64_t len = 0;
  std::memcpy(&len, bytes.data(), 8);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, len));
  edit(header);
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the format pads the header to 8 bytes
  const uint64_t new_len = text.size();
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      << std::string(reinterpret_cast<const char*>(&new_len), 8) + text + bytes.substr(8 + len);
}

}  // namespace kvbench::testing
