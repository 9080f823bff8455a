// `kvbench bench`: runs the Google Benchmark programs built beside kvbench (build/bench/).
// Speed and memory targets live there, never in timed unit tests.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "harness/command.hpp"

namespace kvbench::harness {
namespace {

int run_bench(const std::string& filter, const std::string& only) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = exe.parent_path() / "bench";
  if (ec || !std::filesystem::is_directory(dir))
    throw std::runtime_error(dir.string() + ": no benchmark programs (build with -DKVBENCH_BUILD_BENCH=ON)");
  std::vector<std::filesystem::path> programs;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && (only.empty() || entry.path().filename().string().find(only) != std::string::npos))
      programs.push_back(entry.path());
  std::sort(programs.begin(), programs.end());
  int worst = 0;
  for (const auto& program : programs) {
    std::cout << "== " << program.filename().string() << "\n" << std::flush;
    std::string command = program.string() + (filter.empty() ? "" : " --benchmark_filter='" + filter + "'");
    const int status = std::system(command.c_str());
    worst = std::max(worst, WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  return worst;
}

const CommandRegistration registration(
    "bench", "Run the Google Benchmark programs (policy step cost, decode step vs stream, scorers)",
    [](CLI::App& app) {
      auto filter = std::make_shared<std::string>();
      auto only = std::make_shared<std::string>();
      app.add_option("--filter", *filter, "Google Benchmark --benchmark_filter regex");
      app.add_option("--program", *only, "only programs whose name contains this");
      return [filter, only] { return run_bench(*filter, *only); };
    });

}  // namespace
}  // namespace kvbench::harness
