#pragma once
// The renderings of a computed table (harness/table_data.hpp): Markdown, CSV, LaTeX and an HTML
// fragment for the report; text from specs and results is quoted for each language
// (harness/output_escaping.hpp).
#include <string>

#include "harness/table_data.hpp"

namespace kvbench::harness {

std::string render_markdown(const TableData& table);
std::string render_csv(const TableData& table);
std::string render_latex(const TableData& table);
std::string render_html(const TableData& table);  // a <section> fragment for the report

}  // namespace kvbench::harness
