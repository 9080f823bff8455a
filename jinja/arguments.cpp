#include "jinja/builtins.hpp"

namespace kvbench::jinja {

ArgumentReader::ArgumentReader(Arguments& args, std::string function, std::vector<std::string> parameters)
    : args_(args), function_(std::move(function)), parameters_(std::move(parameters)), bound_(parameters_.size()) {
  for (size_t i = 0; i < args_.positional.size() && i < parameters_.size(); ++i) bound_[i] = &args_.positional[i];
  for (const auto& [key, value] : args_.keywords) {
    size_t i = 0;
    while (i < parameters_.size() && parameters_[i] != key) ++i;
    if (i == parameters_.size()) throw OperationError(function_ + "() got an unexpected keyword argument '" + key + "'");
    if (bound_[i]) throw OperationError(function_ + "() got multiple values for argument '" + key + "'");
    bound_[i] = &value;
  }
}

bool ArgumentReader::has(size_t index) const { return index < bound_.size() && bound_[index]; }

const Value& ArgumentReader::get(size_t index) const {
  if (!has(index))
    throw OperationError(function_ + "() missing required argument '" +
                         (index < parameters_.size() ? parameters_[index] : std::to_string(index)) + "'");
  return *bound_[index];
}

Value ArgumentReader::get_or(size_t index, Value fallback) const { return has(index) ? *bound_[index] : fallback; }

std::vector<Value> ArgumentReader::rest() const {
  if (args_.positional.size() <= parameters_.size()) return {};
  return std::vector<Value>(args_.positional.begin() + static_cast<long>(parameters_.size()), args_.positional.end());
}

int64_t integer_argument(const Value& v) {
  if (!v.is_int() && !v.is_bool())
    throw OperationError("'" + v.type_name() + "' object cannot be interpreted as an integer");
  return v.as_int();
}

}  // namespace kvbench::jinja
