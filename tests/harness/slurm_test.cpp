// The Slurm backend: the job-array script and manifest are right (run here by hand, one array
// task at a time, as Slurm would), and a real single-node Slurm (slurmctld + slurmd from
// Debian's slurm-wlm, auth/none, started on localhost by the test) runs the array and
// `kvbench collect` gathers it. Skipped, saying why, where Slurm cannot be started.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "harness/harness_fixture.hpp"

namespace kvbench::testing {
namespace {

TEST(SlurmBackend, WritesAnArrayWhoseTasksRunTheJobs) {
  TempDir dir;
  nlohmann::json grid_json = small_grid({"8", "16"});
  const std::string grid = write_json(dir / "grid.json", grid_json);
  const std::string results = dir / "runs", array = dir / "array";
  // One job done beforehand: the array holds only the pending ones.
  CommandResult one = run_kvbench("run --task tinystories --task-params '" + grid_json["fixed"]["task_params"].dump() +
                                  "' --protocol stream --limit 1 --policy kvec --budget 8 --json --results " + results);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const std::string done_id = nlohmann::json::parse(one.output)["id"];

  CommandResult written = run_kvbench("grid " + grid + " --results " + results + " --backend slurm --slurm-dir " + array +
                                      " --max-parallel 2 --sbatch-option=--mem=2G");
  ASSERT_EQ(written.exit_code, 0) << written.output;
  const std::string script = read_all(array + "/array.sbatch");
  EXPECT_NE(script.find("#SBATCH --array=0-2%2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --mem=2G\n"), std::string::npos) << script;
  EXPECT_NE(script.find(" run --quiet --job "), std::string::npos) << script;
  nlohmann::json manifest = nlohmann::json::parse(read_all(array + "/manifest.json"));
  ASSERT_EQ(manifest["jobs"].size(), 3u);
  for (const auto& job : manifest["jobs"]) EXPECT_NE(job["id"], done_id);

  // Array task 1, as Slurm would run it; collect then reports tasks 0 and 2 as missing.
  const std::string command =
      "SLURM_ARRAY_TASK_ID=1 bash " + array + "/array.sbatch > " + (dir / "task1.log") + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_all(dir / "task1.log");
  EXPECT_EQ(result_ids(results), (std::set<std::string>{done_id, manifest["jobs"][1]["id"].get<std::string>()}));
  CommandResult partial = run_kvbench("collect " + array + " 2>&1");
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_NE(partial.output.find("1 results of 3 jobs, 2 missing"), std::string::npos) << partial.output;
  EXPECT_NE(partial.output.find("missing " + manifest["jobs"][0]["id"].get<std::string>() + " (array task 0)"),
            std::string::npos) << partial.output;
  EXPECT_NE(partial.output.find("(array task 2)"), std::string::npos) << partial.output;
  EXPECT_EQ(partial.output.find("(array task 1)"), std::string::npos) << partial.output;
}

TEST(SlurmBackend, SbatchOptionsThatAreNotTheirFormAreRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  const std::string grid = write_json(dir / "grid.json", small_grid({"8"}));
  const std::string base = "grid " + grid + " --results " + (dir / "runs") + " --backend slurm --slurm-dir " + (dir / "a");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --time abc", "--time must be Slurm's time form"},
      {" --partition 'p q'", "--partition must be partition names separated by commas, got 'p q'"},
      {" --sbatch-option $'--mem=2G\\n#SBATCH --bar'", "--sbatch-option must be one sbatch option on one line"},
      {" --sbatch-option mem=2G", "--sbatch-option must be one sbatch option"}};
  for (const auto& [options, message] : cases) {
    CommandResult r = run_kvbench(base + options + " 2>&1");
    EXPECT_EQ(r.exit_code, 1) << options << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << options << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "a"));
  for (const char* time : {"90", "30:00", "2:00:00", "1-12", "1-12:30:00", "UNLIMITED"})
    EXPECT_EQ(run_kvbench(base + " --time " + time + " 2>&1").exit_code, 0) << time;
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string host_short_name() {
  char buffer[256] = {};
  ::gethostname(buffer, sizeof buffer - 1);
  std::string name = buffer;
  return name.substr(0, name.find('.'));
}

// slurmctld and slurmd in the foreground, killed when the test ends.
class LocalSlurm {
 public:
  explicit LocalSlurm(const TempDir& dir) : dir_(dir) {
    fs::create_directories(dir / "state");
    fs::create_directories(dir / "spool");
    conf_ = dir / "slurm.conf";
    std::ofstream(conf_) << "ClusterName=kvbenchtest\n"
                         << "SlurmctldHost=" << host_short_name() << "(127.0.0.1)\n"
                         << "SlurmUser=root\nSlurmdUser=root\n"
                         << "SlurmctldPort=" << free_port() << "\nSlurmdPort=" << free_port() << "\n"
                         << "AuthType=auth/none\nCredType=cred/none\n"
                         << "StateSaveLocation=" << (dir / "state") << "\nSlurmdSpoolDir=" << (dir / "spool") << "\n"
                         << "SlurmctldPidFile=" << (dir / "slurmctld.pid") << "\nSlurmdPidFile=" << (dir / "slurmd.pid") << "\n"
                         << "SlurmctldLogFile=" << (dir / "slurmctld.log") << "\nSlurmdLogFile=" << (dir / "slurmd.log") << "\n"
                         << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                         << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nSchedulerType=sched/builtin\n"
                         << "JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n"
                         << "JobAcctGatherType=jobacct_gather/none\nMpiDefault=none\nReturnToService=2\n"
                         << "NodeName=kvbnode NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN\n"
                         << "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
    ::setenv("SLURM_CONF", conf_.c_str(), 1);
    ctld_ = spawn_program({"/usr/sbin/slurmctld", "-D", "-i", "-f", conf_}, dir / "slurmctld.out");
    slurmd_ = spawn_program({"/usr/sbin/slurmd", "-D", "-N", "kvbnode", "-f", conf_}, dir / "slurmd.out");
  }
  ~LocalSlurm() {
    for (pid_t pid : {slurmd_, ctld_}) {
      if (pid <= 0) continue;
      ::kill(pid, SIGTERM);
      for (int i = 0; i < 50 && ::waitpid(pid, nullptr, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, WNOHANG);
    }
    ::unsetenv("SLURM_CONF");
  }
  // True once the node is idle (registered and schedulable).
  bool wait_until_ready(std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      FILE* pipe = ::popen("sinfo -h -o %t 2>/dev/null", "r");
      char buffer[64] = {};
      if (pipe) {
        size_t n = std::fread(buffer, 1, sizeof buffer - 1, pipe);
        buffer[n] = 0;
        ::pclose(pipe);
      }
      if (std::string(buffer).rfind("idle", 0) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  std::string logs() const {
    return read_all(dir_ / "slurmctld.log") + read_all(dir_ / "slurmctld.out") + read_all(dir_ / "slurmd.log") +
           read_all(dir_ / "slurmd.out");
  }

 private:
  const TempDir& dir_;
  std::string conf_;
  pid_t ctld_ = -1, slurmd_ = -1;
};

TEST(SlurmBackend, ARealSlurmRunsTheArrayAndCollectGathersIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "the local Slurm test runs slurmd as root; not root here";
  for (const char* tool : {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch", "/usr/bin/sinfo"})
    if (!fs::exists(tool)) GTEST_SKIP() << tool << " is missing (Debian packages slurmctld, slurmd, slurm-client)";
  TempDir dir;
  LocalSlurm slurm(dir);
  if (!slurm.wait_until_ready(std::chrono::seconds(20)))
    GTEST_SKIP() << "the local Slurm did not come up within 20 s:\n" << slurm.logs();

  const std::string grid = write_json(dir / "grid.json", small_grid({"8"}));
  const std::string results = dir / "runs", array = dir / "array";
  CommandResult submitted = run_kvbench("grid " + grid + " --results " + results + " --backend slurm --slurm-dir " +
                                        array + " --submit 2>&1");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  ASSERT_NE(submitted.output.find("submitted job "), std::string::npos) << submitted.output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
  while (result_ids(results).size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(result_ids(results).size(), 2u) << "array task logs:\n"
                                             << run_kvbench("collect " + array + " 2>&1").output << slurm.logs();
  CommandResult collected = run_kvbench("collect " + array + " --format csv -o " + (dir / "summary.csv") + " 2>&1");
  EXPECT_EQ(collected.exit_code, 0) << collected.output;
  EXPECT_NE(collected.output.find("2 results of 2 jobs, 0 missing"), std::string::npos) << collected.output;
  // Every array task ran its job once, each in its own process.
  std::map<std::string, int> counts = finished_counts(results);
  EXPECT_EQ(counts.size(), 2u);
  for (const auto& [id, n] : counts) EXPECT_EQ(n, 1) << id;
}

}  // namespace
}  // namespace kvbench::testing
