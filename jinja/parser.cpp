#include "jinja/parser.hpp"

#include <set>

#include "jinja/builtins.hpp"

namespace kvbench::jinja {
namespace {

const std::set<std::string> kKeywords = {"and", "or", "not", "in", "is", "if", "else"};

// Deeper nesting than this (of expressions or blocks) is refused instead of exhausting the stack;
// real templates nest a handful of levels.
constexpr int kMaxNesting = 256;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  Body parse_all() {
    std::string stopped_at;
    Body body = parse_body({}, stopped_at, {});
    return body;
  }

 private:
  const Token& peek(size_t ahead = 0) const {
    const size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool at_op(const std::string& op, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::kOperator && peek(ahead).value == op;
  }
  bool at_name(const std::string& name, size_t ahead = 0) const {
    return peek(ahead).type == TokenType::kName && peek(ahead).value == name;
  }
  [[noreturn]] void fail(const std::string& message, const Token& at) const { throw TemplateSyntaxError(message, at.where); }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case TokenType::kEnd: return "end of template";
      case TokenType::kBlockEnd: return "end of statement block ('%}')";
      case TokenType::kVarEnd: return "end of print statement ('}}')";
      case TokenType::kString: return "string literal";
      default: return "'" + t.value + "'";
    }
  }
  void expect_op(const std::string& op) {
    if (!at_op(op)) fail("expected '" + op + "', got " + describe(peek()), peek());
    next();
  }
  std::string expect_name() {
    if (peek().type != TokenType::kName) fail("expected a name, got " + describe(peek()), peek());
    return next().value;
  }
  void expect_block_end() {
    if (peek().type != TokenType::kBlockEnd) fail("expected end of statement block, got " + describe(peek()), peek());
    next();
  }

  // Parses statements until a block tag named in `ends`; leaves the position after that tag's
  // name and reports which one in `stopped_at`. `opener` names the enclosing block for errors.
  Body parse_body(const std::set<std::string>& ends, std::string& stopped_at, const Token* opener,
                  const std::string& opener_name = "") {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.type == TokenType::kEnd) {
        if (!ends.empty()) {
          std::string expected;
          for (const auto& e : ends) expected += (expected.empty() ? "'" : " or '") + e + "'";
          fail("unexpected end of template: the block '" + opener_name + "' opened at line " +
                   std::to_string(opener->where.line) + ", column " + std::to_string(opener->where.column) +
                   " was never closed (expected " + expected + ")",
               t);
        }
        return body;
      }
      if (t.type == TokenType::kData) {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kText;
        s->where = t.where;
        s->text = t.value;
        body.push_back(std::move(s));
        next();
      } else if (t.type == TokenType::kVarBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::kOutput;
        s->where = t.where;
        s->expr = parse_tuple(true);
        if (peek().type != TokenType::kVarEnd) fail("expected '}}', got " + describe(peek()), peek());
        next();
        body.push_back(std::move(s));
      } else if (t.type == TokenType::kBlockBegin) {
        const Token& begin = next();
        const Token& name_tok = peek();
        if (name_tok.type != TokenType::kName) fail("expected a tag name, got " + describe(name_tok), name_tok);
        if (ends.count(name_tok.value)) {
          next();
          stopped_at = name_tok.value;
          return body;
        }
        body.push_back(parse_statement(begin));
      } else {
        fail("unexpected " + describe(t), t);
      }
    }
  }

  StmtPtr make(Stmt::Kind kind, const Token& at) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->where = at.where;
    return s;
  }

  StmtPtr parse_statement(const Token& begin) {
    Nesting nesting(*this, peek());
    const Token& tag = next();
    const std::string& name = tag.value;
    if (name == "if") return parse_if(tag);
    if (name == "for") return parse_for(tag);
    if (name == "set") return parse_set(tag);
    if (name == "macro") return parse_macro(tag);
    if (name == "call") return parse_call_block(tag);
    if (name == "filter") return parse_filter_block(tag);
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) fail("'" + name + "' outside of a for loop", tag);
      expect_block_end();
      return make(name == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, tag);
    }
    if (name == "generation") {
      expect_block_end();
      auto s = make(Stmt::Kind::kGeneration, tag);
      std::string stop;
      s->bodies.push_back(parse_body({"endgeneration"}, stop, &tag, "generation"));
      expect_block_end();
      return s;
    }
    static const std::set<std::string> kEndTags = {"endif", "endfor", "endset", "endmacro", "endcall", "endfilter",
                                                  "endgeneration", "else", "elif", "endraw"};
    if (kEndTags.count(name)) fail("unexpected '" + name + "' (no open block expects it here)", tag);
    static const std::set<std::string> kUnsupported = {"extends", "block", "include", "import", "from", "with",
                                                       "autoescape", "do", "raw", "trans", "pluralize"};
    if (kUnsupported.count(name))
      fail("unsupported tag '" + name + "' (not available in the chat-template environment)", tag);
    (void)begin;
    fail("unknown tag '" + name + "'", tag);
  }

  StmtPtr parse_if(const Token& tag) {
    auto s = make(Stmt::Kind::kIf, tag);
    s->conditions.push_back(parse_tuple(false));
    expect_block_end();
    while (true) {
      std::string stop;
      s->bodies.push_back(parse_body({"elif", "else", "endif"}, stop, &tag, "if"));
      if (stop == "elif") {
        s->conditions.push_back(parse_tuple(false));
        expect_block_end();
      } else if (stop == "else") {
        expect_block_end();
        s->bodies.push_back(parse_body({"endif"}, stop, &tag, "if"));
        expect_block_end();
        return s;
      } else {
        expect_block_end();
        return s;
      }
    }
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = at_op("(");
    if (paren) next();
    names.push_back(expect_name());
    while (at_op(",")) {
      next();
      if (peek().type != TokenType::kName) break;
      names.push_back(expect_name());
    }
    if (paren) expect_op(")");
    return names;
  }

  StmtPtr parse_for(const Token& tag) {
    auto s = make(Stmt::Kind::kFor, tag);
    s->targets = parse_targets();
    if (!at_name("in")) fail("expected 'in' in for loop, got " + describe(peek()), peek());
    next();
    s->expr = parse_tuple(false, /*stop_at_recursive=*/true);
    if (at_name("if")) {
      next();
      s->condition = parse_expression(true);
    }
    if (at_name("recursive")) fail("recursive for loops are not supported", peek());
    expect_block_end();
    ++loop_depth_;
    std::string stop;
    s->bodies.push_back(parse_body({"else", "endfor"}, stop, &tag, "for"));
    --loop_depth_;
    if (stop == "else") {
      expect_block_end();  // break/continue in the else body belong to an outer loop, if any
      s->bodies.push_back(parse_body({"endfor"}, stop, &tag, "for"));
    }
    expect_block_end();
    return s;
  }

  StmtPtr parse_set(const Token& tag) {
    auto s = make(Stmt::Kind::kSet, tag);
    const std::string first = expect_name();
    if (at_op(".")) {
      next();
      s->targets.push_back(first);
      s->attribute = expect_name();
    } else {
      s->targets.push_back(first);
      while (at_op(",")) {
        next();
        s->targets.push_back(expect_name());
      }
    }
    if (at_op("=")) {
      next();
      s->expr = parse_tuple(true);
      expect_block_end();
      return s;
    }
    if (!s->attribute.empty() || s->targets.size() != 1) fail("expected '=' in set statement", peek());
    s->kind = Stmt::Kind::kSetBlock;
    while (at_op("|")) {
      next();
      s->filters.push_back(parse_filter_call(nullptr));
    }
    expect_block_end();
    std::string stop;
    s->bodies.push_back(parse_body({"endset"}, stop, &tag, "set"));
    expect_block_end();
    return s;
  }

  std::vector<MacroParam> parse_params() {
    std::vector<MacroParam> params;
    expect_op("(");
    while (!at_op(")")) {
      if (!params.empty()) expect_op(",");
      if (at_op(")")) break;
      MacroParam p;
      p.name = expect_name();
      if (at_op("=")) {
        next();
        p.default_value = parse_expression(true);
      }
      params.push_back(std::move(p));
    }
    next();
    return params;
  }

  StmtPtr parse_macro(const Token& tag) {
    auto s = make(Stmt::Kind::kMacro, tag);
    s->name = expect_name();
    s->params = parse_params();
    expect_block_end();
    const int saved = loop_depth_;
    loop_depth_ = 0;
    std::string stop;
    s->bodies.push_back(parse_body({"endmacro"}, stop, &tag, "macro"));
    loop_depth_ = saved;
    expect_block_end();
    return s;
  }

  StmtPtr parse_call_block(const Token& tag) {
    auto s = make(Stmt::Kind::kCallBlock, tag);
    if (at_op("(")) s->params = parse_params();
    s->expr = parse_expression(true);
    if (s->expr->kind != Expr::Kind::kCall) fail("expected a call in {% call %}", tag);
    expect_block_end();
    std::string stop;
    s->bodies.push_back(parse_body({"endcall"}, stop, &tag, "call"));
    expect_block_end();
    return s;
  }

  StmtPtr parse_filter_block(const Token& tag) {
    auto s = make(Stmt::Kind::kFilterBlock, tag);
    s->filters.push_back(parse_filter_call(nullptr));
    while (at_op("|")) {
      next();
      s->filters.push_back(parse_filter_call(nullptr));
    }
    expect_block_end();
    std::string stop;
    s->bodies.push_back(parse_body({"endfilter"}, stop, &tag, "filter"));
    expect_block_end();
    return s;
  }

  // ---- expressions ----

  ExprPtr node(Expr::Kind kind, SourceLocation where) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->where = where;
    return e;
  }

  bool at_tuple_end(bool stop_at_recursive) const {
    const Token& t = peek();
    if (t.type == TokenType::kVarEnd || t.type == TokenType::kBlockEnd || t.type == TokenType::kEnd) return true;
    if (t.type == TokenType::kOperator && t.value == ")") return true;
    if (stop_at_recursive && t.type == TokenType::kName && (t.value == "recursive" || t.value == "if")) return true;
    return false;
  }

  ExprPtr parse_tuple(bool with_condexpr, bool stop_at_recursive = false, bool explicit_parens = false) {
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

  // Counts nesting levels for its lifetime: one from the first constructor, one more per
  // deepen(). A chain of operators or postfix operations (`a + b + c`, `x|f|g`, `x.a.b`) builds
  // a tree one level deeper per link, and evaluating and freeing the tree recurse as deep.
  struct Nesting {
    Parser& p;
    int levels = 0;
    Nesting(Parser& parser, const Token& at) : p(parser) { deepen(at); }
    explicit Nesting(Parser& parser) : p(parser) {}
    void deepen(const Token& at) {
      ++levels;
      if (++p.depth_ > kMaxNesting) p.fail("template nested too deeply (more than 256 levels)", at);
    }
    ~Nesting() { p.depth_ -= levels; }
  };

  ExprPtr parse_expression(bool with_condexpr) {
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

  ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, SourceLocation where) {
    auto e = node(Expr::Kind::kBinary, where);
    e->name = op;
    e->children.push_back(std::move(l));
    e->children.push_back(std::move(r));
    return e;
  }

  ExprPtr parse_or() {
    Nesting chain(*this);
    ExprPtr l = parse_and();
    while (at_name("or")) {
      chain.deepen(peek());
      const auto where = next().where;
      l = binary("or", std::move(l), parse_and(), where);
    }
    return l;
  }
  ExprPtr parse_and() {
    Nesting chain(*this);
    ExprPtr l = parse_not();
    while (at_name("and")) {
      chain.deepen(peek());
      const auto where = next().where;
      l = binary("and", std::move(l), parse_not(), where);
    }
    return l;
  }
  ExprPtr parse_not() {
    if (at_name("not")) {
      Nesting nesting(*this, peek());
      auto e = node(Expr::Kind::kUnary, next().where);
      e->name = "not";
      e->children.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
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
  ExprPtr parse_math1() {
    Nesting chain(*this);
    ExprPtr l = parse_concat();
    while (at_op("+") || at_op("-")) {
      chain.deepen(peek());
      const Token& t = next();
      l = binary(t.value, std::move(l), parse_concat(), t.where);
    }
    return l;
  }
  ExprPtr parse_concat() {
    Nesting chain(*this);
    ExprPtr l = parse_math2();
    while (at_op("~")) {
      chain.deepen(peek());
      const Token& t = next();
      l = binary("~", std::move(l), parse_math2(), t.where);
    }
    return l;
  }
  ExprPtr parse_math2() {
    Nesting chain(*this);
    ExprPtr l = parse_pow();
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      chain.deepen(peek());
      const Token& t = next();
      l = binary(t.value, std::move(l), parse_pow(), t.where);
    }
    return l;
  }
  ExprPtr parse_pow() {
    Nesting chain(*this);
    ExprPtr l = parse_unary(true);
    while (at_op("**")) {
      chain.deepen(peek());
      const Token& t = next();
      l = binary("**", std::move(l), parse_unary(true), t.where);
    }
    return l;
  }
  ExprPtr parse_unary(bool with_filter) {
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

  ExprPtr parse_primary() {
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

  Value integer_literal(const Token& t) const {
    try {
      return Value(static_cast<int64_t>(std::stoll(t.value)));
    } catch (const std::exception&) {
      fail("integer literal out of range (64-bit integers only): " + t.value.substr(0, 40), t);
    }
  }

  ExprPtr parse_postfix(ExprPtr e) {
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

  ExprPtr parse_subscript(ExprPtr object, const Token& open) {
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

  void parse_args(std::vector<ExprPtr>& positional, KeywordArgs& keywords) {
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

  ExprPtr parse_call(ExprPtr callee) {
    auto c = node(Expr::Kind::kCall, peek().where);
    c->children.push_back(std::move(callee));
    std::vector<ExprPtr> args;
    parse_args(args, c->keywords);
    for (auto& a : args) c->children.push_back(std::move(a));
    return c;
  }

  ExprPtr parse_filter_call(ExprPtr operand) {
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

  ExprPtr parse_filter_expr(ExprPtr e) {
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

  ExprPtr parse_test(ExprPtr operand) {
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

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int loop_depth_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_all(); }

}  // namespace kvbench::jinja
