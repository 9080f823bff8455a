#include "harness/slurm_backend.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "harness/atomic_file.hpp"
#include "harness/environment_info.hpp"

namespace kvbench::harness {
namespace fs = std::filesystem;

namespace {

// Each option becomes one "#SBATCH" line of the script: a value that is not the option's form
// would be handed to sbatch as is, and a newline in it would add lines of its own.
void check_sbatch_options(const SlurmOptions& options) {
  // sbatch --time: minutes, minutes:seconds, hours:minutes:seconds, days-hours[:minutes[:seconds]].
  static const std::regex time_form(R"(^(\d+-\d+(:\d+){0,2}|\d+(:\d+){0,2}|UNLIMITED|INFINITE)$)");
  if (!options.time_limit.empty() && !std::regex_match(options.time_limit, time_form))
    throw std::invalid_argument("--time must be Slurm's time form (MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]), got '" +
                                options.time_limit + "'");
  static const std::regex partition_form(R"(^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$)");
  if (!options.partition.empty() && !std::regex_match(options.partition, partition_form))
    throw std::invalid_argument("--partition must be partition names separated by commas, got '" + options.partition + "'");
  for (const auto& directive : options.extra_directives) {
    const bool one_line = std::none_of(directive.begin(), directive.end(),
                                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    if (directive.rfind("-", 0) != 0 || !one_line)
      throw std::invalid_argument("--sbatch-option must be one sbatch option on one line (\"--mem=16G\"), got " +
                                  nlohmann::json(directive).dump());
  }
}

}  // namespace

SlurmArray write_slurm_array(const std::string& grid_name, const std::vector<Job>& jobs,
                             const std::string& results_dir, const SlurmOptions& options) {
  check_sbatch_options(options);
  if (jobs.empty()) throw std::invalid_argument("slurm: no pending jobs to submit");
  if (options.dir.empty()) throw std::invalid_argument("slurm: no directory for the job array (--slurm-dir)");
  const fs::path dir = fs::absolute(options.dir);
  const std::string executable =
      options.executable.empty() ? fs::read_symlink("/proc/self/exe").string() : fs::absolute(options.executable).string();
  const std::string results = fs::absolute(results_dir).string();
  const std::string working_dir = options.working_dir.empty() ? fs::current_path().string() : options.working_dir;
  // sbatch reads its script line by line, #SBATCH lines and comments included: a control
  // character in a path or name written there would start a line of its own (a shell command).
  for (const auto& [what, text] : {std::pair<const char*, std::string>{"the Slurm folder (--slurm-dir)", dir.string()},
                                   {"the working directory", working_dir},
                                   {"the kvbench executable's path", executable},
                                   {"the results folder", results},
                                   {"the grid's name", grid_name}})
    if (has_control_character(text))
      throw std::invalid_argument("slurm: " + std::string(what) + " " + nlohmann::json(text).dump() +
                                  " holds a control character (a newline or tab), which the sbatch script cannot carry");
  fs::create_directories(dir / "jobs");
  fs::create_directories(dir / "logs");

  nlohmann::json entries = nlohmann::json::array();
  for (size_t i = 0; i < jobs.size(); ++i) {
    write_file_atomically((dir / "jobs" / (std::to_string(i) + ".json")).string(), jobs[i].spec.dump(2) + "\n");
    entries.push_back({{"index", i}, {"id", jobs[i].id}, {"description", short_description(jobs[i].spec)},
                       {"spec", jobs[i].spec}});
  }
  nlohmann::json manifest = {{"grid", grid_name}, {"created_at", utc_timestamp()}, {"results", results},
                             {"kvbench", executable}, {"jobs", entries}};
  const std::string manifest_path = (dir / "manifest.json").string();
  write_file_atomically(manifest_path, manifest.dump(2) + "\n");

  std::string name = grid_name.empty() ? "grid" : grid_name;
  std::string script = "#!/bin/bash\n";
  script += "#SBATCH --job-name=" + shell_quote("kvbench-" + name) + "\n";
  script += "#SBATCH --array=0-" + std::to_string(jobs.size() - 1) +
            (options.max_parallel > 0 ? "%" + std::to_string(options.max_parallel) : "") + "\n";
  script += "#SBATCH --output=" + (dir / "logs" / "%A_%a.out").string() + "\n";
  script += "#SBATCH --chdir=" + working_dir + "\n";
  script += "#SBATCH --ntasks=1\n";
  if (options.cpus_per_task > 0) script += "#SBATCH --cpus-per-task=" + std::to_string(options.cpus_per_task) + "\n";
  if (!options.time_limit.empty()) script += "#SBATCH --time=" + options.time_limit + "\n";
  if (!options.partition.empty()) script += "#SBATCH --partition=" + options.partition + "\n";
  for (const auto& directive : options.extra_directives) script += "#SBATCH " + directive + "\n";
  script += "# kvbench grid " + shell_quote(name) + ": " + std::to_string(jobs.size()) +
            " jobs; manifest " + manifest_path + "\n";
  script += "set -euo pipefail\n";
  script += "if [ -n \"${SLURM_CPUS_PER_TASK:-}\" ]; then export OMP_NUM_THREADS=\"$SLURM_CPUS_PER_TASK\"; fi\n";
  script += "exec " + shell_quote(executable) + " run --quiet --job " + shell_quote((dir / "jobs").string()) +
            "/\"${SLURM_ARRAY_TASK_ID}\".json --results " + shell_quote(results) + "\n";
  const std::string script_path = (dir / "array.sbatch").string();
  write_file_atomically(script_path, script);
  fs::permissions(script_path, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  return {dir.string(), script_path, manifest_path, jobs.size()};
}

std::string submit_slurm_array(const SlurmArray& array) {
  const std::string command = "sbatch --parsable " + shell_quote(array.script) + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("slurm: cannot run sbatch");
  std::string output;
  char buffer[512];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("slurm: sbatch failed on " + array.script + ": " + output);
  const std::string last_line = output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  const std::string job_id = last_line.substr(0, last_line.find(';'));
  if (job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("slurm: unexpected sbatch output: " + output);
  return job_id;
}

}  // namespace kvbench::harness
