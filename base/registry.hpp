#pragma once
// One template for kvbench's registries (policies, scorers, tasks, commands): entries register
// themselves from static initialisers in their own files, are kept sorted by name, a repeated name
// is refused, and an unknown name gets one wording everywhere: "unknown <kind> 'x' (known: ...)".
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench::base {

// `Entry` has a `name` member (std::string).
template <typename Entry>
class Registry {
 public:
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Throws std::logic_error for a repeated name: two files registering one name is a programming
  // error that would otherwise make the name mean whichever registered first.
  void add(Entry entry) {
    auto pos = std::lower_bound(entries_.begin(), entries_.end(), entry.name,
                                [](const Entry& e, const std::string& n) { return e.name < n; });
    if (pos != entries_.end() && pos->name == entry.name)
      throw std::logic_error(kind_ + " '" + entry.name + "' is registered twice");
    entries_.insert(pos, std::move(entry));
  }

  const std::vector<Entry>& all() const { return entries_; }

  const Entry* find(const std::string& name) const {
    auto pos = std::lower_bound(entries_.begin(), entries_.end(), name,
                                [](const Entry& e, const std::string& n) { return e.name < n; });
    return pos != entries_.end() && pos->name == name ? &*pos : nullptr;
  }

  // Throws std::invalid_argument "unknown <kind> 'x' (known: a, b, ...)".
  const Entry& at(const std::string& name) const {
    if (const Entry* e = find(name)) return *e;
    std::vector<std::string> names;
    for (const auto& e : entries_) names.push_back(e.name);
    throw unknown(name, names);
  }

  // The unknown-name error with the names a caller lists (task families list their members).
  std::invalid_argument unknown(const std::string& name, const std::vector<std::string>& known) const {
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    return std::invalid_argument("unknown " + kind_ + " '" + name + "' (known: " + list + ")");
  }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

}  // namespace kvbench::base
