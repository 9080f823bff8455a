#pragma once

namespace kvbench::policies {

// kOriginal: keys are stored rotated at their original positions and queries use theirs.
// kCacheSlot: keys are stored un-rotated and rotated at read time by slot order 0..n-1, the
// query taking its own slot (StreamingLLM's pos-shift, Cascade): positions never leave the
// trained range however long the stream. Requires every head to keep the same tokens.
enum class PositionMode { kOriginal, kCacheSlot };

const char* to_string(PositionMode mode);

}  // namespace kvbench::policies
