#pragma once
// The parsed template: expression and statement nodes. One tagged struct per family keeps the
// tree small; each kind documents which fields it uses.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/error.hpp"
#include "jinja/value.hpp"

namespace kvbench::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
using KeywordArgs = std::vector<std::pair<std::string, ExprPtr>>;

struct Expr {
  enum class Kind {
    kLiteral,      // literal
    kName,         // name
    kList,         // children = items
    kTuple,        // children = items (evaluates to a list)
    kDict,         // children = key0, value0, key1, value1...
    kGetAttr,      // children[0] = object; name = attribute
    kGetItem,      // children = object, key
    kSlice,        // children = object, start, stop, step (null where omitted)
    kCall,         // children[0] = callee, then positional args; keywords
    kFilter,       // children[0] = operand (null in a filter block), then args; name; keywords
    kTest,         // children[0] = operand, then args; name; negated
    kUnary,        // name = "-", "+" or "not"; children[0]
    kBinary,       // name = operator (+ - * / // % ** ~ and or); children = left, right
    kCompare,      // children[0] then one per operator in `operators` (== != < <= > >= in notin)
    kConditional,  // children = then, condition, otherwise (null = undefined)
  };
  Kind kind;
  SourceLocation where;
  Value literal;
  std::string name;
  std::vector<ExprPtr> children;
  KeywordArgs keywords;
  std::vector<std::string> operators;
  bool negated = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null = required (undefined when omitted, as Jinja)
};

struct Stmt {
  enum class Kind {
    kText,       // text
    kOutput,     // expr
    kIf,         // conditions[i] guards bodies[i]; bodies.size() == conditions.size() + 1 when an else exists
    kFor,        // targets, expr = iterable, condition = loop filter (may be null), bodies = {body, else}
    kSet,        // targets (one name, or several for unpacking) or attribute target (targets[0].attr), expr
    kSetBlock,   // targets[0], bodies[0], filters (kFilter exprs applied in order, operand null)
    kMacro,      // name, params, bodies[0]
    kCallBlock,  // expr = the call, params = caller's parameters, bodies[0] = caller body
    kFilterBlock,  // filters, bodies[0]
    kBreak,
    kContinue,
    kGeneration,  // transformers' {% generation %}: renders its body unchanged
  };
  Kind kind;
  SourceLocation where;
  std::string text;
  std::string name;
  std::string attribute;  // kSet on `ns.attr`
  std::vector<std::string> targets;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  std::vector<MacroParam> params;
  std::vector<ExprPtr> filters;
};

}  // namespace kvbench::jinja
