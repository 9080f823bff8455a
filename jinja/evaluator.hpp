#pragma once
// Walks the statement tree and writes the output.
#include <string>

#include "jinja/ast.hpp"
#include "jinja/template.hpp"

namespace kvbench::jinja {

std::string evaluate(const Body& body, const Value& context, const RenderOptions& options);

}  // namespace kvbench::jinja
