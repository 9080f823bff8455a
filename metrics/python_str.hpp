#pragma once
// Python's str methods the scorers and generators reproduce. str.replace: python_replace.
// Python's str() of a JSON number, for scorers that compare str(ground_truth) as the reference
// code does (LongBench count_score): str(21) = "21", str(21.0) = "21.0", str(1e16) = "1e+16",
// str(1e-05) = "1e-05" (repr: the shortest digits that round-trip; scientific notation when the
// decimal exponent is < -4 or >= 16).
#include <cstdint>
#include <string>

namespace kvbench::metrics {

std::string python_float_str(double value);
std::string python_int_str(int64_t value);

// s.replace(old, new): every non-overlapping occurrence, left to right, in one pass (the inserted
// text is never searched again). An empty `old` leaves s as it is (Python would insert `new`
// between every character; no caller asks for that).
std::string python_replace(const std::string& s, const std::string& old, const std::string& replacement);

}  // namespace kvbench::metrics
