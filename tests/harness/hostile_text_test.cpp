// Text from a spec, a result or a path never reaches another interpreter (gnuplot, a shell script,
// LaTeX, Markdown, HTML) as code: every field of a table spec carries backquotes, $(...), \input,
// '|' and <script>, and each output is checked in its own language; a newline in a spec is an
// error naming the field; a Slurm array refuses a path that would add lines to its script.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "harness/figure.hpp"
#include "harness/output_escaping.hpp"
#include "harness/slurm_backend.hpp"
#include "harness/table_render.hpp"
#include "table_fixture.hpp"

namespace kvbench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;


// Every attack at once; `marker` names the file a shell command would create.
std::string hostile(const fs::path& marker) {
  return "x`touch " + marker.string() + "` $(touch " + marker.string() +
         ") \\input{/etc/hostname} | <script>alert(1)</script> ' \" %";
}

// The fixture spec with hostile text in every text field the renderers print.
json hostile_spec(const fs::path& marker) {
  json j = json::parse(table_testing::kFixtureSpec);
  const std::string h = hostile(marker);
  j["title"] = h;
  j["description"] = h;
  j["row_header"] = h;
  j["notes"] = json::array({h});
  j["paper"]["name"] = h;
  j["paper"]["source"] = h;
  j["paper"]["model"] = h;
  j["metric"]["label"] = h;
  j["rows"][0]["label"] = h + "A";
  j["rows"][0]["group"] = h;
  j["rows"][1]["label"] = h + "B";
  j["rows"][1]["group"] = h;
  j["columns"][0]["label"] = h + "50";
  j["columns"][0]["group"] = h;
  j["columns"][1]["label"] = h + "20";
  j["figure"]["title"] = h;
  j["figure"]["x_label"] = h;
  j["figure"]["y_label"] = h;
  return j;
}

struct Rendered {
  table_testing::TempDir dir;
  fs::path marker = dir.path / "pwned";
  harness::TableSpec spec;
  harness::TableData table;
  Rendered() {
    spec = harness::parse_table_spec(hostile_spec(marker), (dir.path / "hostile.json").string());
    table = harness::compute_table(spec, harness::ResultsIndex::load(table_testing::fixture_results_dir()));
  }
};

TEST(HostileText, GnuplotRunsNoCommandFromASpec) {
  Rendered r;
  const bool render = !harness::find_gnuplot().empty();
  const auto files = harness::draw_figure(r.spec, r.table, (r.dir.path / "fig").string(), render);
  const std::string script = table_testing::read_text(files.script);
  // gnuplot substitutes backquotes in double-quoted strings: the script has none left.
  std::istringstream lines(script);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#", 0) == 0) continue;
    bool in_single = false, in_double = false;
    for (char ch : line) {
      if (ch == '\'' && !in_double)
        in_single = !in_single;
      else if (ch == '"' && !in_single)
        in_double = !in_double;
      else if (ch == '`')
        EXPECT_TRUE(in_single) << "a backquote outside a single-quoted string: " << line;
    }
  }
  if (render) {
    EXPECT_FALSE(fs::exists(r.marker)) << "gnuplot ran a command from the spec";
    EXPECT_TRUE(fs::exists(files.svg));
  }
}

TEST(HostileText, LatexHasNoLiveCommandFromASpec) {
  Rendered r;
  const std::string tex = harness::render_latex(r.table);
  // Every backslash from the spec is \textbackslash{}: no \input, and nothing after a % that
  // starts a new line.
  EXPECT_EQ(tex.find("\\input"), std::string::npos) << tex;
  EXPECT_NE(tex.find("\\textbackslash{}input"), std::string::npos) << tex;
  EXPECT_EQ(tex.find("<script>"), std::string::npos);
}

TEST(HostileText, MarkdownKeepsItsTableShapeAndHasNoHtml) {
  Rendered r;
  const std::string md = harness::render_markdown(r.table);
  EXPECT_EQ(md.find("<script>"), std::string::npos) << md;
  EXPECT_NE(md.find("\\\\input"), std::string::npos) << md;  // the backslash escaped: text, not markup
  // Every table line has as many unescaped '|' as the header line.
  std::istringstream lines(md);
  int expected = -1;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("|", 0) != 0) continue;
    static const std::regex unescaped_bar(R"((^|[^\\])(\\\\)*\|)");
    const int bars = static_cast<int>(
        std::distance(std::sregex_iterator(line.begin(), line.end(), unescaped_bar), std::sregex_iterator()));
    if (expected < 0) expected = bars;
    EXPECT_EQ(bars, expected) << line;
  }
  EXPECT_GT(expected, 0);
}

TEST(HostileText, HtmlEscapesEverything) {
  Rendered r;
  const std::string html = harness::render_html(r.table);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
}

TEST(HostileText, ANewlineInASpecIsAnErrorNamingTheField) {
  table_testing::TempDir dir;
  for (const char* field : {"title", "description", "row_header"}) {
    json j = json::parse(table_testing::kFixtureSpec);
    j[field] = "T\nsystem 'touch /tmp/y'\n#";
    try {
      harness::parse_table_spec(j, "hostile.json");
      FAIL() << field << ": a newline was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("hostile.json: ") + field + ": must be one line"),
                std::string::npos)
          << e.what();
    }
  }
  json j = json::parse(table_testing::kFixtureSpec);
  j["rows"][1]["label"] = "a\tb";
  EXPECT_THROW(harness::parse_table_spec(j, "hostile.json"), std::invalid_argument);
  j = json::parse(table_testing::kFixtureSpec);
  j["notes"] = json::array({"ok", "line\n\\input{x}"});
  EXPECT_THROW(harness::parse_table_spec(j, "hostile.json"), std::invalid_argument);
}

// Text that does not come from a spec (a model name in a result, a path) is made one line by
// the escapers themselves.
TEST(HostileText, EscapersPutEverythingOnOneLine) {
  const std::string text = "a\nsystem 'touch /tmp/y'\r\n#`x` 'q' |<b>\\input";
  EXPECT_EQ(harness::gnuplot_string(text), "'a system ''touch /tmp/y''  #`x` ''q'' |<b>\\input'");
  EXPECT_EQ(harness::markdown_text(text), "a system 'touch /tmp/y'  #`x` 'q' \\|&lt;b&gt;\\\\input");
  EXPECT_EQ(harness::latex_text("a\n\\input{f}%"), "a \\textbackslash{}input\\{f\\}\\%");
  EXPECT_EQ(harness::html_escape("<a href=\"x\">&"), "&lt;a href=&quot;x&quot;&gt;&amp;");
  EXPECT_EQ(harness::shell_quote("it's"), "'it'\\''s'");
  EXPECT_TRUE(harness::has_control_character("a\x7f"));
  EXPECT_FALSE(harness::has_control_character("naïve — ok"));
}

// A number past a field's range says the range (1e18 is an integer, just not a window).
TEST(HostileText, AFigureNumberBeyondItsBoundSaysTheBound) {
  json j = json::parse(table_testing::kFixtureSpec);
  j["figure"] = {{"type", "stream"}, {"window", 1e18}};
  try {
    harness::parse_table_spec(j, "hostile.json");
    FAIL() << "window 1e18 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("figure.window: must be an integer in 1..1000000, got 1e+18"), std::string::npos)
        << e.what();
  }
}

TEST(HostileText, SlurmRefusesAPathThatWouldAddAScriptLine) {
  table_testing::TempDir dir;
  harness::Job job;
  job.spec = {{"task", "tinystories"}};
  job.id = "0123456789abcdef";
  harness::SlurmOptions options;
  options.dir = (dir.path / "array").string();
  options.working_dir = (dir.path / "cwd\ntouch /tmp/z\n#").string();
  try {
    harness::write_slurm_array("grid", {job}, (dir.path / "runs").string(), options);
    FAIL() << "a working directory with newlines was written into the script";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the working directory"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "array" / "array.sbatch"));
  options.working_dir = dir.path.string();
  options.dir = (dir.path / "arr\nay").string();
  EXPECT_THROW(harness::write_slurm_array("grid", {job}, (dir.path / "runs").string(), options), std::invalid_argument);
}

}  // namespace
}  // namespace kvbench
