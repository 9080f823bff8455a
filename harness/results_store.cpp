#include "harness/results_store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "datasets/json_parse.hpp"
#include "harness/atomic_file.hpp"
#include "harness/environment_info.hpp"
#include "harness/result_file.hpp"
#include "harness/job_id.hpp"

namespace kvbench::harness {
namespace {

namespace fs = std::filesystem;

// A claim file with no content yet is a creator between open() and write(), unless it is older
// than this: then its creator died there.
constexpr double kEmptyClaimGraceSeconds = 10.0;

std::string claim_content() {
  return nlohmann::json{{"pid", static_cast<int64_t>(::getpid())}, {"host", host_name()}, {"since", utc_timestamp()}}
             .dump() + "\n";
}

bool same_inode(int fd, const std::string& path) {
  struct stat a {}, b {};
  if (::fstat(fd, &a) != 0 || ::stat(path.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::string read_fd(int fd) {
  std::string content;
  char buffer[512];
  off_t offset = 0;
  ssize_t n;
  while ((n = ::pread(fd, buffer, sizeof buffer, offset)) > 0) {
    content.append(buffer, static_cast<size_t>(n));
    offset += n;
  }
  return content;
}

void overwrite_fd(int fd, const std::string& content, const std::string& path) {
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size()))
    throw std::runtime_error(path + ": cannot write the claim: " + std::strerror(errno));
}

nlohmann::json parse_claim(const std::string& content) {
  try {
    return datasets::parse_json(content, "claim");
  } catch (const std::exception&) {
    return nullptr;
  }
}

bool process_alive(int64_t pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

double age_seconds(int fd) {
  struct stat s {};
  if (::fstat(fd, &s) != 0) return 0;
  return static_cast<double>(std::time(nullptr) - s.st_mtime);
}

}  // namespace

JobClaim::JobClaim(int fd, std::string path, nlohmann::json taken_over_from)
    : fd_(fd), path_(std::move(path)), taken_over_from_(std::move(taken_over_from)) {}

JobClaim::JobClaim(JobClaim&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), taken_over_from_(std::move(other.taken_over_from_)) {
  other.fd_ = -1;
}

JobClaim::~JobClaim() { release(); }

void JobClaim::release() {
  if (fd_ < 0) return;
  // Unlink while still holding the lock: a process that opened the old file and then gets its
  // lock sees that the path no longer names it, and retries.
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

ResultsStore::ResultsStore(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!fs::is_directory(dir_)) throw std::runtime_error(dir_ + ": cannot create the results directory");
}

std::string ResultsStore::result_path(const std::string& id) const { return (fs::path(dir_) / (id + ".json")).string(); }
std::string ResultsStore::claim_path(const std::string& id) const { return (fs::path(dir_) / (id + ".claim")).string(); }
std::string ResultsStore::run_log_path() const { return (fs::path(dir_) / "runs.log").string(); }

// Valid results only (harness/result_file.hpp): a truncated file is not done.
bool ResultsStore::has_result(const std::string& id) const { return result_file_problem(result_path(id), id).empty(); }

nlohmann::json ResultsStore::read_result(const std::string& id) const {
  const std::string path = result_path(id);
  nlohmann::json result;
  try {
    result = datasets::read_json_file(path);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " (not a valid result file)");
  }
  const std::string problem = result_json_problem(result, id);
  if (!problem.empty()) throw std::runtime_error(path + ": not a valid result file: " + problem);
  return result;
}

void ResultsStore::write_result(const nlohmann::json& result) {
  const std::string id = result.at("id");
  write_file_atomically(result_path(id), result.dump() + "\n");
  nlohmann::json line = {{"event", "finished"}, {"id", id}, {"pid", static_cast<int64_t>(::getpid())},
                         {"host", host_name()}, {"at", result.value("finished_at", utc_timestamp())}};
  if (result.contains("timings")) line["seconds"] = result["timings"].value("seconds", 0.0);
  append_line(run_log_path(), line.dump());
}

void ResultsStore::log_failure(const std::string& id, const std::string& error) {
  append_line(run_log_path(), nlohmann::json{{"event", "failed"}, {"id", id}, {"pid", static_cast<int64_t>(::getpid())},
                                             {"host", host_name()}, {"at", utc_timestamp()}, {"error", error}}
                                  .dump());
}

void ResultsStore::remove_leftover_temporaries(const std::string& id) const {
  const std::string prefix = "." + id + ".json.";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0)
      fs::remove(entry.path(), ec);
  }
}

std::optional<JobClaim> ResultsStore::try_claim(const std::string& id) {
  const std::string path = claim_path(id);
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      if (::flock(fd, LOCK_EX) != 0 && errno != ENOLCK && errno != EINVAL) {
        ::close(fd);
        throw std::runtime_error(path + ": cannot lock the claim: " + std::strerror(errno));
      }
      overwrite_fd(fd, claim_content(), path);
      remove_leftover_temporaries(id);
      return JobClaim(fd, path, nullptr);
    }
    if (errno != EEXIST) throw std::runtime_error(path + ": cannot create the claim: " + std::strerror(errno));

    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // released meanwhile
      throw std::runtime_error(path + ": cannot open the claim: " + std::strerror(errno));
    }
    const bool locked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    const bool no_flock = !locked && (errno == ENOLCK || errno == EINVAL);
    if (!locked && !no_flock) {  // EWOULDBLOCK: a live holder
      ::close(fd);
      return std::nullopt;
    }
    if (!same_inode(fd, path)) {  // released (unlinked) between our open and our lock
      ::close(fd);
      continue;
    }
    const nlohmann::json holder = parse_claim(read_fd(fd));
    bool stale;
    if (holder.is_null()) {
      stale = age_seconds(fd) > kEmptyClaimGraceSeconds;
    } else if (no_flock) {
      stale = holder.value("host", "") == host_name() && !process_alive(holder.value("pid", int64_t{0}));
    } else {
      stale = true;  // the holder's lock is gone: it died
    }
    if (!stale) {
      ::close(fd);
      return std::nullopt;
    }
    overwrite_fd(fd, claim_content(), path);
    remove_leftover_temporaries(id);
    return JobClaim(fd, path, holder.is_null() ? nlohmann::json{{"pid", nullptr}} : holder);
  }
  throw std::runtime_error(path + ": could not claim the job (the claim keeps changing hands)");
}

void ResultsStore::remove_stale_claim(const std::string& id) {
  const std::string path = claim_path(id);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  // Lockable = its holder is dead. An empty claim may be a creator between open() and write():
  // only once it is older than the grace period.
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && same_inode(fd, path) &&
      (!parse_claim(read_fd(fd)).is_null() || age_seconds(fd) > kEmptyClaimGraceSeconds))
    ::unlink(path.c_str());
  ::close(fd);
}

nlohmann::json ResultsStore::claim_holder(const std::string& id) const {
  const std::string path = claim_path(id);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  const bool locked = ::flock(fd, LOCK_SH | LOCK_NB) == 0;
  nlohmann::json holder = parse_claim(read_fd(fd));
  ::close(fd);
  if (locked) return nullptr;  // nobody holds it: a stale claim
  return holder.is_null() ? nlohmann::json{{"pid", nullptr}} : holder;
}

}  // namespace kvbench::harness
