// A stream figure's curve_file: the format `kvbench perplexity --curve` writes, read strictly.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "error_text.hpp"
#include "harness/curve_file.hpp"
#include "table_fixture.hpp"

namespace kvbench {
namespace {

using testing::error_of;

TEST(CurveFile, ReadsWhatPerplexityWrites) {
  table_testing::TempDir dir;
  const std::string path = dir.write("c.tsv", "token_index\tnll\n1\t2.5\n2\t0\n3\t1.25e-3\n");
  EXPECT_EQ(harness::read_curve_file(path), (std::vector<double>{2.5, 0, 1.25e-3}));
  const std::string commented = dir.write("h.tsv", "# from run 3\n1\t2\n2\t3\n");
  EXPECT_EQ(harness::read_curve_file(commented), (std::vector<double>{2, 3}));
}

TEST(CurveFile, EveryFieldIsParsedWhole) {
  table_testing::TempDir dir;
  auto error = [&](const std::string& text) {
    const std::string path = dir.write("bad.tsv", text);
    return error_of([&] { harness::read_curve_file(path); }).substr(path.size());
  };
  EXPECT_EQ(error("token_index\tnll\n1\t2.0 junk\n"), ":2: nll '2.0 junk' is not a number");
  EXPECT_EQ(error("1\t2\n2x\t3\n"), ":2: token_index '2x' is not a whole number");
  EXPECT_EQ(error("1 2\n"), ":1: expected 'token_index<TAB>nll' (two tab-separated fields), got '1 2'");
  EXPECT_EQ(error("1\t2\t3\n"), ":1: expected 'token_index<TAB>nll' (two tab-separated fields), got '1\t2\t3'");
  EXPECT_EQ(error("1\t2\n\n2\t3\n"), ":2: expected 'token_index<TAB>nll' (two tab-separated fields), got ''");
  EXPECT_EQ(error("1\t 2\n"), ":1: nll ' 2' is not a number");
}

TEST(CurveFile, IndexesRunOneTwoThreeAndNllIsFiniteAndNonNegative) {
  table_testing::TempDir dir;
  auto error = [&](const std::string& text) {
    const std::string path = dir.write("bad.tsv", text);
    return error_of([&] { harness::read_curve_file(path); }).substr(path.size());
  };
  const std::string order = " (indexes run 1, 2, 3, ... in order: the figure plots the i-th value at token i)";
  EXPECT_EQ(error("1\t2\n3\t1\n"), ":2: token_index 3, expected 2" + order);
  EXPECT_EQ(error("1\t2\n1\t1\n"), ":2: token_index 1, expected 2" + order);
  EXPECT_EQ(error("0\t2\n"), ":1: token_index 0, expected 1" + order);
  EXPECT_EQ(error("1\t-7\n"), ":1: nll -7 must be finite and >= 0 (a negative log-likelihood)");
  EXPECT_EQ(error("1\tinf\n"), ":1: nll inf must be finite and >= 0 (a negative log-likelihood)");
  EXPECT_EQ(error("1\tnan\n"), ":1: nll nan must be finite and >= 0 (a negative log-likelihood)");
}

TEST(CurveFile, EmptyHeaderOnlyDirectoryAndMissingAreErrorsNamingTheFile) {
  table_testing::TempDir dir;
  const std::string no_data = ": curve file has no data line (expected 'token_index<TAB>nll' lines, as kvbench "
                              "perplexity --curve writes)";
  const std::string empty = dir.write("empty.tsv", "");
  EXPECT_EQ(error_of([&] { harness::read_curve_file(empty); }), empty + no_data);
  const std::string header = dir.write("header.tsv", "token_index\tnll\n");
  EXPECT_EQ(error_of([&] { harness::read_curve_file(header); }), header + no_data);
  const std::string sub = (dir.path / "sub").string();
  std::filesystem::create_directories(sub);
  EXPECT_TRUE(testing::contains(error_of([&] { harness::read_curve_file(sub); }), sub + ": the curve file must be a regular file, this is a directory"))
      << error_of([&] { harness::read_curve_file(sub); });
  const std::string absent = (dir.path / "absent.tsv").string();
  EXPECT_TRUE(testing::contains(error_of([&] { harness::read_curve_file(absent); }), absent + ": cannot open curve file"))
      << error_of([&] { harness::read_curve_file(absent); });
}

}  // namespace
}  // namespace kvbench
