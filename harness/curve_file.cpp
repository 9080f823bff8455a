#include "harness/curve_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "datasets/regular_file.hpp"

namespace kvbench::harness {
namespace {

constexpr const char* kHeader = "token_index\tnll";

// Whether the whole field is a number: strtoll/strtod skip leading blanks and stop at trailing
// junk ("2.0 junk"), so both ends are checked here.
bool parse_index(const std::string& s, int64_t& out) {
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9')) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

bool parse_number(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

}  // namespace

std::vector<double> read_curve_file(const std::string& path) {
  // Regular files only: a directory used to read as an empty curve, a FIFO would block.
  const std::string text = datasets::read_regular_file(path, "curve file");
  std::istringstream in(text);
  std::vector<double> nll;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    if (!line.empty() && line[0] == '#') continue;
    if (nll.empty() && line == kHeader) continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || line.find('\t', tab + 1) != std::string::npos)
      throw std::invalid_argument(where + "expected 'token_index<TAB>nll' (two tab-separated fields), got '" + line +
                                  "'");
    const std::string index_text = line.substr(0, tab), nll_text = line.substr(tab + 1);
    int64_t index = 0;
    if (!parse_index(index_text, index))
      throw std::invalid_argument(where + "token_index '" + index_text + "' is not a whole number");
    const int64_t expected = static_cast<int64_t>(nll.size()) + 1;
    if (index != expected)
      throw std::invalid_argument(where + "token_index " + index_text + ", expected " + std::to_string(expected) +
                                  " (indexes run 1, 2, 3, ... in order: the figure plots the i-th value at token i)");
    double value = 0;
    if (!parse_number(nll_text, value)) throw std::invalid_argument(where + "nll '" + nll_text + "' is not a number");
    if (!std::isfinite(value) || value < 0)
      throw std::invalid_argument(where + "nll " + nll_text + " must be finite and >= 0 (a negative log-likelihood)");
    nll.push_back(value);
  }
  if (nll.empty())
    throw std::invalid_argument(path + ": curve file has no data line (expected 'token_index<TAB>nll' lines, as "
                                       "kvbench perplexity --curve writes)");
  return nll;
}

}  // namespace kvbench::harness
