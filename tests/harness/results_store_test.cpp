// The results store: atomic result files, exclusive claims that die with their holder, and
// cleanup of what a killed writer leaves behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <filesystem>
#include <fstream>

#include "harness/atomic_file.hpp"
#include "harness/results_store.hpp"
#include "harness/temp_dir.hpp"

namespace kvbench::harness {
namespace {
namespace fs = std::filesystem;

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicFile, ReplacesWholeAndLeavesNoTemporary) {
  testing::TempDir dir;
  const std::string path = dir / "a.json";
  write_file_atomically(path, "first");
  write_file_atomically(path, "second, longer");
  EXPECT_EQ(read_file(path), "second, longer");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"a.json"});
  EXPECT_THROW(write_file_atomically(path + "/under-a-file", "y"), std::runtime_error);  // parent is a file
}

TEST(ResultsStore, WritesResultsAndLogsEachRun) {
  testing::TempDir dir;
  ResultsStore store(dir / "runs");
  EXPECT_FALSE(store.has_result("0123456789abcdef"));
  store.write_result({{"id", "0123456789abcdef"}, {"spec", {{"task", "t"}}}, {"metrics", {{"x", 1}}}, {"timings", {{"seconds", 2.5}}}});
  ASSERT_TRUE(store.has_result("0123456789abcdef"));
  EXPECT_EQ(store.read_result("0123456789abcdef")["metrics"]["x"], 1);
  store.log_failure("fedcba9876543210", "boom");
  std::ifstream log(store.run_log_path());
  std::string first, second;
  std::getline(log, first);
  std::getline(log, second);
  EXPECT_EQ(nlohmann::json::parse(first)["event"], "finished");
  EXPECT_EQ(nlohmann::json::parse(first)["seconds"], 2.5);
  EXPECT_EQ(nlohmann::json::parse(second)["error"], "boom");
}

TEST(ResultsStore, AClaimIsExclusiveUntilReleased) {
  testing::TempDir dir;
  ResultsStore store(dir.path());
  std::optional<JobClaim> first = store.try_claim("job");
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(first->taken_over_from().is_null());
  // A second claimant (another open file description, as another process would have) loses.
  EXPECT_FALSE(store.try_claim("job").has_value());
  nlohmann::json holder = store.claim_holder("job");
  ASSERT_FALSE(holder.is_null());
  EXPECT_EQ(holder["pid"], static_cast<int64_t>(::getpid()));
  first->release();
  EXPECT_FALSE(fs::exists(store.claim_path("job")));
  EXPECT_TRUE(store.claim_holder("job").is_null());
  EXPECT_TRUE(store.try_claim("job").has_value());
}

TEST(ResultsStore, TheClaimOfAKilledProcessIsTakenOver) {
  testing::TempDir dir;
  ResultsStore store(dir.path());
  // A half-written result of the killed writer.
  std::ofstream(dir / ".job.json.99999.tmp") << "{\"partial";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ResultsStore mine(dir.path());
    auto claim = mine.try_claim("job");
    ::raise(SIGKILL);  // dies holding the claim, like kill -9 in the middle of a job
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(fs::exists(store.claim_path("job")));  // the dead process's claim is still there
  EXPECT_TRUE(store.claim_holder("job").is_null());   // but nobody holds it
  std::optional<JobClaim> claim = store.try_claim("job");
  ASSERT_TRUE(claim.has_value());
  EXPECT_EQ(claim->taken_over_from()["pid"], static_cast<int64_t>(child));
  EXPECT_FALSE(fs::exists(dir / ".job.json.99999.tmp"));
  // The taken-over claim is held again.
  EXPECT_FALSE(store.try_claim("job").has_value());
}

TEST(ResultsStore, AnEmptyClaimIsLiveWhileYoungAndStaleWhenOld) {
  testing::TempDir dir;
  ResultsStore store(dir.path());
  std::ofstream(store.claim_path("job")).close();  // a creator between open() and write()
  EXPECT_FALSE(store.try_claim("job").has_value());
  struct utimbuf old_times {};
  old_times.actime = old_times.modtime = std::time(nullptr) - 60;
  ASSERT_EQ(::utime(store.claim_path("job").c_str(), &old_times), 0);
  EXPECT_TRUE(store.try_claim("job").has_value());
}

}  // namespace
}  // namespace kvbench::harness
