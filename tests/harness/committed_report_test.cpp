// The committed report shows the same cells as the committed tables: for every table of
// results/regenerated, the "ours" cells of its Markdown table equal, one by one, the "ours" cells
// of its section in report.html (both read results/regeneration.json, so they look up the same
// jobs). Regenerating one without the other, or a report run without the per-spec overrides, fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "table_fixture.hpp"

namespace kvbench {
namespace {

namespace fs = std::filesystem;

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// A Markdown table row's cells, split at '|' that are not escaped.
std::vector<std::string> row_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      cell += line[++i];
    } else if (line[i] == '|') {
      cells.push_back(trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// The "ours" cells of a rendered Markdown table, row by row.
std::vector<std::string> markdown_ours(const std::string& md) {
  std::istringstream lines(md);
  std::vector<std::string> ours;
  size_t per = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("|", 0) != 0) continue;
    if (per == 0) {  // the header: with the paper's numbers a column is ours | paper | Δ
      per = line.find(" ours |") != std::string::npos ? 3 : 1;
      continue;
    }
    if (line.rfind("|---", 0) == 0 || line.rfind("| **", 0) == 0) continue;  // separator, row group
    const std::vector<std::string> cells = row_cells(line);
    for (size_t c = 1; c < cells.size(); c += per) ours.push_back(cells[c]);
  }
  return ours;
}

std::string html_unescape(std::string s) {
  for (const auto& [entity, text] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}})
    for (size_t at = s.find(entity); at != std::string::npos; at = s.find(entity, at + text.size()))
      s.replace(at, entity.size(), text);
  return s;
}

// The "ours" cells of one table's section of the report.
std::vector<std::string> report_ours(const std::string& html, const std::string& id) {
  const size_t start = html.find("<section class=\"table\" id=\"" + id + "\">");
  if (start == std::string::npos) return {};
  const std::string section = html.substr(start, html.find("</section>", start) - start);
  static const std::regex cell(R"(<td class="ours[^"]*">([^<]*)</td>)");
  std::vector<std::string> ours;
  for (auto it = std::sregex_iterator(section.begin(), section.end(), cell); it != std::sregex_iterator(); ++it)
    ours.push_back(html_unescape((*it)[1].str()));
  return ours;
}

TEST(CommittedReport, EveryCellEqualsTheCommittedTables) {
  const fs::path dir = fs::path(table_testing::repo_dir()) / "results" / "regenerated";
  const std::string html = table_testing::read_text(dir / "report.html");
  ASSERT_FALSE(html.empty());
  size_t tables = 0, cells = 0;
  for (const auto& spec : fs::directory_iterator(fs::path(table_testing::repo_dir()) / "results" / "tables")) {
    if (spec.path().extension() != ".json") continue;
    const std::string id = spec.path().stem().string();
    const std::string md = table_testing::read_text(dir / (id + ".md"));
    ASSERT_FALSE(md.empty()) << id << ": no committed table";
    const std::vector<std::string> table = markdown_ours(md), report = report_ours(html, id);
    ASSERT_FALSE(report.empty()) << id << ": not in the committed report";
    EXPECT_EQ(table, report) << id << ": the report's cells differ from the table's";
    ++tables;
    cells += table.size();
  }
  EXPECT_GT(tables, 30u);
  EXPECT_GT(cells, 1000u);
}

// The check itself: a report built without a spec's overrides looks up other jobs.
TEST(CommittedReport, TheComparisonSeesOneChangedCell) {
  const std::string md = "| Policy | A ours | A paper | A Δ |\n|---|---:|---:|---:|\n| **g** | | | |\n| x | 1.0 | 2.0 | -1.0 |\n";
  EXPECT_EQ(markdown_ours(md), (std::vector<std::string>{"1.0"}));
  const std::string html = "<section class=\"table\" id=\"t\"><td class=\"ours\">1.0</td></section>";
  EXPECT_EQ(report_ours(html, "t"), markdown_ours(md));
  const std::string other = "<section class=\"table\" id=\"t\"><td class=\"ours missing\">—</td></section>";
  EXPECT_NE(report_ours(other, "t"), markdown_ours(md));
}

}  // namespace
}  // namespace kvbench
