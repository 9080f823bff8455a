#pragma once
// Python str methods the reference pipelines call on prompts and responses.
#include <string>

namespace kvbench::tasks {

// str.strip() over ASCII whitespace (" \t\n\r\f\v"), as the pipelines apply it to model outputs.
std::string strip(const std::string& s);

}  // namespace kvbench::tasks
