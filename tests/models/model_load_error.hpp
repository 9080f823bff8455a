#pragma once
// What load_model says of a checkpoint: its ModelLoadError's message, or "(no error)".
#include <string>

#include "tokenizers/model_error.hpp"
#include "models/model_loader.hpp"

namespace kvbench::testing {

inline std::string model_load_error(const std::string& path) {
  try {
    models::load_model(path);
  } catch (const models::ModelLoadError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace kvbench::testing
