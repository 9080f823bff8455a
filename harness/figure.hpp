#pragma once
// The papers' figure types drawn with gnuplot: score vs budget (one line per policy, the paper's
// numbers dashed), grouped bars, heatmaps (needle: context length × depth; Self-BLEU: policy ×
// budget) and per-token NLL / perplexity along a stream. The data file and the gnuplot script are
// written next to the PNG and SVG so a user can restyle and re-run `gnuplot <id>.gp`.
#include <string>
#include <vector>

#include "harness/curve_file.hpp"
#include "harness/table_render.hpp"

namespace kvbench::harness {

struct FigureFiles {
  std::string data, script, png, svg;
  std::vector<std::string> warnings;  // e.g. a stream row whose results have no NLL curve
};

// The gnuplot executable on PATH, or "" when it is not installed.
std::string find_gnuplot();
// "pngcairo" when this gnuplot has it, else "png"; throws when it has neither.
std::string png_terminal(const std::string& gnuplot);

// Writes <out_dir>/<id>.dat and <id>.gp; with `render`, runs gnuplot to make <id>.png and <id>.svg
// (throws, with gnuplot's error, if that fails or gnuplot is missing). Throws if the spec has no
// figure section.
FigureFiles draw_figure(const TableSpec& spec, const TableData& table, const std::string& out_dir, bool render = true);

// A stream row's curve: per-position mean NLL over the examples of the cell's results (each
// example's "nll_curve"), or a TSV curve file (read_curve_file, harness/curve_file.hpp). Smoothed as the figure says: a trailing moving average over
// `window` tokens, or the cumulative mean; y = exp(.) when the figure plots perplexity.
std::vector<double> mean_curve(const std::vector<const ResultRecord*>& results, std::string* warning);
std::vector<double> smooth_curve(const std::vector<double>& nll, const FigureSpec& figure);

}  // namespace kvbench::harness
