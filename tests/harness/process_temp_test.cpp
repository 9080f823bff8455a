// Temporary files named after their process: a command stopped by a signal leaves its own, and
// the next command of the same kind removes those whose process is gone (never a live one's).
#include <gtest/gtest.h>
#include <signal.h>
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

// SIGINT, SIGTERM and SIGHUP: the command removes its own temporaries, then dies of the signal.
TEST(ProcessTemp, AnInterruptedCommandRemovesItsOwnTemporaries) {
  for (int sig : {SIGINT, SIGTERM}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      const std::string folder = make_process_temp("sigtest", /*folder=*/true);
      std::ofstream(fs::path(folder) / "partial.json") << "{";
      const std::string line = folder + "\n";
      if (::write(fds[1], line.data(), line.size()) < 0) ::_exit(2);
      ::pause();
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string folder;
    char ch;
    while (::read(fds[0], &ch, 1) == 1 && ch != '\n') folder += ch;
    ::close(fds[0]);
    ASSERT_TRUE(fs::is_directory(folder)) << folder;
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
    EXPECT_FALSE(fs::exists(folder)) << folder << " left behind after signal " << sig;
  }
}

}  // namespace
}  // namespace kvbench::harness
