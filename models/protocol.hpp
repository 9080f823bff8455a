#pragma once
// When eviction runs (docs/protocols.md):
//  - oneshot: one forward over the prompt, every layer compressed right after its attention;
//    generated tokens are appended without eviction (SnapKV/PyramidKV/K-VEC as published).
//  - stream:  the prompt in blocks of `block` tokens (1 = token by token), compressing after every
//    block and after every generated token: the budget holds throughout (H2O/TOVA/BUZZ/Cascade).
//  - decode:  one-shot prefill compression, then eviction after every generated token, so the
//    budget also holds while generating.
#include <cstdint>
#include <string>

namespace kvbench::models {

enum class Protocol { kOneShot, kStream, kDecode };

Protocol parse_protocol(const std::string& name);  // oneshot | stream | decode
const char* to_string(Protocol protocol);

}  // namespace kvbench::models
