#include "jinja/evaluator.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include "jinja/builtins.hpp"
#include "jinja/limits.hpp"

namespace kvbench::jinja {
namespace {

// raise_exception(msg) from the template.
class RaisedByTemplate : public OperationError {
 public:
  using OperationError::OperationError;
};

struct Frame {
  std::shared_ptr<Frame> parent;
  std::map<std::string, Value> vars;
};
using FramePtr = std::shared_ptr<Frame>;

enum class Flow { kNormal, kBreak, kContinue };

constexpr int64_t kMaxRange = 100000;  // Jinja2's sandbox MAX_RANGE
constexpr int kMaxCallDepth = 200;     // a recursive macro fails cleanly instead of overflowing the stack
// Statements and expressions evaluated inside one another. The parser bounds one template's
// nesting; macros calling macros add theirs up, and this keeps the stack bounded even then (about
// 1 KiB a level). The stack the render uses is bounded too, as frames are several times larger in
// sanitizer and debug builds. Real templates reach 25 levels and 25 KiB.
constexpr int kMaxRecursion = 1000;
constexpr uintptr_t kMaxStackBytes = uintptr_t{2} << 20;
// What a loop iteration costs even with an empty body: it builds a frame and a loop object of a
// dozen attributes, about as much work as 16 simple expressions.
constexpr uint64_t kStepsPerIteration = 16;

// Output buffers (the render's, a macro's, a captured block's) are all bounded like strings.
void emit(std::string& out, std::string_view text) { append_checked(out, text, "rendered output"); }

class Evaluator {
 public:
  Evaluator(const Value& context, const RenderOptions& options)
      : context_(context), options_(options), budget_(options.max_steps) {
    install_globals();
  }

  // Namespaces can contain one another, even themselves: emptying them frees the cycles that
  // reference counting cannot, and frees long chains of them one link at a time.
  ~Evaluator() {
    for (auto& ns : namespaces_) ns->attributes.clear();
  }

  std::string run(const Body& body) {
    stack_base_ = stack_address();
    std::string out;
    auto root = std::make_shared<Frame>();
    exec(body, root, out);
    return out;
  }

 private:
  // One statement or expression evaluated: a step of the budget and a level of recursion.
  class Step {
   public:
    explicit Step(Evaluator& ev) : ev_(ev) {
      charge_steps(1);
      if (ev_.recursion_ >= kMaxRecursion || ev_.stack_base_ - stack_address() > kMaxStackBytes)
        throw OperationError("maximum recursion depth exceeded (more than " + std::to_string(kMaxRecursion) +
                             " statements and expressions inside one another, or 2 MiB of stack)");
      ++ev_.recursion_;
    }
    ~Step() { --ev_.recursion_; }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;

   private:
    Evaluator& ev_;
  };

  // The current frame's address; stacks grow down on the platforms we build for. (The address of
  // a local would not do: sanitizers may move locals off the stack.)
  static uintptr_t stack_address() { return reinterpret_cast<uintptr_t>(__builtin_frame_address(0)); }

  // Every namespace stays here until the render ends (see ~Evaluator); those nothing else holds
  // any more are dropped now and then, so memory stays that of the live ones.
  void track_namespace(std::shared_ptr<Object> ns) {
    if (namespaces_.size() >= prune_at_) {
      namespaces_.erase(std::remove_if(namespaces_.begin(), namespaces_.end(),
                                       [](const std::shared_ptr<Object>& o) { return o.use_count() == 1; }),
                        namespaces_.end());
      prune_at_ = std::max<size_t>(64, 2 * namespaces_.size());
    }
    namespaces_.push_back(std::move(ns));
  }

  [[noreturn]] static void rethrow(const OperationError& e, SourceLocation where) {
    if (dynamic_cast<const RaisedByTemplate*>(&e)) throw TemplateRaised(e.what(), where);
    throw TemplateRuntimeError(e.what(), where);
  }

  void install_globals() {
    globals_["range"] = Value::function("range", [](Arguments& args) -> Value {
      if (!args.keywords.empty()) throw OperationError("range() takes no keyword arguments");
      const auto& p = args.positional;
      if (p.empty() || p.size() > 3) throw OperationError("range expected 1 to 3 arguments, got " + std::to_string(p.size()));
      for (const auto& v : p) integer_argument(v);
      const int64_t start = p.size() > 1 ? p[0].as_int() : 0, stop = p.size() > 1 ? p[1].as_int() : p[0].as_int();
      const int64_t step = p.size() > 2 ? p[2].as_int() : 1;
      if (step == 0) throw OperationError("range() arg 3 must not be zero");
      List out;
      for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
        if (static_cast<int64_t>(out.size()) >= kMaxRange)
          throw OperationError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        out.emplace_back(i);
        if (__builtin_add_overflow(i, step, &i)) break;  // past the 64-bit end: nothing more in range
      }
      return Value(out);
    });
    globals_["dict"] = Value::function("dict", [](Arguments& args) -> Value {
      if (!args.positional.empty()) throw OperationError("dict() with positional arguments is not supported");
      Dict d;
      for (const auto& [k, v] : args.keywords) d.set(Value(k), v);
      return Value(d);
    });
    globals_["namespace"] = Value::function("namespace", [this](Arguments& args) -> Value {
      auto ns = std::make_shared<Object>();
      ns->type_name = "Namespace";
      ns->assignable = true;
      if (args.positional.size() > 1) throw OperationError("namespace() takes at most one positional argument");
      if (!args.positional.empty()) {
        if (!args.positional[0].is_dict()) throw OperationError("namespace() positional argument must be a mapping");
        for (const auto& [k, v] : args.positional[0].as_dict().items) ns->attributes[k.str()] = v;
      }
      for (const auto& [k, v] : args.keywords) ns->attributes[k] = v;
      charge_items(1 + ns->attributes.size());
      track_namespace(ns);
      return Value(ns);
    });
    globals_["raise_exception"] = Value::function("raise_exception", [](Arguments& args) -> Value {
      ArgumentReader r(args, "raise_exception", {"message"});
      throw RaisedByTemplate(r.get(0).str());
    });
    auto clock = options_.strftime_now ? options_.strftime_now : strftime_local_now;
    globals_["strftime_now"] = Value::function("strftime_now", [clock](Arguments& args) -> Value {
      ArgumentReader r(args, "strftime_now", {"format"});
      const Value& format = r.get(0);
      if (!format.is_string()) throw OperationError("strftime() argument 1 must be str, not " + format.type_name());
      return Value(clock(format.as_string()));
    });
  }

  Value lookup(const std::string& name, const FramePtr& frame) const {
    for (const Frame* f = frame.get(); f; f = f->parent.get()) {
      auto it = f->vars.find(name);
      if (it != f->vars.end()) return it->second;
    }
    if (context_.is_dict())
      if (const Value* v = context_.as_dict().find(Value(name))) return *v;
    auto g = globals_.find(name);
    if (g != globals_.end()) return g->second;
    return Value::undefined("'" + name + "' is undefined");
  }

  // ---- statements ----

  Flow exec(const Body& body, const FramePtr& frame, std::string& out) {
    for (const auto& s : body) {
      const Flow flow = exec(*s, frame, out);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  Flow exec(const Stmt& s, const FramePtr& frame, std::string& out) {
    try {
      Step step(*this);
      return exec_inner(s, frame, out);
    } catch (const OperationError& e) {
      rethrow(e, s.where);
    }
  }

  Flow exec_inner(const Stmt& s, const FramePtr& frame, std::string& out) {
    switch (s.kind) {
      case Stmt::Kind::kText: emit(out, s.text); return Flow::kNormal;
      case Stmt::Kind::kOutput: emit(out, eval(*s.expr, frame).str()); return Flow::kNormal;
      case Stmt::Kind::kIf:
        for (size_t i = 0; i < s.conditions.size(); ++i)
          if (eval(*s.conditions[i], frame).truthy()) return exec(s.bodies[i], frame, out);
        if (s.bodies.size() > s.conditions.size()) return exec(s.bodies.back(), frame, out);
        return Flow::kNormal;
      case Stmt::Kind::kFor: exec_for(s, frame, out); return Flow::kNormal;
      case Stmt::Kind::kSet: assign(s, eval(*s.expr, frame), frame); return Flow::kNormal;
      case Stmt::Kind::kSetBlock: {
        std::string captured;
        exec(s.bodies[0], frame, captured);
        assign(s, apply_filters(s.filters, Value(captured), frame), frame);
        return Flow::kNormal;
      }
      case Stmt::Kind::kMacro: frame->vars[s.name] = make_macro(s.name, s.params, s.bodies[0], frame, s.where); return Flow::kNormal;
      case Stmt::Kind::kCallBlock: {
        Value caller = make_macro("caller", s.params, s.bodies[0], frame, s.where);
        emit(out, eval_call(*s.expr, frame, &caller).str());
        return Flow::kNormal;
      }
      case Stmt::Kind::kFilterBlock: {
        std::string captured;
        exec(s.bodies[0], frame, captured);
        emit(out, apply_filters(s.filters, Value(captured), frame).str());
        return Flow::kNormal;
      }
      case Stmt::Kind::kBreak: return Flow::kBreak;
      case Stmt::Kind::kContinue: return Flow::kContinue;
      case Stmt::Kind::kGeneration: return exec(s.bodies[0], frame, out);
    }
    return Flow::kNormal;
  }

  Value apply_filters(const std::vector<ExprPtr>& filters, Value v, const FramePtr& frame) {
    for (const auto& f : filters) {
      Arguments args = eval_args(*f, 1, frame);
      try {
        v = apply_filter(f->name, v, args);
      } catch (const OperationError& e) {
        rethrow(e, f->where);
      }
    }
    return v;
  }

  void bind(const std::vector<std::string>& targets, const Value& item, Frame& frame, SourceLocation where) {
    if (targets.size() == 1) {
      frame.vars[targets[0]] = item;
      return;
    }
    if (!item.is_list() && !item.is_dict() && !item.is_string() && !item.is_undefined())
      throw TemplateRuntimeError("cannot unpack non-iterable " + item.type_name() + " object", where);
    List parts;
    try {
      parts = iterate(item);
    } catch (const OperationError& e) {
      rethrow(e, where);
    }
    if (parts.size() != targets.size())
      throw TemplateRuntimeError(parts.size() > targets.size()
                                     ? "too many values to unpack (expected " + std::to_string(targets.size()) + ")"
                                     : "not enough values to unpack (expected " + std::to_string(targets.size()) +
                                           ", got " + std::to_string(parts.size()) + ")",
                                 where);
    for (size_t i = 0; i < targets.size(); ++i) frame.vars[targets[i]] = parts[i];
  }

  void assign(const Stmt& s, const Value& value, const FramePtr& frame) {
    if (!s.attribute.empty()) {
      Value target = lookup(s.targets[0], frame);
      if (!target.is_object() || !target.as_object().assignable)
        throw TemplateRuntimeError("cannot assign attribute on non-namespace object", s.where);
      target.as_object().attributes[s.attribute] = value;
      return;
    }
    bind(s.targets, value, *frame, s.where);
  }

  void exec_for(const Stmt& s, const FramePtr& frame, std::string& out) {
    List items;
    {
      const Value iterable = eval(*s.expr, frame);
      try {
        items = iterate(iterable);
      } catch (const OperationError& e) {
        rethrow(e, s.expr->where);
      }
    }
    if (s.condition) {
      List kept;
      for (const auto& item : items) {
        auto probe = std::make_shared<Frame>();
        probe->parent = frame;
        bind(s.targets, item, *probe, s.where);
        if (eval(*s.condition, probe).truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) {
      if (s.bodies.size() > 1) exec(s.bodies[1], frame, out);
      return;
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      charge_steps(kStepsPerIteration);
      auto iteration = std::make_shared<Frame>();
      iteration->parent = frame;
      bind(s.targets, items[static_cast<size_t>(i)], *iteration, s.where);
      auto loop = std::make_shared<Object>();
      loop->type_name = "LoopContext";
      auto& a = loop->attributes;
      a["index"] = Value(i + 1);
      a["index0"] = Value(i);
      a["revindex"] = Value(n - i);
      a["revindex0"] = Value(n - i - 1);
      a["first"] = Value(i == 0);
      a["last"] = Value(i == n - 1);
      a["length"] = Value(n);
      a["depth"] = Value(1);
      a["depth0"] = Value(0);
      a["previtem"] = i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item");
      a["nextitem"] = i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item");
      a["cycle"] = Value::function("loop.cycle", [i](Arguments& args) -> Value {
        if (args.positional.empty()) throw OperationError("no items for cycling given");
        return args.positional[static_cast<size_t>(i) % args.positional.size()];
      });
      iteration->vars["loop"] = Value(loop);
      if (exec(s.bodies[0], iteration, out) == Flow::kBreak) break;
    }
  }

  Value make_macro(const std::string& name, const std::vector<MacroParam>& params, const Body& body,
                   const FramePtr& frame, SourceLocation where) {
    std::weak_ptr<Frame> closure = frame;
    return Value::function(name, [this, name, &params, &body, closure, where](Arguments& args) -> Value {
      if (depth_ >= kMaxCallDepth) throw OperationError("maximum macro recursion depth exceeded");
      auto call_frame = std::make_shared<Frame>();
      call_frame->parent = closure.lock();
      if (args.positional.size() > params.size())
        throw OperationError("macro '" + name + "' takes not more than " + std::to_string(params.size()) + " argument(s)");
      std::vector<bool> bound(params.size(), false);
      for (size_t i = 0; i < args.positional.size(); ++i) {
        call_frame->vars[params[i].name] = args.positional[i];
        bound[i] = true;
      }
      for (const auto& [key, value] : args.keywords) {
        size_t i = 0;
        while (i < params.size() && params[i].name != key) ++i;
        if (i == params.size()) {
          if (key == "caller") {
            call_frame->vars["caller"] = value;
            continue;
          }
          throw OperationError("macro '" + name + "' takes no keyword argument '" + key + "'");
        }
        call_frame->vars[key] = value;
        bound[i] = true;
      }
      for (size_t i = 0; i < params.size(); ++i) {
        if (bound[i]) continue;
        call_frame->vars[params[i].name] = params[i].default_value
                                               ? eval(*params[i].default_value, call_frame)
                                               : Value::undefined("parameter '" + params[i].name + "' was not provided");
      }
      std::string out;
      ++depth_;
      try {
        exec(body, call_frame, out);
      } catch (...) {
        --depth_;
        throw;
      }
      --depth_;
      (void)where;
      return Value(out);
    });
  }

  // ---- expressions ----

  Arguments eval_args(const Expr& e, size_t first, const FramePtr& frame) {
    Arguments args;
    for (size_t i = first; i < e.children.size(); ++i) args.positional.push_back(eval(*e.children[i], frame));
    for (const auto& [k, v] : e.keywords) args.keywords.emplace_back(k, eval(*v, frame));
    return args;
  }

  Value eval_call(const Expr& e, const FramePtr& frame, const Value* caller = nullptr) {
    const Value callee = eval(*e.children[0], frame);
    Arguments args = eval_args(e, 1, frame);
    if (caller) args.keywords.emplace_back("caller", *caller);
    try {
      if (callee.is_undefined()) callee.fail_undefined();
      if (!callee.is_function()) throw OperationError("'" + callee.type_name() + "' object is not callable");
      return callee.as_function().call(args);
    } catch (const OperationError& err) {
      rethrow(err, e.where);
    }
  }

  Value eval(const Expr& e, const FramePtr& frame) {
    try {
      Step step(*this);
      return eval_inner(e, frame);
    } catch (const OperationError& err) {
      rethrow(err, e.where);
    }
  }

  Value eval_inner(const Expr& e, const FramePtr& frame) {
    switch (e.kind) {
      case Expr::Kind::kLiteral: return e.literal;
      case Expr::Kind::kName: return lookup(e.name, frame);
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        List items;
        for (const auto& c : e.children) items.push_back(eval(*c, frame));
        return e.kind == Expr::Kind::kTuple ? Value::tuple(std::move(items)) : Value(std::move(items));
      }
      case Expr::Kind::kDict: {
        Dict d;
        for (size_t i = 0; i + 1 < e.children.size(); i += 2) d.set(eval(*e.children[i], frame), eval(*e.children[i + 1], frame));
        return Value(d);
      }
      case Expr::Kind::kGetAttr: return get_attribute(eval(*e.children[0], frame), e.name);
      case Expr::Kind::kGetItem: {
        const Value object = eval(*e.children[0], frame);
        return get_item(object, eval(*e.children[1], frame));
      }
      case Expr::Kind::kSlice: {
        const Value object = eval(*e.children[0], frame);
        Value bounds[3];
        const Value* ptrs[3] = {nullptr, nullptr, nullptr};
        for (int i = 0; i < 3; ++i)
          if (e.children[i + 1]) {
            bounds[i] = eval(*e.children[i + 1], frame);
            ptrs[i] = &bounds[i];
          }
        return get_slice(object, ptrs[0], ptrs[1], ptrs[2]);
      }
      case Expr::Kind::kCall: return eval_call(e, frame);
      case Expr::Kind::kFilter: {
        const Value operand = eval(*e.children[0], frame);
        Arguments args = eval_args(e, 1, frame);
        return apply_filter(e.name, operand, args);
      }
      case Expr::Kind::kTest: {
        const Value operand = eval(*e.children[0], frame);
        Arguments args = eval_args(e, 1, frame);
        return Value(apply_test(e.name, operand, args) != e.negated);
      }
      case Expr::Kind::kUnary: {
        const Value v = eval(*e.children[0], frame);
        if (e.name == "not") return Value(!v.truthy());
        if (e.name == "-") return unary_minus(v);
        if (v.is_undefined()) v.fail_undefined();
        if (!v.is_number()) throw OperationError("bad operand type for unary +: '" + v.type_name() + "'");
        return v.is_bool() ? Value(v.as_int()) : v;
      }
      case Expr::Kind::kBinary: {
        const Value l = eval(*e.children[0], frame);
        if (e.name == "and") return l.truthy() ? eval(*e.children[1], frame) : l;
        if (e.name == "or") return l.truthy() ? l : eval(*e.children[1], frame);
        return binary_operation(e.name, l, eval(*e.children[1], frame));
      }
      case Expr::Kind::kCompare: {
        Value left = eval(*e.children[0], frame);
        for (size_t i = 0; i < e.operators.size(); ++i) {
          Value right = eval(*e.children[i + 1], frame);
          const std::string& op = e.operators[i];
          bool ok;
          if (op == "==") ok = equals(left, right);
          else if (op == "!=") ok = !equals(left, right);
          else if (op == "<") ok = less_than(left, right);
          else if (op == ">") ok = less_than(right, left);
          else if (op == "<=") ok = less_than(left, right) || equals(left, right);
          else if (op == ">=") ok = less_than(right, left) || equals(left, right);
          else if (op == "in") ok = contains(right, left);
          else ok = !contains(right, left);
          if (!ok) return Value(false);
          left = std::move(right);
        }
        return Value(true);
      }
      case Expr::Kind::kConditional:
        if (eval(*e.children[1], frame).truthy()) return eval(*e.children[0], frame);
        if (e.children[2]) return eval(*e.children[2], frame);
        return Value::undefined("the inline if-expression on line " + std::to_string(e.where.line) +
                                " evaluated to false and no else section was defined.");
    }
    throw OperationError("unknown expression");
  }

  const Value& context_;
  const RenderOptions& options_;
  RenderBudget budget_;  // installed for this thread while the evaluator lives
  std::map<std::string, Value> globals_;
  std::vector<std::shared_ptr<Object>> namespaces_;
  size_t prune_at_ = 64;
  int depth_ = 0;      // macro calls
  int recursion_ = 0;  // statements and expressions (Step)
  uintptr_t stack_base_ = 0;
};

}  // namespace

std::string evaluate(const Body& body, const Value& context, const RenderOptions& options) {
  return Evaluator(context, options).run(body);
}

}  // namespace kvbench::jinja
