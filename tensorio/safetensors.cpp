#include "tensorio/safetensors.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "datasets/json_parse.hpp"
#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

const std::vector<std::pair<std::string, torch::ScalarType>>& dtype_table() {
  static const std::vector<std::pair<std::string, torch::ScalarType>> table = {
      {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
      {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},   {"I8", torch::kInt8},
      {"U8", torch::kUInt8},    {"BOOL", torch::kBool}};
  return table;
}

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

torch::ScalarType safetensors_dtype(const std::string& name) {
  for (const auto& [n, t] : dtype_table())
    if (n == name) return t;
  throw std::invalid_argument("unknown dtype '" + name + "' (kvbench reads F64, F32, F16, BF16 and integer tensors)");
}

std::string safetensors_dtype_name(torch::ScalarType dtype) {
  for (const auto& [n, t] : dtype_table())
    if (t == dtype) return n;
  throw std::invalid_argument(std::string("no safetensors dtype for ") + c10::toString(dtype));
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile st;
  st.file_ = MappedFile::open(path);
  const size_t size = st.file_->size();
  if (size < 8) throw ModelLoadError(path, "truncated: shorter than the 8-byte safetensors header length");
  const uint64_t header_len = read_le64(st.file_->data());
  if (header_len > size - 8)
    throw ModelLoadError(path, "wrong header length: the first 8 bytes say " + std::to_string(header_len) +
                                   " bytes of JSON header, but only " + std::to_string(size - 8) + " bytes follow");
  const size_t data_start = 8 + header_len;
  nlohmann::json header;
  try {
    header = datasets::parse_json(
        std::string_view(reinterpret_cast<const char*>(st.file_->data()) + 8, header_len), path + " (header)");
  } catch (const datasets::DataError& e) {
    throw ModelLoadError(path, std::string("header is not valid JSON (wrong header length?): ") + e.what());
  }
  if (!header.is_object()) throw ModelLoadError(path, "header is not a JSON object");
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (!it->is_object()) throw ModelLoadError(path, "field '__metadata__' must be an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m)
        if (m->is_string()) st.metadata_[m.key()] = m->get<std::string>();
      continue;
    }
    auto fail = [&](const std::string& what) { throw ModelLoadError(path, "tensor '" + name + "': " + what); };
    const nlohmann::json& e = *it;
    if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
      fail("needs the fields dtype, shape and data_offsets");
    if (!e["dtype"].is_string()) fail("field 'dtype' must be a string");
    Entry entry;
    try {
      entry.dtype = safetensors_dtype(e["dtype"].get<std::string>());
    } catch (const std::invalid_argument& error) {
      fail(std::string("field 'dtype': ") + error.what());
    }
    if (!e["shape"].is_array()) fail("field 'shape' must be an array");
    // Checked before any arithmetic: a dimension past int64 would reach libtorch as a negative
    // size, and a wrapped product could match a small data_offsets span.
    uint64_t numel = 1;
    for (const auto& d : e["shape"]) {
      if (!d.is_number_unsigned()) fail("field 'shape' must hold non-negative integers");
      const uint64_t dim = d.get<uint64_t>();
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail("field 'shape' " + e["shape"].dump() + ": dimension " + std::to_string(dim) + " does not fit in int64");
      entry.shape.push_back(static_cast<int64_t>(dim));
      if (__builtin_mul_overflow(numel, dim, &numel))
        fail("field 'shape' " + e["shape"].dump() + ": the product of its dimensions overflows 64 bits");
    }
    uint64_t expected = 0;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(c10::elementSize(entry.dtype)), &expected) ||
        expected > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail("field 'shape' " + e["shape"].dump() + ": " + std::to_string(numel) + " elements of " +
           e["dtype"].get<std::string>() + " need more than 2^63-1 bytes");
    const auto& off = e["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      fail("field 'data_offsets' must be [begin, end]");
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end || end > size - data_start)
      fail("field 'data_offsets' [" + std::to_string(begin) + ", " + std::to_string(end) + ") lies outside the " +
           std::to_string(size - data_start) + " data bytes");
    if (end - begin != expected)
      fail("field 'data_offsets' spans " + std::to_string(end - begin) + " bytes, shape and dtype need " +
           std::to_string(expected));
    entry.begin = data_start + begin;
    entry.end = data_start + end;
    st.entries_.emplace(name, std::move(entry));
  }
  // Two tensors sharing bytes would silently alias each other's weights (safetensors' own
  // reader rejects this too).
  std::vector<std::pair<const std::string*, const Entry*>> by_offset;
  for (const auto& [name, entry] : st.entries_)
    if (entry.end > entry.begin) by_offset.push_back({&name, &entry});
  std::sort(by_offset.begin(), by_offset.end(), [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i].second->begin < by_offset[i - 1].second->end)
      throw ModelLoadError(path, "tensors '" + *by_offset[i - 1].first + "' and '" + *by_offset[i].first +
                                     "' overlap: their data_offsets share bytes");
  return st;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

torch::Tensor SafetensorsFile::tensor(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw ModelLoadError(path(), "missing tensor '" + name + "'");
  const Entry& e = it->second;
  void* data = const_cast<uint8_t*>(file_->data() + e.begin);
  auto options = torch::TensorOptions().dtype(e.dtype);
  if (reinterpret_cast<uintptr_t>(data) % c10::elementSize(e.dtype) != 0) {
    torch::Tensor copy = torch::empty(e.shape, options);
    std::memcpy(copy.data_ptr(), data, e.end - e.begin);
    return copy;
  }
  std::shared_ptr<MappedFile> keep_alive = file_;
  return torch::from_blob(data, e.shape, [keep_alive](void*) {}, options);
}

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> blobs;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    const uint64_t bytes = static_cast<uint64_t>(c.numel()) * c.element_size();
    header[name] = {{"dtype", safetensors_dtype_name(c.scalar_type())},
                    {"shape", c.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    blobs.push_back(c);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ModelLoadError(tmp, "cannot write");
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& c : blobs)
      out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.numel() * c.element_size()));
    if (!out) throw ModelLoadError(tmp, "write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw ModelLoadError(path, "cannot rename the temporary file");
}

}  // namespace kvbench::models
