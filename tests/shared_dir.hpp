#pragma once
// The shared models and data (../shared, KVBENCH_SHARED_DIR), for every test that reads them.
#include <string>

namespace kvbench::testing {

inline const std::string kShared = KVBENCH_SHARED_DIR;

}  // namespace kvbench::testing
