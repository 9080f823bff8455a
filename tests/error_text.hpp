#pragma once
// What a test reads of an error: the message of the exception a call throws.
#include <exception>
#include <functional>
#include <string>

namespace kvbench::testing {

// The message of the exception fn throws ("(no error)" if none).
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace kvbench::testing
