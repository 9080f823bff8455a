#pragma once
// What a user sees of an exception: its message without libtorch's C++ stack frames. A
// c10::Error's what() carries "Exception raised from ... (most recent call first):" and a
// backtrace; only its first line is the message.
#include <exception>
#include <string>

namespace kvbench::harness {

std::string user_message(const std::exception& error);

}  // namespace kvbench::harness
