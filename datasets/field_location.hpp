#pragma once
// Where a JSON file sets a field, for errors that name file, line and field: "<origin>:<line>" of
// the first "<field>" key at or after `from` in the file's text, or `origin` alone where the text
// does not spell it (a default, a field given elsewhere).
#include <string>
#include <string_view>

namespace kvbench::datasets {

std::string field_location(const std::string& origin, std::string_view text, const std::string& field, size_t from = 0);

}  // namespace kvbench::datasets
