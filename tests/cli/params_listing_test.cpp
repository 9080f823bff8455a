// Every parameter is declared once: `kvbench policies --json` and `kvbench tasks --json` list each
// with its type, default and help (range or choices where they apply), and the tables in docs/
// equal the declarations (`kvbench params-docs` regenerates them; this test fails on drift).
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "run_binary.hpp"

namespace kvbench::testing {
namespace {

namespace fs = std::filesystem;

std::string docs_dir() {
  fs::path here(__FILE__);
  if (here.is_relative()) here = fs::path(KVBENCH_BUILD_DIR) / here;
  return (fs::weakly_canonical(here).parent_path().parent_path().parent_path() / "docs").string();
}

void expect_described(const nlohmann::json& entry) {
  const std::string name = entry.at("name");
  EXPECT_FALSE(entry.at("summary").get<std::string>().empty()) << name;
  for (const auto& p : entry.at("params")) {
    for (const char* key : {"name", "type", "default", "help"}) EXPECT_TRUE(p.contains(key)) << name << " " << p.dump();
    EXPECT_FALSE(p.at("help").get<std::string>().empty()) << name << "." << p.at("name");
    if (p.contains("choices") && !p.at("default").is_null())
      EXPECT_NE(std::find(p["choices"].begin(), p["choices"].end(), p["default"]), p["choices"].end()) << name;
  }
}

TEST(ParamsListing, PoliciesJsonListsEveryParameterWithTypeDefaultAndHelp) {
  const CommandResult r = run_kvbench("policies --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json all = nlohmann::json::parse(r.output);
  std::set<std::string> names;
  for (const auto& p : all) {
    names.insert(p.at("name").get<std::string>());
    EXPECT_FALSE(p.at("source").get<std::string>().empty()) << p["name"];
    expect_described(p);
  }
  for (const char* expected : {"snapkv", "adakv", "h2o", "roco", "kvec", "buzz", "cascade", "bumblebee", "full"})
    EXPECT_TRUE(names.count(expected)) << expected;
  // A declaration's range and choices come through.
  for (const auto& p : all)
    if (p["name"] == "snapkv")
      for (const auto& param : p["params"]) {
        if (param["name"] == "window") EXPECT_EQ(param["min"], 1);
        if (param["name"] == "pooling") EXPECT_EQ(param["choices"], nlohmann::json({"max", "avg", "none"}));
      }
}

TEST(ParamsListing, TasksJsonListsEveryParameterWithTypeDefaultAndHelp) {
  const CommandResult r = run_kvbench("tasks --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json all = nlohmann::json::parse(r.output);
  EXPECT_GT(all.size(), 80u);  // 16 + 1 LongBench, 57 + 2 MMLU, lm_eval, fidelity, ...
  for (const auto& t : all) expect_described(t);
}

TEST(ParamsListing, TheDocsTablesEqualTheDeclarations) {
  std::string files;
  for (const auto& entry : fs::directory_iterator(docs_dir()))
    if (entry.path().extension() == ".md") files += " '" + entry.path().string() + "'";
  const CommandResult r = run_kvbench("params-docs" + files + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output << "(run: build/kvbench params-docs --update docs/*.md)";
  // At least the policies' and the tasks' tables are there to compare.
  const CommandResult count = run_shell("grep -c '<!-- params: ' " + docs_dir() + "/*.md | awk -F: '{s+=$2} END {print s}'");
  EXPECT_GE(std::stoi(count.output), 20) << count.output;
}

TEST(ParamsListing, ADriftedTableFailsNamingTheFileAndLine) {
  const fs::path doc = fs::temp_directory_path() / ("kvbench-params-doc-" + std::to_string(::getpid()) + ".md");
  std::ofstream(doc) << "# t\n\n<!-- params: policy snapkv -->\n| parameter | type | default | |\n|---|---|---|---|\n"
                        "| `window` | integer, >= 1 | `16` | old default |\n<!-- /params -->\n";
  const CommandResult check = run_kvbench("params-docs '" + doc.string() + "' 2>&1");
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_NE(check.output.find(doc.string() + ":3 (policy snapkv): the table differs from the declaration"), std::string::npos)
      << check.output;
  const CommandResult update = run_kvbench("params-docs --update '" + doc.string() + "' 2>&1");
  EXPECT_EQ(update.exit_code, 0) << update.output;
  EXPECT_EQ(run_kvbench("params-docs '" + doc.string() + "' 2>&1").exit_code, 0);
  std::ofstream(doc) << "<!-- params: policy nope -->\n<!-- /params -->\n";
  const CommandResult bad = run_kvbench("params-docs '" + doc.string() + "' 2>&1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("unknown policy 'nope'"), std::string::npos) << bad.output;
  fs::remove(doc);
}

}  // namespace
}  // namespace kvbench::testing
