// The expression grammar of Jinja2 templates, by precedence: conditional expressions, or/and/not,
// comparisons, arithmetic and `~`, unary signs, literals, postfix access (`.name`, `[key]`,
// slices), calls, filters (`x|f`) and tests (`x is t`). Statements are parsed by parser.cpp.
#include <cstdlib>
#include <set>

#include "jinja/builtins.hpp"
#include "jinja/parser_internal.hpp"

namespace kvbench::jinja::parsing {
namespace {

const std::set<std::string> kKeywords = {"and", "or", "not", "in", "is", "if", "else"};

}  // namespace

bool Parser::at_tuple_end(bool stop_at_recursive) const {
  const Token& t = peek();
  if (t.type == TokenType::kVarEnd || t.type == TokenType::kBlockEnd || t.type == TokenType::kEnd) return true;
  if (t.type == TokenType::kOperator && t.value == ")") return true;
  if (stop_at_recursive && t.type == TokenType::kName && (t.value == "recursive" || t.value == "if")) return true;
  return false;
}

ExprPtr Parser::parse_tuple(bool with_condexpr, bool stop_at_recursive, bool explicit_parens) {
  const SourceLocation where = peek().where;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (at_tuple_end(stop_at_recursive)) break;
    items.push_back(parse_expression(with_condexpr));
    if (at_op(","))
      is_tuple = true;
    else
      break;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) fail("expected an expression, got " + describe(peek()), peek());
  }
  auto e = node(Expr::Kind::kTuple, where);
  e->children = std::move(items);
  return e;
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
  Nesting nesting(*this, peek());
  if (!with_condexpr) return parse_or();
  ExprPtr expr = parse_or();
  while (at_name("if")) {
    nesting.deepen(peek());
    const SourceLocation where = next().where;
    ExprPtr cond = parse_or();
    ExprPtr otherwise;
    if (at_name("else")) {
      next();
      otherwise = parse_expression(true);
    }
    auto e = node(Expr::Kind::kConditional, where);
    e->children.push_back(std::move(expr));
    e->children.push_back(std::move(cond));
    e->children.push_back(std::move(otherwise));
    expr = std::move(e);
  }
  return expr;
}

ExprPtr Parser::binary(const std::string& op, ExprPtr l, ExprPtr r, SourceLocation where) {
  auto e = node(Expr::Kind::kBinary, where);
  e->name = op;
  e->children.push_back(std::move(l));
  e->children.push_back(std::move(r));
  return e;
}

ExprPtr Parser::parse_or() {
  Nesting chain(*this);
  ExprPtr l = parse_and();
  while (at_name("or")) {
    chain.deepen(peek());
    const auto where = next().where;
    l = binary("or", std::move(l), parse_and(), where);
  }
  return l;
}

ExprPtr Parser::parse_and() {
  Nesting chain(*this);
  ExprPtr l = parse_not();
  while (at_name("and")) {
    chain.deepen(peek());
    const auto where = next().where;
    l = binary("and", std::move(l), parse_not(), where);
  }
  return l;
}

ExprPtr Parser::parse_not() {
  if (at_name("not")) {
    Nesting nesting(*this, peek());
    auto e = node(Expr::Kind::kUnary, next().where);
    e->name = "not";
    e->children.push_back(parse_not());
    return e;
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  const SourceLocation where = peek().where;
  ExprPtr first = parse_math1();
  std::vector<std::string> ops;
  std::vector<ExprPtr> rest;
  while (true) {
    const Token& t = peek();
    if (t.type == TokenType::kOperator &&
        (t.value == "==" || t.value == "!=" || t.value == "<" || t.value == "<=" || t.value == ">" || t.value == ">=")) {
      ops.push_back(next().value);
    } else if (at_name("in")) {
      next();
      ops.push_back("in");
    } else if (at_name("not") && at_name("in", 1)) {
      next();
      next();
      ops.push_back("notin");
    } else {
      break;
    }
    rest.push_back(parse_math1());
  }
  if (ops.empty()) return first;
  auto e = node(Expr::Kind::kCompare, where);
  e->children.push_back(std::move(first));
  for (auto& r : rest) e->children.push_back(std::move(r));
  e->operators = std::move(ops);
  return e;
}

ExprPtr Parser::parse_math1() {
  Nesting chain(*this);
  ExprPtr l = parse_concat();
  while (at_op("+") || at_op("-")) {
    chain.deepen(peek());
    const Token& t = next();
    l = binary(t.value, std::move(l), parse_concat(), t.where);
  }
  return l;
}

ExprPtr Parser::parse_concat() {
  Nesting chain(*this);
  ExprPtr l = parse_math2();
  while (at_op("~")) {
    chain.deepen(peek());
    const Token& t = next();
    l = binary("~", std::move(l), parse_math2(), t.where);
  }
  return l;
}

ExprPtr Parser::parse_math2() {
  Nesting chain(*this);
  ExprPtr l = parse_pow();
  while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
    chain.deepen(peek());
    const Token& t = next();
    l = binary(t.value, std::move(l), parse_pow(), t.where);
  }
  return l;
}

ExprPtr Parser::parse_pow() {
  Nesting chain(*this);
  ExprPtr l = parse_unary(true);
  while (at_op("**")) {
    chain.deepen(peek());
    const Token& t = next();
    l = binary("**", std::move(l), parse_unary(true), t.where);
  }
  return l;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  Nesting nesting(*this, peek());
  ExprPtr e;
  if (at_op("-") || at_op("+")) {
    const Token& t = next();
    e = node(Expr::Kind::kUnary, t.where);
    e->name = t.value;
    e->children.push_back(parse_unary(false));
  } else {
    e = parse_primary();
  }
  e = parse_postfix(std::move(e));
  if (with_filter) e = parse_filter_expr(std::move(e));
  return e;
}

ExprPtr Parser::parse_primary() {
  const Token& t = peek();
  switch (t.type) {
    case TokenType::kName: {
      next();
      if (t.value == "true" || t.value == "True" || t.value == "false" || t.value == "False") {
        auto e = node(Expr::Kind::kLiteral, t.where);
        e->literal = Value(t.value == "true" || t.value == "True");
        return e;
      }
      if (t.value == "none" || t.value == "None") {
        auto e = node(Expr::Kind::kLiteral, t.where);
        e->literal = Value::none();
        return e;
      }
      auto e = node(Expr::Kind::kName, t.where);
      e->name = t.value;
      return e;
    }
    case TokenType::kString: {
      std::string s;
      while (peek().type == TokenType::kString) s += next().value;  // adjacent literals concatenate
      auto e = node(Expr::Kind::kLiteral, t.where);
      e->literal = Value(s);
      return e;
    }
    case TokenType::kInteger: {
      next();
      auto e = node(Expr::Kind::kLiteral, t.where);
      e->literal = integer_literal(t);
      return e;
    }
    case TokenType::kFloat: {
      next();
      auto e = node(Expr::Kind::kLiteral, t.where);
      e->literal = Value(std::strtod(t.value.c_str(), nullptr));
      return e;
    }
    case TokenType::kOperator: {
      if (t.value == "(") {
        next();
        ExprPtr e = parse_tuple(true, false, true);
        expect_op(")");
        return e;
      }
      if (t.value == "[") {
        next();
        auto e = node(Expr::Kind::kList, t.where);
        while (!at_op("]")) {
          if (!e->children.empty()) expect_op(",");
          if (at_op("]")) break;
          e->children.push_back(parse_expression(true));
        }
        next();
        return e;
      }
      if (t.value == "{") {
        next();
        auto e = node(Expr::Kind::kDict, t.where);
        while (!at_op("}")) {
          if (!e->children.empty()) expect_op(",");
          if (at_op("}")) break;
          e->children.push_back(parse_expression(true));
          expect_op(":");
          e->children.push_back(parse_expression(true));
        }
        next();
        return e;
      }
      break;
    }
    default: break;
  }
  fail("unexpected " + describe(t), t);
}

Value Parser::integer_literal(const Token& t) const {
  try {
    return Value(static_cast<int64_t>(std::stoll(t.value)));
  } catch (const std::exception&) {
    fail("integer literal out of range (64-bit integers only): " + t.value.substr(0, 40), t);
  }
}

ExprPtr Parser::parse_postfix(ExprPtr e) {
  Nesting chain(*this);
  while (true) {
    if (at_op(".") || at_op("[") || at_op("(")) chain.deepen(peek());
    if (at_op(".")) {
      const Token& dot = next();
      const Token& t = peek();
      if (t.type == TokenType::kName) {
        next();
        auto g = node(Expr::Kind::kGetAttr, dot.where);
        g->name = t.value;
        g->children.push_back(std::move(e));
        e = std::move(g);
      } else if (t.type == TokenType::kInteger) {
        next();
        auto g = node(Expr::Kind::kGetItem, dot.where);
        g->children.push_back(std::move(e));
        auto k = node(Expr::Kind::kLiteral, t.where);
        k->literal = integer_literal(t);
        g->children.push_back(std::move(k));
        e = std::move(g);
      } else {
        fail("expected an attribute name after '.', got " + describe(t), t);
      }
    } else if (at_op("[")) {
      const Token& open = next();
      e = parse_subscript(std::move(e), open);
    } else if (at_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr object, const Token& open) {
  ExprPtr parts[3];
  int colons = 0;
  if (!at_op(":")) parts[0] = parse_expression(true);
  if (!at_op(":")) {
    expect_op("]");
    auto g = node(Expr::Kind::kGetItem, open.where);
    g->children.push_back(std::move(object));
    g->children.push_back(std::move(parts[0]));
    return g;
  }
  while (at_op(":") && colons < 2) {
    next();
    ++colons;
    if (!at_op(":") && !at_op("]")) parts[colons] = parse_expression(true);
  }
  expect_op("]");
  auto s = node(Expr::Kind::kSlice, open.where);
  s->children.push_back(std::move(object));
  for (auto& p : parts) s->children.push_back(std::move(p));
  return s;
}

void Parser::parse_args(std::vector<ExprPtr>& positional, KeywordArgs& keywords) {
  expect_op("(");
  bool first = true;
  while (!at_op(")")) {
    if (!first) expect_op(",");
    first = false;
    if (at_op(")")) break;
    if (at_op("*") || at_op("**")) fail("*args and **kwargs in calls are not supported", peek());
    if (peek().type == TokenType::kName && at_op("=", 1)) {
      const std::string key = next().value;
      next();
      keywords.emplace_back(key, parse_expression(true));
    } else {
      if (!keywords.empty()) fail("positional argument after keyword argument", peek());
      positional.push_back(parse_expression(true));
    }
  }
  next();
}

ExprPtr Parser::parse_call(ExprPtr callee) {
  auto c = node(Expr::Kind::kCall, peek().where);
  c->children.push_back(std::move(callee));
  std::vector<ExprPtr> args;
  parse_args(args, c->keywords);
  for (auto& a : args) c->children.push_back(std::move(a));
  return c;
}

ExprPtr Parser::parse_filter_call(ExprPtr operand) {
  const Token& name = peek();
  std::string filter = expect_name();
  while (at_op(".")) {
    next();
    filter += "." + expect_name();
  }
  if (!has_filter(filter)) fail("no filter named '" + filter + "'", name);
  auto f = node(Expr::Kind::kFilter, name.where);
  f->name = filter;
  f->children.push_back(std::move(operand));
  if (at_op("(")) {
    std::vector<ExprPtr> args;
    parse_args(args, f->keywords);
    for (auto& a : args) f->children.push_back(std::move(a));
  }
  return f;
}

ExprPtr Parser::parse_filter_expr(ExprPtr e) {
  Nesting chain(*this);
  while (true) {
    if (at_op("|") || at_name("is") || at_op("(")) chain.deepen(peek());
    if (at_op("|")) {
      next();
      e = parse_filter_call(std::move(e));
    } else if (at_name("is")) {
      next();
      e = parse_test(std::move(e));
    } else if (at_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_test(ExprPtr operand) {
  bool negated = false;
  if (at_name("not")) {
    next();
    negated = true;
  }
  const Token& name = peek();
  std::string test = expect_name();
  if (!has_test(test)) fail("no test named '" + test + "'", name);
  auto t = node(Expr::Kind::kTest, name.where);
  t->name = test;
  t->negated = negated;
  t->children.push_back(std::move(operand));
  const Token& a = peek();
  if (at_op("(")) {
    std::vector<ExprPtr> args;
    parse_args(args, t->keywords);
    for (auto& x : args) t->children.push_back(std::move(x));
  } else if ((a.type == TokenType::kName && !kKeywords.count(a.value)) || a.type == TokenType::kString ||
             a.type == TokenType::kInteger || a.type == TokenType::kFloat || at_op("[") || at_op("{")) {
    if (a.type == TokenType::kName && (a.value == "else" || a.value == "or" || a.value == "and")) return t;
    t->children.push_back(parse_postfix(parse_primary()));
  }
  return t;
}

}  // namespace kvbench::jinja::parsing
