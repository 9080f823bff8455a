#pragma once
// Template source -> tokens, with Jinja2's whitespace rules as transformers configures them:
// trim_blocks (the first newline after a block or comment tag is dropped), lstrip_blocks
// (spaces and tabs before a block or comment tag at the start of a line are dropped), `-` on a
// tag strips all whitespace on that side, `+` disables lstrip/trim for that tag, newlines are
// normalised to \n and one trailing newline of the source is dropped.
#include <string>
#include <vector>

#include "jinja/error.hpp"

namespace kvbench::jinja {

enum class TokenType {
  kData,        // literal text
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,
  kString,      // value already unescaped
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenType type;
  std::string value;
  SourceLocation where;
};

struct LexerOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws TemplateSyntaxError (unclosed tag or comment, unexpected character, unbalanced brackets).
std::vector<Token> tokenize(const std::string& source, const LexerOptions& options = {});

}  // namespace kvbench::jinja
