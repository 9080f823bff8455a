// Grid specs: the product of the axes in the documented order, include entries, one job per
// distinct spec, and errors that name the file, the line and the field.
#include <gtest/gtest.h>

#include <fstream>

#include "error_text.hpp"
#include "harness/grid_spec.hpp"
#include "harness/temp_dir.hpp"

namespace kvbench::harness {
namespace {

TEST(GridSpec, ExpandsTheProductInAxisOrderThenIncludes) {
  nlohmann::json grid = {
      {"fixed", {{"task", "tinystories"}, {"limit", 2}}},
      {"axes", {{"seed", {0, 1}}, {"budget", {"32", "64"}}, {"policy", {"kvec", {{"name", "bumblebee"}, {"params", nlohmann::json::object()}}}}}},
      {"include", {{{"policy", "full"}, {"budget", "full"}, {"limit", 5}}}}};
  std::vector<nlohmann::json> cells = expand_grid_cells(grid, "g");
  ASSERT_EQ(cells.size(), 2u * 2u * 2u + 1u);
  // policy varies slowest, then budget, then seed.
  EXPECT_EQ(cells[0], (nlohmann::json{{"task", "tinystories"}, {"limit", 2}, {"policy", "kvec"}, {"budget", "32"}, {"seed", 0}}));
  EXPECT_EQ(cells[1]["seed"], 1);
  EXPECT_EQ(cells[2]["budget"], "64");
  EXPECT_EQ(cells[4]["policy"], "bumblebee");
  EXPECT_EQ(cells[4]["policy_params"], nlohmann::json::object());
  EXPECT_EQ(cells[8], (nlohmann::json{{"task", "tinystories"}, {"limit", 5}, {"policy", "full"}, {"budget", "full"}}));
}

TEST(GridSpec, RunsEqualJobsOnce) {
  // "64" twice, and an include equal to an axis cell once its defaults are filled in.
  nlohmann::json grid = {{"fixed", {{"task", "tinystories"}}},
                         {"axes", {{"policy", {"kvec"}}, {"budget", {"64", "64"}}}},
                         {"include", {{{"policy", "kvec"}, {"budget", "64"}, {"seed", 0}}, {{"policy", "full"}}}}};
  Grid g = make_grid(grid, "g");
  ASSERT_EQ(g.cells.size(), 2u);
  EXPECT_EQ(g.cells[0].job.spec["policy"], "kvec");
  EXPECT_EQ(g.cells[1].job.spec["policy"], "full");
  EXPECT_NE(g.cells[0].job.id, g.cells[1].job.id);
}

TEST(GridSpec, RejectsMalformedGrids) {
  auto rejects = [](const nlohmann::json& grid, const std::string& needle) {
    try {
      expand_grid_cells(grid, "grid.json");
      ADD_FAILURE() << "accepted " << grid.dump();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  rejects({{"axes", {{"budget", nlohmann::json::array()}}}}, "field 'budget'");
  rejects({{"fixed", {{"budget", "64"}}}, {"axes", {{"budget", {"32"}}}}}, "both fixed and an axis");
  rejects({{"axes", {{"policy", {{{"name", "kvec"}, {"parms", {}}}}}}}}, "unknown key 'parms'");
  rejects({{"axis", {{"budget", {"32"}}}}}, "field 'axis'");
  rejects(nlohmann::json::object(), "no jobs");
}

TEST(GridSpec, FileErrorsNameTheLineOfTheBadField) {
  testing::TempDir dir;
  const std::string path = dir / "grid.json";
  std::ofstream(path) << "{\n  \"fixed\": {\"task\": \"tinystories\"},\n  \"axes\": {\n    \"budgte\": [\"32\"]\n  }\n}\n";
  try {
    load_grid(path);
    FAIL() << "accepted an unknown job field";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":4: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("budgte"), std::string::npos) << e.what();
  }
}

TEST(GridSpec, AListOfGridsRunsAsOneGridNamedAfterTheFile) {
  // What `kvbench table --print-grid` prints when the table's cells differ in fixed fields.
  testing::TempDir dir;
  const std::string path = dir / "tables.json";
  std::ofstream(path) << R"([
  {"name": "t-1", "fixed": {"task": "tinystories", "limit": 2},
   "axes": {"policy": ["local", "h2o"], "budget": ["32"]}},
  {"name": "t-2", "fixed": {"task": "tinystories", "limit": 3},
   "axes": {"policy": ["local"], "budget": ["32"]},
   "include": [{"task": "tinystories", "limit": 2, "policy": "h2o", "budget": "32"}]}
]
)";
  const Grid grid = load_grid(path);
  EXPECT_EQ(grid.name, "tables");
  EXPECT_EQ(grid.description, "2 grids: t-1, t-2");
  ASSERT_EQ(grid.cells.size(), 3u);  // the second grid's include repeats a job of the first
  EXPECT_EQ(grid.cells[0].job.spec["policy"], "local");
  EXPECT_EQ(grid.cells[1].job.spec["policy"], "h2o");
  EXPECT_EQ(grid.cells[2].job.spec["limit"], 3);
  EXPECT_EQ(make_grid(nlohmann::json::parse(std::ifstream(path)), "g").cells.size(), 3u);
}

TEST(GridSpec, AnErrorInAListOfGridsNamesTheGridAndItsLine) {
  testing::TempDir dir;
  const std::string path = dir / "tables.json";
  // "budget" appears in both grids; the bad one is the second's (line 4), not the first's.
  std::ofstream(path) << "[\n  {\"fixed\": {\"task\": \"tinystories\"}, \"axes\": {\"budget\": [\"32\"]}},\n"
                         "  {\"fixed\": {\"task\": \"tinystories\"},\n   \"axes\": {\"budget\": []}}\n]\n";
  const auto load_error = [&] { return testing::error_of([&] { load_grid(path); }); };  // "(no error)" if accepted
  EXPECT_NE(load_error().find(path + ":4: grid 2 of 2: field 'budget'"), std::string::npos) << load_error();
  std::ofstream(path) << "[]";
  EXPECT_NE(load_error().find("the list of grids is empty"), std::string::npos) << load_error();
  std::ofstream(path) << "[{\"fixed\": {\"task\": \"tinystories\"}, \"axes\": {\"budget\": [\"32\"]}}, 7]";
  EXPECT_NE(load_error().find("grid 2 of 2: a grid must be a JSON object"), std::string::npos) << load_error();
}

TEST(GridSpec, AFileNameThatCannotNameTheGridIsNamedOnce) {
  testing::TempDir dir;
  const std::string path = dir / "-bad.json";  // the stem names results/slurm/<name>
  std::ofstream(path) << R"({"fixed": {"task": "tinystories"}, "axes": {"budget": ["32"]}})";
  const std::string error = testing::error_of([&] { load_grid(path); });
  EXPECT_EQ(error.rfind(path + ": field 'name': a grid name must be", 0), 0u) << error;
}

}  // namespace
}  // namespace kvbench::harness
