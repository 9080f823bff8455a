#include "harness/figure.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/atomic_file.hpp"
#include "harness/figure_plots.hpp"
#include "harness/file_tree.hpp"
#include "harness/output_escaping.hpp"

namespace kvbench::harness {
namespace fs = std::filesystem;
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder, removed with its contents when it goes out of scope.
struct RenderFolder {
  std::string path;
  explicit RenderFolder(std::string p) : path(std::move(p)) {
    remove_tree(path);  // a leftover of a killed run with the same pid
    fs::create_directories(path);
  }
  ~RenderFolder() { remove_tree(path); }
  RenderFolder(const RenderFolder&) = delete;
  RenderFolder& operator=(const RenderFolder&) = delete;
};

// Runs `gnuplot script` inside `dir` (the script names its files relative to it); stderr to `log`.
int run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& script, const std::string& log) {
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start gnuplot (fork failed)");
  if (pid == 0) {
    if (chdir(dir.c_str()) != 0) _exit(126);
    FILE* err = std::freopen(log.c_str(), "w", stderr);
    (void)err;
    execl(gnuplot.c_str(), gnuplot.c_str(), script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "gnuplot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

std::string png_terminal(const std::string& gnuplot) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(gnuplot);
  if (it != cache.end()) return it->second;
  const std::string command = shell_quote(gnuplot) + " -e 'set terminal' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + gnuplot);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  auto has = [&](const std::string& name) {
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string first;
      if (words >> first && first == name) return true;
    }
    return false;
  };
  if (!has("svg")) throw std::runtime_error(gnuplot + " has no svg terminal");
  const std::string terminal = has("pngcairo") ? "pngcairo" : has("png") ? "png" : "";
  if (terminal.empty()) throw std::runtime_error(gnuplot + " has neither the pngcairo nor the png terminal");
  return cache[gnuplot] = terminal;
}

std::vector<double> mean_curve(const std::vector<const ResultRecord*>& results, std::string* warning) {
  std::vector<double> sum;
  std::vector<size_t> count;
  for (const auto* r : results) {
    const auto& examples = r->json.value("examples", nlohmann::json::array());
    bool any = false;
    for (const auto& e : examples) {
      if (!e.is_object() || !e.contains("nll_curve") || !e["nll_curve"].is_array()) continue;
      any = true;
      const auto& curve = e["nll_curve"];
      if (sum.size() < curve.size()) {
        sum.resize(curve.size(), 0.0);
        count.resize(curve.size(), 0);
      }
      for (size_t i = 0; i < curve.size(); ++i)
        if (curve[i].is_number()) {
          sum[i] += curve[i].get<double>();
          ++count[i];
        }
    }
    if (!any && warning) *warning = r->file + " has no per-example 'nll_curve' (run with task_params.curve = true)";
  }
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = count[i] ? sum[i] / static_cast<double>(count[i]) : NAN;
  return sum;
}

std::vector<double> smooth_curve(const std::vector<double>& nll, const FigureSpec& f) {
  std::vector<double> out(nll.size());
  double running = 0;
  size_t finite = 0;
  if (f.curve == "cumulative") {
    for (size_t i = 0; i < nll.size(); ++i) {
      if (std::isfinite(nll[i])) { running += nll[i]; ++finite; }
      out[i] = finite ? running / static_cast<double>(finite) : NAN;
    }
  } else {
    const size_t window = static_cast<size_t>(f.window);
    for (size_t i = 0; i < nll.size(); ++i) {
      if (std::isfinite(nll[i])) { running += nll[i]; ++finite; }
      if (i >= window && std::isfinite(nll[i - window])) { running -= nll[i - window]; --finite; }
      out[i] = finite ? running / static_cast<double>(finite) : NAN;
    }
  }
  if (f.y == "perplexity")
    for (double& v : out) v = std::exp(v);
  return out;
}

FigureFiles draw_figure(const TableSpec& spec, const TableData& table, const std::string& out_dir, bool render) {
  if (!spec.figure) throw std::invalid_argument((spec.path.empty() ? spec.id : spec.path) + ": figure: the spec has no figure section");
  const std::string& type = spec.figure->type;
  GnuplotPlot w = type == "heatmap" ? write_heatmap(spec, table, spec.id)
              : type == "stream" ? write_stream(spec, table, spec.id)
                                 : write_lines_or_bars(spec, table, spec.id);
  fs::create_directories(out_dir);
  FigureFiles files;
  files.warnings = w.warnings;
  files.data = (fs::path(out_dir) / (spec.id + ".dat")).string();
  files.script = (fs::path(out_dir) / (spec.id + ".gp")).string();
  files.png = (fs::path(out_dir) / (spec.id + ".png")).string();
  files.svg = (fs::path(out_dir) / (spec.id + ".svg")).string();
  write_file_atomically(files.data, w.data);

  const std::string gnuplot = render ? find_gnuplot() : "";
  if (render && gnuplot.empty())
    throw std::runtime_error("gnuplot not found on PATH: install gnuplot-nox (scripts/setup.sh does) to draw figures");
  const std::string png = render ? png_terminal(gnuplot) : "pngcairo";
  std::ostringstream script;
  script << "# " << single_line(spec.title) << "\n# Generated by `kvbench figure " << single_line(spec.path) << "`; data in " << spec.id
         << ".dat. Edit and re-run: gnuplot " << spec.id << ".gp\n";
  script << "set datafile separator \"\\t\"\nset datafile missing 'NaN'\nset encoding utf8\n";
  const std::string font = png == "pngcairo" ? " font 'Sans,11'" : "";
  script << "\n# SVG\nset terminal svg size " << w.width << "," << w.height
         << " dynamic noenhanced font 'Sans,12' background '#ffffff'\nset output '" << spec.id << ".svg'\n"
         << w.body << "set output\nreset\nset datafile separator \"\\t\"\nset datafile missing 'NaN'\n";
  script << "\n# PNG\nset terminal " << png << " size " << w.width << "," << w.height << font
         << " noenhanced background '#ffffff'\nset output '" << spec.id << ".png'\n"
         << w.body << "set output\n";
  write_file_atomically(files.script, script.str());
  if (!render) return files;

  // gnuplot writes its images in place as it goes: it runs in a private folder beside them (same
  // filesystem), and each finished image is renamed over the old one, so an interrupted or failed
  // run never leaves a truncated PNG or SVG under the real name.
  const RenderFolder render_dir(temporary_path_for(files.png) + ".d");
  for (const std::string& f : {files.data, files.script})
    fs::copy_file(f, fs::path(render_dir.path) / fs::path(f).filename());
  const std::string rendered_log = (fs::path(render_dir.path) / (spec.id + ".gnuplot.log")).string();
  const int rc = run_gnuplot(gnuplot, fs::absolute(render_dir.path).string(), spec.id + ".gp",
                             fs::absolute(rendered_log).string());
  const std::string errors = read_text(rendered_log);
  const fs::path png_file = fs::path(render_dir.path) / (spec.id + ".png");
  const fs::path svg_file = fs::path(render_dir.path) / (spec.id + ".svg");
  if (rc != 0 || !fs::exists(png_file) || fs::file_size(png_file) == 0 || !fs::exists(svg_file) ||
      fs::file_size(svg_file) == 0)
    throw std::runtime_error(files.script + ": gnuplot failed (exit " + std::to_string(rc) + "): " + errors);
  fs::rename(png_file, files.png);
  fs::rename(svg_file, files.svg);
  // Keep the log only when gnuplot had something to say (warnings).
  const std::string log = (fs::path(out_dir) / (spec.id + ".gnuplot.log")).string();
  if (errors.empty()) {
    fs::remove(log);
  } else {
    write_file_atomically(log, errors);
    files.warnings.push_back(log + ": " + errors.substr(0, 300));
  }
  return files;
}

}  // namespace kvbench::harness
