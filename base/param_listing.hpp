#pragma once
// The parameter declarations as the user sees them: `--json` listings, the text of
// `kvbench policies` / `kvbench tasks`, and the Markdown tables of docs/ (a test keeps them equal).
#include <nlohmann/json.hpp>

#include <string>

#include "base/param.hpp"

namespace kvbench::params {

// [{"name", "type", "default", "help", "min"?, "max"?, "choices"?, "nullable"?}], in declaration order.
nlohmann::json describe(const Params& params);

// One line per parameter: "  name (type, default D[, range]): help".
std::string text_listing(const Params& params, const std::string& indent);

// | parameter | type | default | |  — one row per parameter, in declaration order.
std::string markdown_table(const Params& params);

}  // namespace kvbench::params
