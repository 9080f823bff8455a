#include "base/param_listing.hpp"

#include <sstream>

namespace kvbench::params {
namespace {

// No value to show: the task computes the default from other settings (the help says how).
bool is_computed(const Param& p) { return p.default_value.is_null() && !p.nullable; }

std::string default_text(const Param& p) {
  return is_computed(p) ? "computed" : p.default_value.dump();
}

// The constraint beyond the type: "1..100", ">= 0", "max | avg".
std::string constraint_text(const Param& p) {
  if (!p.choices.empty()) {
    std::string list;
    for (const auto& c : p.choices) list += (list.empty() ? "" : " | ") + c;
    return list;
  }
  std::ostringstream os;
  if (p.min && p.max)
    os << *p.min << ".." << *p.max;
  else if (p.min)
    os << ">= " << *p.min;
  else if (p.max)
    os << "<= " << *p.max;
  return os.str();
}

// Markdown cells hold no raw '|' or newline.
std::string cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

}  // namespace

nlohmann::json describe(const Params& params) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : params) {
    nlohmann::json d = {{"name", p.name}, {"type", p.type_name()}, {"default", p.default_value}, {"help", p.help}};
    if (p.min) d["min"] = *p.min;
    if (p.max) d["max"] = *p.max;
    if (!p.choices.empty()) d["choices"] = p.choices;
    if (p.nullable) d["nullable"] = true;
    out.push_back(d);
  }
  return out;
}

std::string text_listing(const Params& params, const std::string& indent) {
  std::ostringstream out;
  for (const auto& p : params) {
    const std::string constraint = constraint_text(p);
    out << indent << p.name << " (" << p.type_name() << (p.nullable ? " or null" : "") << ", default "
        << default_text(p) << (constraint.empty() ? "" : ", " + constraint) << "): " << p.help << "\n";
  }
  return out.str();
}

std::string markdown_table(const Params& params) {
  std::ostringstream out;
  out << "| parameter | type | default | |\n|---|---|---|---|\n";
  for (const auto& p : params) {
    const std::string constraint = constraint_text(p);
    std::string type = p.type_name() + (p.nullable ? " or null" : "");
    if (!constraint.empty()) type += ", " + constraint;
    out << "| `" << p.name << "` | " << cell(type) << " | "
        << cell(is_computed(p) ? "computed" : "`" + p.default_value.dump() + "`") << " | "
        << cell(p.help) << " |\n";
  }
  return out.str();
}

}  // namespace kvbench::params
