// A data file that holds no record is named in the error, whatever would have failed next (the
// shot pool, the zero-example rule).
#include <gtest/gtest.h>

#include "task_fixtures.hpp"
#include "tasks/run_task.hpp"

namespace kvbench::tasks {
namespace {

using testing::ScratchDir;

TEST(EmptyDataFile, TheErrorNamesTheFile) {
  ScratchDir dir("empty_data");
  const std::string empty = dir.write("empty.jsonl", ""), blank = dir.write("blank.txt", " \n\n\t\n");
  const std::string xsum = testing::error_of([&] {
    run_task({{"task", "xsum"}, {"limit", 1}, {"task_params", {{"data_file", empty}, {"max_new_tokens", 2}}}});
  });
  EXPECT_NE(xsum.find(empty + ": no records"), std::string::npos) << xsum;
  const std::string stories = testing::error_of([&] {
    run_task({{"task", "tinystories"}, {"limit", 1}, {"task_params", {{"data_file", blank}}}});
  });
  EXPECT_NE(stories.find(blank + ": no stories"), std::string::npos) << stories;
}

}  // namespace
}  // namespace kvbench::tasks
