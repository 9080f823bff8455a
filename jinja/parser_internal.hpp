#pragma once
// The parser's class, shared by its two halves: the statement grammar (parser.cpp: text, output,
// tags and their blocks) and the expression grammar (parser_expressions.cpp: operators by
// precedence, literals, postfix access, calls, filters and tests). Here: the token cursor, the
// error helpers and the nesting bound. Internal to jinja/; the entry point is parser.hpp.
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "jinja/ast.hpp"
#include "jinja/lexer.hpp"

namespace kvbench::jinja::parsing {

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

  // ---- statements (parser.cpp) ----

  // Parses statements until a block tag named in `ends`; leaves the position after that tag's
  // name and reports which one in `stopped_at`. `opener` names the enclosing block for errors.
  Body parse_body(const std::set<std::string>& ends, std::string& stopped_at, const Token* opener,
                  const std::string& opener_name = "");

  StmtPtr make(Stmt::Kind kind, const Token& at) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->where = at.where;
    return s;
  }

  StmtPtr parse_statement(const Token& begin);
  StmtPtr parse_if(const Token& tag);
  std::vector<std::string> parse_targets();
  StmtPtr parse_for(const Token& tag);
  StmtPtr parse_set(const Token& tag);
  std::vector<MacroParam> parse_params();
  StmtPtr parse_macro(const Token& tag);
  StmtPtr parse_call_block(const Token& tag);
  StmtPtr parse_filter_block(const Token& tag);

  // ---- expressions (parser_expressions.cpp) ----

  ExprPtr node(Expr::Kind kind, SourceLocation where) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->where = where;
    return e;
  }

  bool at_tuple_end(bool stop_at_recursive) const;
  ExprPtr parse_tuple(bool with_condexpr, bool stop_at_recursive = false, bool explicit_parens = false);
  ExprPtr parse_expression(bool with_condexpr);
  ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, SourceLocation where);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  Value integer_literal(const Token& t) const;
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_subscript(ExprPtr object, const Token& open);
  void parse_args(std::vector<ExprPtr>& positional, KeywordArgs& keywords);
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_filter_call(ExprPtr operand);
  ExprPtr parse_filter_expr(ExprPtr e);
  ExprPtr parse_test(ExprPtr operand);

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int loop_depth_ = 0;
  int depth_ = 0;
};

}  // namespace kvbench::jinja::parsing
