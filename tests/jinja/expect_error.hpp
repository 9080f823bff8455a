#pragma once
// Renders a template that must fail and returns the error, so tests can check its message and
// location; any other outcome (no error, another exception type) is a test failure.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "jinja/template.hpp"

namespace kvbench::jinja {

template <typename Error>
Error expect_error(const std::string& source, const Value& context = Value(Dict{}), const RenderOptions& options = {}) {
  try {
    Template(source).render(context, options);
  } catch (const Error& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    throw;
  }
  ADD_FAILURE() << "no error for: " << source.substr(0, 200);
  throw std::runtime_error("no error");
}

}  // namespace kvbench::jinja
