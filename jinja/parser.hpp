#pragma once
// Tokens -> statement tree, with Jinja2's grammar and operator precedence. Unknown tags, filters
// and tests, unclosed blocks and stray end tags are TemplateSyntaxErrors naming line and column.
#include <vector>

#include "jinja/ast.hpp"
#include "jinja/lexer.hpp"

namespace kvbench::jinja {

Body parse(const std::vector<Token>& tokens);

}  // namespace kvbench::jinja
