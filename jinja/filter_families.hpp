#pragma once
// The families of Jinja2's built-in filters, one file each, which apply_filter (filters.cpp) asks in
// turn: strings (filters_string.cpp), sequences (filters_sequence.cpp), numbers
// (filters_number.cpp). Each returns nullopt for a filter outside its family. Internal to jinja/.
#include <optional>
#include <string>

#include "jinja/builtins.hpp"
#include "jinja/value.hpp"

namespace kvbench::jinja {

// map, select, reject, selectattr, rejectattr: they read their arguments themselves (a filter or
// test name and its arguments), so they come before the ArgumentReader.
std::optional<Value> higher_order_filter(const std::string& name, const Value& v, Arguments& args);
// `format`: printf-style, positional arguments only.
Value format_filter(const Value& v, Arguments& args);

std::optional<Value> string_filter(const std::string& name, const Value& v, const ArgumentReader& r);
std::optional<Value> sequence_filter(const std::string& name, const Value& v, const ArgumentReader& r);
std::optional<Value> number_filter(const std::string& name, const Value& v, const ArgumentReader& r);

}  // namespace kvbench::jinja
