#pragma once
#include <stdexcept>
#include <string>

namespace kvbench::models {

// A checkpoint or tokenizer that cannot be used. The message names the file and the field.
class ModelLoadError : public std::runtime_error {
 public:
  ModelLoadError(const std::string& file, const std::string& what)
      : std::runtime_error(file + ": " + what) {}
};

}  // namespace kvbench::models
