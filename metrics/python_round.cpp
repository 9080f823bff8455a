// Python's round(float, n) and numpy's round on float64. Declared in longbench_metrics.hpp.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "metrics/longbench_metrics.hpp"

namespace kvbench::metrics {

double python_round(double x, int ndigits) {
  if (ndigits < 0 || ndigits > 300) throw std::invalid_argument("python_round: ndigits out of range");
  if (!std::isfinite(x)) return x;
  // CPython rounds the exact binary value to ndigits decimals half-to-even (dtoa mode 3), then
  // reads the decimal string back. glibc's printf rounds the exact value the same way.
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", ndigits, x);
  return std::strtod(buf, nullptr);
}

double numpy_round(double x, int decimals) {
  if (decimals < 0) throw std::invalid_argument("numpy_round: negative decimals not supported");
  double f = std::pow(10.0, decimals);
  return std::nearbyint(x * f) / f;
}

}  // namespace kvbench::metrics
