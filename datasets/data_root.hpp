#pragma once
// Where the evaluation data lives: --data-root, else $KVBENCH_DATA, else ../shared/data. A user's
// full downloads in the official layouts work unchanged; a missing file names itself and where the
// official data comes from.
#include <string>

namespace kvbench::datasets {

std::string default_data_root();  // $KVBENCH_DATA or the build's shared data folder

// The data the repository bundles (data/: RULER's essays, word lists and Punkt model;
// PROVENANCE.md there).
std::string bundled_data_dir();

// root/relative, or a DataError-style message: "<path>: missing; official source: <source>".
std::string resolve_data_file(const std::string& root, const std::string& relative, const std::string& official_source);

}  // namespace kvbench::datasets
