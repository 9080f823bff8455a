#include "harness/error_message.hpp"

#include <c10/util/Exception.h>

namespace kvbench::harness {

std::string user_message(const std::exception& error) {
  std::string message;
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
    message = c10_error->what_without_backtrace();
    const size_t newline = message.find('\n');
    if (newline != std::string::npos) message = message.substr(0, newline);
    return "libtorch: " + message;
  }
  message = error.what();
  // A c10 message wrapped by our own code (e.g. "<file>: " + e.what()) still has its frames.
  const size_t frames = message.find("\nException raised from");
  if (frames != std::string::npos) message = message.substr(0, frames);
  return message;
}

}  // namespace kvbench::harness
