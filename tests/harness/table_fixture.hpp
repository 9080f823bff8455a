#pragma once
// The fixture table shared by the table, figure and report tests: XSUM ROUGE-L of K-VEC at two
// budgets, results in tests/fixtures/results/ (with distractors of the wrong budget, task and
// parameters), paper numbers typed in below.
#include "harness/file_tree.hpp"
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "harness/table_spec.hpp"

namespace kvbench::table_testing {

// The checkout's tests/ folder, from this header's path (relative to the build folder when ccache
// rewrote the compile paths).
inline std::filesystem::path tests_dir() {
  std::filesystem::path here(__FILE__);
  if (here.is_relative()) here = std::filesystem::path(KVBENCH_BUILD_DIR) / here;
  return std::filesystem::weakly_canonical(here).parent_path().parent_path();
}
inline std::string fixture_results_dir() { return (tests_dir() / "fixtures" / "results").string(); }
inline std::string repo_dir() { return tests_dir().parent_path().string(); }

// A file's bytes ("" when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const char* kFixtureSpec = R"JSON({
  "title": "Fixture: XSUM ROUGE-L vs budget",
  "paper": {"name": "K-VEC", "file": "k-vec.txt", "source": "Table 99", "model": "Llama-3.1-8B-Instruct",
            "model_ids": ["meta-llama/Llama-3.1-8B-Instruct"]},
  "fixed": {"task": "xsum", "protocol": "stream", "model": "stories260K"},
  "metric": {"path": "rougeL", "scale": 100, "decimals": 1, "label": "ROUGE-L (%)"},
  "rows": [
    {"label": "KVEC", "fields": {"policy": "kvec"}, "paper": [30.0, 20.0, 25.0]},
    {"label": "KVEC-0.5", "fields": {"policy": "kvec", "policy_params": {"lambda": 0.5}}, "paper": [null, 18.5, null]}
  ],
  "columns": [
    {"label": "50%", "fields": {"budget": "50%"}, "x": 50},
    {"label": "20%", "fields": {"budget": "20%"}, "x": 20},
    {"label": "Avg.", "aggregate": "mean"}
  ],
  "figure": {"type": "lines", "x_label": "KV budget (%)"}
})JSON";

// A private temporary folder, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("kvbench-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    harness::remove_tree(path.string());
  }
  std::string write(const std::string& name, const std::string& text) const {
    const auto file = path / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
};

inline harness::TableSpec fixture_spec(const std::string& origin = "fixture_xsum.json") {
  return harness::parse_table_spec(nlohmann::json::parse(kFixtureSpec), origin);
}

}  // namespace kvbench::table_testing
