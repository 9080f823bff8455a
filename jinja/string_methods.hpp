#pragma once
// Shared by attribute access (access.cpp) and the methods of str (string_methods.cpp): each needs
// one function of the other, and both search substrings the same way. Internal to jinja/.
#include <cstddef>
#include <string>
#include <string_view>

#include "jinja/value.hpp"

namespace kvbench::jinja {

// `object.name` that does not exist: an Undefined with Jinja2's message (access.cpp).
Value no_attribute(const Value& object, const std::string& name);

// `self.name` for a str: the bound method, or no_attribute (string_methods.cpp).
Value string_method(const Value& self, const std::string& name);

// Substring search. std::string::find compares at every position, O(n·m) at worst, which a long
// needle that almost matches everywhere turns into hours; glibc's memmem is linear (two-way
// algorithm) in time and constant in space. Each search is charged a step and the bytes it
// scanned, so a loop over the matches costs the text's length once (string_methods.cpp).
size_t find_in(std::string_view hay, std::string_view needle, size_t from = 0);

}  // namespace kvbench::jinja
