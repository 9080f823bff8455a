// Temporary files named after their process: a command stopped by a signal leaves its own, and
// the next command of the same kind removes those whose process is gone (never a live one's).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/file_tree.hpp"
#include "harness/process_temp.hpp"

namespace kvbench::harness {
namespace {
namespace fs = std::filesystem;

pid_t a_finished_process() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);  // reaped: kill(pid, 0) now says ESRCH
  return pid;
}

TEST(ProcessTemp, OrphansOfAFinishedProcessAreRemovedALiveOnesAreKept) {
  const fs::path tmp = fs::temp_directory_path();
  const fs::path orphan = tmp / ("kvbench-ptest-" + std::to_string(a_finished_process()) + "-aaaaaa");
  fs::create_directories(orphan / "inside");
  std::ofstream(orphan / "inside" / "result.json") << "{}";
  const std::string mine = make_process_temp("ptest", /*folder=*/true);  // removes the orphan first
  const std::string file = make_process_temp("ptest", /*folder=*/false);
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::is_directory(mine));
  EXPECT_TRUE(fs::is_regular_file(file));
  EXPECT_EQ(fs::path(mine).filename().string().rfind("kvbench-ptest-" + std::to_string(::getpid()) + "-", 0), 0u);
  remove_orphaned_temps("ptest");  // this process runs: its own stay
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_TRUE(fs::exists(file));
  remove_tree(mine);
  remove_tree(file);
}

}  // namespace
}  // namespace kvbench::harness
