#pragma once
// A per-token NLL curve file, as `kvbench perplexity --curve` writes it and a stream figure's
// row reads it (`curve_file`): an optional header line "token_index<TAB>nll", then one line per
// token "<index><TAB><nll>" with indexes 1, 2, 3, ... (the figure plots the i-th value at x = i,
// so a gap or a reordering would move the curve). Lines starting with '#' are comments.
#include <string>
#include <vector>

namespace kvbench::harness {

// The NLL values in token order. Strict: both fields fully parsed, indexes consecutive from 1,
// every NLL finite and >= 0. Throws std::invalid_argument "<path>:<line>: ..." for a bad line or
// "<path>: ..." for a file without data lines, std::runtime_error "<path>: ..." for a file that is
// missing, unreadable or not a regular file (a directory).
std::vector<double> read_curve_file(const std::string& path);

}  // namespace kvbench::harness
