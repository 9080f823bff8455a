// The statement grammar of Jinja2 templates: text, output, tags ({% if %}, {% for %}, {% set %},
// {% macro %}, {% call %}, {% filter %}, {% generation %}, break/continue) and the blocks they
// open and close. The expressions inside them are parsed by parser_expressions.cpp.
#include "jinja/parser.hpp"

#include <set>

#include "jinja/parser_internal.hpp"

namespace kvbench::jinja {
namespace parsing {

Body Parser::parse_body(const std::set<std::string>& ends, std::string& stopped_at, const Token* opener,
                        const std::string& opener_name) {
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

StmtPtr Parser::parse_statement(const Token& begin) {
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

StmtPtr Parser::parse_if(const Token& tag) {
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

std::vector<std::string> Parser::parse_targets() {
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

StmtPtr Parser::parse_for(const Token& tag) {
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

StmtPtr Parser::parse_set(const Token& tag) {
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

std::vector<MacroParam> Parser::parse_params() {
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

StmtPtr Parser::parse_macro(const Token& tag) {
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

StmtPtr Parser::parse_call_block(const Token& tag) {
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

StmtPtr Parser::parse_filter_block(const Token& tag) {
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

}  // namespace parsing

Body parse(const std::vector<Token>& tokens) { return parsing::Parser(tokens).parse_all(); }

}  // namespace kvbench::jinja
