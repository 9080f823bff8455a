#pragma once
// `kvbench score --param key=value`: a metric's parameters read from the command line's strings,
// remembering which were read, so leftovers are reported as unknown and the resolved values can be
// echoed in the output.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench::harness {

class MetricParams {
 public:
  MetricParams(std::string metric, std::map<std::string, std::string> given)
      : metric_(std::move(metric)), given_(std::move(given)) {}

  std::string choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed) {
    std::string v = take(key).value_or(def);
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
      throw std::invalid_argument(metric_ + ": parameter " + key + "=" + v + " is not one of " + join(allowed));
    resolved_[key] = v;
    return v;
  }
  bool boolean(const std::string& key, bool def) {
    auto v = take(key);
    bool b = def;
    if (v) {
      if (*v == "true") b = true;
      else if (*v == "false") b = false;
      else throw std::invalid_argument(metric_ + ": parameter " + key + "=" + *v + " must be true or false");
    }
    resolved_[key] = b;
    return b;
  }
  int integer(const std::string& key, int def, int lo, int hi) {
    auto v = take(key);
    int x = def;
    if (v) {
      size_t used = 0;
      try {
        x = std::stoi(*v, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != v->size() || x < lo || x > hi)
        throw std::invalid_argument(metric_ + ": parameter " + key + "=" + *v + " must be an integer in " +
                                    std::to_string(lo) + ".." + std::to_string(hi));
    }
    resolved_[key] = x;
    return x;
  }
  std::optional<double> number(const std::string& key) {
    auto v = take(key);
    if (!v) return std::nullopt;
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(*v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v->size() || !std::isfinite(x))
      throw std::invalid_argument(metric_ + ": parameter " + key + "=" + *v + " must be a finite number");
    resolved_[key] = x;
    return x;
  }
  // A finite number in [lo, hi] (hi may be infinity: no upper bound).
  std::optional<double> number_in(const std::string& key, double lo, double hi) {
    const std::optional<double> x = number(key);
    if (x && (*x < lo || *x > hi))
      throw std::invalid_argument(metric_ + ": parameter " + key + "=" + given_.at(key) + " must be " +
                                  (std::isinf(hi) ? "a finite number >= " + format(lo)
                                                  : "a number in [" + format(lo) + ", " + format(hi) + "]"));
    return x;
  }
  std::optional<std::string> optional_string(const std::string& key) {
    auto v = take(key);
    if (v) resolved_[key] = *v;
    return v;
  }
  // Throws when a given parameter was never read.
  void finish(const std::vector<std::string>& accepted) const {
    for (const auto& [k, v] : given_) {
      if (!used_.count(k))
        throw std::invalid_argument("unknown parameter '" + k + "' for metric " + metric_ + " (accepted: " +
                                    (accepted.empty() ? std::string("none") : join(accepted)) + ")");
    }
  }
  const nlohmann::json& resolved() const { return resolved_; }

 private:
  std::optional<std::string> take(const std::string& key) {
    used_.insert(key);
    auto it = given_.find(key);
    if (it == given_.end()) return std::nullopt;
    return it->second;
  }
  static std::string format(double x) {
    std::ostringstream out;
    out << x;
    return out.str();
  }
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  std::string metric_;
  std::map<std::string, std::string> given_;
  std::set<std::string> used_;
  nlohmann::json resolved_ = nlohmann::json::object();
};

}  // namespace kvbench::harness
