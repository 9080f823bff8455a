#include "harness/process_temp.hpp"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include "harness/file_tree.hpp"

namespace kvbench::harness {
namespace fs = std::filesystem;

namespace {

std::string prefix_of(const std::string& kind) { return "kvbench-" + kind + "-"; }

bool process_is_gone(const std::string& digits) {
  if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const pid_t pid = static_cast<pid_t>(std::stol(digits));
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

// The temporaries this process made, as the argv of `rm -rf -- PATH...`, for the handler of a
// terminating signal: it may not allocate, so the strings are made when the temporaries are.
constexpr int kMaxOwned = 64;
char* g_rm_argv[kMaxOwned + 4] = {const_cast<char*>("rm"), const_cast<char*>("-rf"), const_cast<char*>("--")};
std::atomic<int> g_owned{0};
pid_t g_owner = 0;  // a forked child that has not exec'd yet must not remove its parent's

// Removes this process's temporaries (fork and exec are async-signal-safe), then dies of the
// signal as it would have.
void remove_owned_and_die(int sig) {
  if (g_owned.load() > 0 && ::getpid() == g_owner) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::execv("/bin/rm", g_rm_argv);
      ::_exit(127);
    }
    if (child > 0) ::waitpid(child, nullptr, 0);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void own(const std::string& path) {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = remove_owned_and_die;
    sigemptyset(&action.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &action, nullptr);
    return true;
  }();
  (void)installed;
  if (g_owner != ::getpid()) {  // a forked child owns only what it makes itself
    g_owner = ::getpid();
    g_owned.store(0);
  }
  const int slot = g_owned.load();
  if (slot >= kMaxOwned) return;  // the next command of the kind removes the rest
  g_rm_argv[3 + slot] = ::strdup(path.c_str());
  g_owned.store(slot + 1);
}

}  // namespace

void remove_orphaned_temps(const std::string& kind) {
  const std::string prefix = prefix_of(kind);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const size_t end = name.find('-', prefix.size());
    if (end != std::string::npos && process_is_gone(name.substr(prefix.size(), end - prefix.size())))
      remove_tree(entry.path().string());
  }
}

std::string make_process_temp(const std::string& kind, bool folder) {
  remove_orphaned_temps(kind);
  std::string pattern =
      (fs::temp_directory_path() / (prefix_of(kind) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (folder) {
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create the temporary folder " + pattern);
  } else {
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create the temporary file " + pattern);
    ::close(fd);
  }
  own(pattern);
  return pattern;
}

}  // namespace kvbench::harness
