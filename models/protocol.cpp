#include "models/protocol.hpp"

#include <stdexcept>

namespace kvbench::models {

Protocol parse_protocol(const std::string& name) {
  if (name == "oneshot") return Protocol::kOneShot;
  if (name == "stream") return Protocol::kStream;
  if (name == "decode") return Protocol::kDecode;
  throw std::invalid_argument("protocol must be oneshot, stream or decode, got '" + name + "'");
}

const char* to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::kOneShot: return "oneshot";
    case Protocol::kStream: return "stream";
    case Protocol::kDecode: return "decode";
  }
  return "?";
}

}  // namespace kvbench::models
