#pragma once
// The data and the gnuplot commands of each figure type (kvbench figure, harness/figure.hpp):
// score vs budget as lines or grouped bars, heatmaps, and per-token curves along a stream. Every
// text from a spec or a result is written as a gnuplot string literal or a data field.
#include <string>
#include <vector>

#include "harness/table_data.hpp"

namespace kvbench::harness {

struct GnuplotPlot {
  std::string data;  // the .dat contents
  std::string body;  // the plotting commands (after `set terminal` / `set output`)
  int width = 900, height = 520;
  std::vector<std::string> warnings;
};

GnuplotPlot write_lines_or_bars(const TableSpec& spec, const TableData& t, const std::string& id);
GnuplotPlot write_heatmap(const TableSpec& spec, const TableData& t, const std::string& id);
GnuplotPlot write_stream(const TableSpec& spec, const TableData& t, const std::string& id);

}  // namespace kvbench::harness
