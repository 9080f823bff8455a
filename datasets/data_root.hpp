#pragma once
// Where the evaluation data lives: --data-root, else $KVBENCH_DATA, else ../shared/data. A user's
// full downloads in the official layouts work unchanged; a missing file names itself and where the
// official data comes from.
#include <string>

namespace kvbench::datasets {

std::string default_data_root();  // $KVBENCH_DATA or the build's shared data folder

// Data the repository bundles (data/, PROVENANCE.md there): root/relative when the user's data
// root has it, else the bundled copy, else the error of resolve_data_file.
std::string resolve_bundled_data_file(const std::string& root, const std::string& relative, const std::string& official_source);

// root/relative, or a DataError-style message: "<path>: missing; official source: <source>".
std::string resolve_data_file(const std::string& root, const std::string& relative, const std::string& official_source);

}  // namespace kvbench::datasets
