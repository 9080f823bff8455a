#pragma once
// Bounds on what a template may make the interpreter do. Chat templates come from downloaded
// model directories, so a hostile one must end in a TemplateRuntimeError, never in a crash, an
// exhausted memory or a hang. Real chat templates stay orders of magnitude below every bound (see
// DESIGN.md, "Limits").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvbench::jinja {

constexpr size_t kMaxStringBytes = size_t{64} << 20;  // one string value, and the rendered output
constexpr size_t kMaxListItems = 1'000'000;           // one list or dict
constexpr int kMaxValueDepth = 512;                   // lists/dicts/objects nested in one another
constexpr uint64_t kMaxSteps = 10'000'000;            // work of one render (see RenderBudget)

// Throw OperationError naming the limit when a string of `bytes` or a list of `items` would
// exceed it; callers check before allocating (the counts come in 64 bits so products of a
// template's numbers cannot wrap).
// `what` names the string in the message ("string", "rendered output").
void check_string_size(uint64_t bytes, const char* what = "string");
void check_list_size(uint64_t items);
// out += piece, refused (before allocating) past kMaxStringBytes.
void append_checked(std::string& out, std::string_view piece, const char* what = "string");

// The work budget of the render running on this thread. While one is installed, the evaluator
// and the builtins charge their work to it (a statement, an expression or a comparison is a step,
// a loop iteration 16; data costs by size: a step per 64 bytes of string, two per list item,
// which also bounds the memory a render can fill), and the size limits apply to every string and
// list built. Values built outside a render (the caller's context) are not charged or limited.
class RenderBudget {
 public:
  explicit RenderBudget(uint64_t max_steps);
  ~RenderBudget();
  RenderBudget(const RenderBudget&) = delete;
  RenderBudget& operator=(const RenderBudget&) = delete;

  static RenderBudget* current();
  // Throws OperationError naming the limit once the budget is spent.
  void charge(uint64_t units);

 private:
  uint64_t max_steps_;
  uint64_t units_left_;
  RenderBudget* previous_;
};

// Charge the current render, if any.
void charge_steps(uint64_t steps);
void charge_bytes(uint64_t bytes);
void charge_items(uint64_t items);

// One level of a recursive walk over a value (printing, comparing). Construction bounds lists
// and dicts, but a namespace may contain itself, so walks count their own depth and fail past
// kMaxValueDepth. `what` completes "value nested too deeply to ...".
class WalkLevel {
 public:
  explicit WalkLevel(const char* what);
  ~WalkLevel();
  WalkLevel(const WalkLevel&) = delete;
  WalkLevel& operator=(const WalkLevel&) = delete;
};

}  // namespace kvbench::jinja
