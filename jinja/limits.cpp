#include "jinja/limits.hpp"

#include "jinja/value.hpp"

namespace kvbench::jinja {
namespace {

// Budget units: a step is 64 units, so a byte of string costs one and a list item 128.
constexpr uint64_t kUnitsPerStep = 64;
constexpr uint64_t kUnitsPerItem = 128;

thread_local RenderBudget* g_current = nullptr;
thread_local int g_walk_depth = 0;

}  // namespace

void check_string_size(uint64_t bytes, const char* what) {
  if (bytes > kMaxStringBytes)
    throw OperationError(std::string(what) + " exceeds the limit of " + std::to_string(kMaxStringBytes) +
                         " bytes (64 MiB)");
}

void check_list_size(uint64_t items) {
  if (items > kMaxListItems)
    throw OperationError("list exceeds the limit of " + std::to_string(kMaxListItems) + " items");
}

void append_checked(std::string& out, std::string_view piece, const char* what) {
  check_string_size(uint64_t{out.size()} + piece.size(), what);
  out += piece;
}

RenderBudget::RenderBudget(uint64_t max_steps)
    : max_steps_(max_steps),
      units_left_(max_steps > UINT64_MAX / kUnitsPerStep ? UINT64_MAX : max_steps * kUnitsPerStep),
      previous_(g_current) {
  g_current = this;
}

RenderBudget::~RenderBudget() { g_current = previous_; }

RenderBudget* RenderBudget::current() { return g_current; }

void RenderBudget::charge(uint64_t units) {
  if (units <= units_left_) {
    units_left_ -= units;
    return;
  }
  units_left_ = 0;
  throw OperationError("template exceeded the limit of " + std::to_string(max_steps_) +
                       " steps per render (a runaway loop or recursion?)");
}

void charge_steps(uint64_t steps) {
  if (g_current) g_current->charge(steps > UINT64_MAX / kUnitsPerStep ? UINT64_MAX : steps * kUnitsPerStep);
}

void charge_bytes(uint64_t bytes) {
  if (g_current) g_current->charge(bytes);
}

void charge_items(uint64_t items) {
  if (g_current) g_current->charge(items > UINT64_MAX / kUnitsPerItem ? UINT64_MAX : items * kUnitsPerItem);
}

WalkLevel::WalkLevel(const char* what) {
  if (++g_walk_depth > kMaxValueDepth) {
    --g_walk_depth;
    throw OperationError(std::string("value nested too deeply to ") + what +
                         " (limit: " + std::to_string(kMaxValueDepth) + " levels)");
  }
}

WalkLevel::~WalkLevel() { --g_walk_depth; }

}  // namespace kvbench::jinja
