// `kvbench params-docs FILE...`: the parameter tables in the docs are generated from the
// declarations (base/param.hpp), between markers
//   <!-- params: policy snapkv -->  ...table...  <!-- /params -->
//   <!-- params: task longbench/qasper -->  ...  <!-- /params -->
// Without --update it checks them (exit 1 naming each table that drifted, as a test runs it);
// with --update it rewrites them in place (atomically).
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/param_listing.hpp"
#include "harness/atomic_file.hpp"
#include "harness/command.hpp"
#include "policies/registry.hpp"
#include "tasks/task_registry.hpp"

namespace kvbench::harness {
namespace {

constexpr const char* kOpen = "<!-- params: ";
constexpr const char* kClose = "<!-- /params -->";

// The table a marker names: "policy NAME" or "task NAME".
std::string table_for(const std::string& what, const std::string& where) {
  const size_t space = what.find(' ');
  const std::string kind = what.substr(0, space), name = space == std::string::npos ? "" : what.substr(space + 1);
  if (kind == "policy") return params::markdown_table(policies::policy_params(name));
  if (kind == "task") return params::markdown_table(tasks::make_task(name)->parameters());
  throw std::invalid_argument(where + ": a params marker names 'policy NAME' or 'task NAME', got '" + what + "'");
}

// The file with every marked table regenerated; `drifted` names the tables that changed.
std::string regenerate(const std::string& path, const std::string& text, std::vector<std::string>& drifted) {
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    out << line << "\n";
    if (line.rfind(kOpen, 0) != 0) continue;  // a marker is a line of its own (prose may quote one)
    const size_t at = 0;
    const size_t end = line.find(" -->", at);
    const std::string where = path + ":" + std::to_string(number);
    if (end == std::string::npos) throw std::invalid_argument(where + ": unterminated params marker");
    const std::string what = line.substr(at + std::string(kOpen).size(), end - at - std::string(kOpen).size());
    std::string old;
    bool closed = false;
    while (std::getline(in, line)) {
      ++number;
      if (line.find(kClose) != std::string::npos) {
        closed = true;
        break;
      }
      old += line + "\n";
    }
    if (!closed) throw std::invalid_argument(where + ": params marker '" + what + "' has no " + kClose);
    const std::string table = table_for(what, where);
    if (table != old) drifted.push_back(where + " (" + what + ")");
    out << table << kClose << "\n";
  }
  return out.str();
}

int run_params_docs(const std::vector<std::string>& files, bool update) {
  int stale = 0;
  for (const auto& path : files) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw std::invalid_argument(path + ": cannot read");
    std::ostringstream text;
    text << file.rdbuf();
    std::vector<std::string> drifted;
    const std::string fresh = regenerate(path, text.str(), drifted);
    if (drifted.empty()) continue;
    if (update) {
      write_file_atomically(path, fresh);
      for (const auto& d : drifted) std::cout << "updated " << d << "\n";
    } else {
      for (const auto& d : drifted)
        std::cerr << "kvbench: error: " << d
                  << ": the table differs from the declaration (kvbench params-docs --update " << path << ")\n";
      stale += static_cast<int>(drifted.size());
    }
  }
  return stale == 0 ? 0 : 1;
}

const CommandRegistration params_docs_registration(
    "params-docs", "Check (or --update) the docs' parameter tables against the declarations", [](CLI::App& app) {
      auto files = std::make_shared<std::vector<std::string>>();
      auto update = std::make_shared<bool>(false);
      app.add_option("files", *files, "Markdown files with params markers")->required();
      app.add_flag("--update", *update, "rewrite the tables in place");
      return [files, update] { return run_params_docs(*files, *update); };
    });

}  // namespace
}  // namespace kvbench::harness
