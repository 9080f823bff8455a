#include "datasets/jsonl_reader.hpp"

#include <gtest/gtest.h>

#include "datasets/data_root.hpp"
#include "temp_file.hpp"
#include "error_text.hpp"

namespace kvbench::datasets {
namespace {

using testing::TempFile;

using kvbench::testing::error_of;

TEST(JsonlReader, ReadsRecordsWithLineNumbersSkippingBlankLines) {
  TempFile f("a.jsonl", "{\"a\": 1, \"s\": \"x\"}\n\n   \n{\"a\": 2, \"extra\": [1]}\r\n{\"a\": 3}");
  auto records = read_jsonl(f.path());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].line, 1);
  EXPECT_EQ(records[1].line, 4);  // the blank lines still count
  EXPECT_EQ(records[2].line, 5);  // a last line without "\n"
  EXPECT_EQ(records[1].int_field("a"), 2);
  EXPECT_EQ(records[0].string_field("s"), "x");
  EXPECT_EQ(records[2].file, f.path());
}

TEST(JsonlReader, GzipGivesTheSameRecords) {
  std::string body;
  for (int i = 0; i < 5000; ++i) body += "{\"i\": " + std::to_string(i) + ", \"pad\": \"" + std::string(i % 97, 'x') + "\"}\n";
  TempFile plain("b.jsonl", body), gz("b.jsonl.gz", body, /*gzip=*/true);
  auto a = read_jsonl(plain.path()), b = read_jsonl(gz.path());
  ASSERT_EQ(a.size(), 5000u);
  ASSERT_EQ(b.size(), 5000u);
  for (size_t i = 0; i < a.size(); i += 499) {
    EXPECT_EQ(a[i].value, b[i].value);
    EXPECT_EQ(b[i].line, static_cast<int64_t>(i) + 1);
  }
}

TEST(JsonlReader, LimitAndEarlyStop) {
  TempFile f("c.jsonl", "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\nnot json\n");
  EXPECT_EQ(read_jsonl(f.path(), 2).size(), 2u);
  int seen = 0;
  for_each_jsonl(f.path(), [&](const JsonRecord&) { return ++seen < 3; });  // stops before the bad line
  EXPECT_EQ(seen, 3);
}

TEST(JsonlReader, BrokenJsonNamesFileAndLine) {
  TempFile f("d.jsonl", "{\"i\":0}\n\n{\"i\": 1,\n{\"i\":2}\n");
  const std::string msg = error_of([&] { read_jsonl(f.path()); });
  EXPECT_EQ(msg.rfind(f.path() + ":3: invalid JSON: ", 0), 0u) << msg;
  EXPECT_THROW(read_jsonl(f.path()), DataError);
}

TEST(JsonlReader, NonObjectLineIsAnError) {
  TempFile f("e.jsonl", "{\"i\":0}\n[1, 2]\n");
  EXPECT_EQ(error_of([&] { read_jsonl(f.path()); }), f.path() + ":2: expected a JSON object, got array");
}

TEST(JsonlReader, FieldErrorsNameFileLineAndField) {
  TempFile f("g.jsonl", "\n{\"input\": 3, \"answers\": [\"a\", 2], \"n\": 1.5, \"s\": null}\n");
  auto r = read_jsonl(f.path()).at(0);
  const std::string at = f.path() + ":2: ";
  EXPECT_EQ(error_of([&] { r.string_field("context"); }), at + "field 'context': missing");
  EXPECT_EQ(error_of([&] { r.string_field("input"); }), at + "field 'input': expected a string, got number 3");
  EXPECT_EQ(error_of([&] { r.string_list_field("answers"); }),
            at + "field 'answers': element 1: expected a string, got number 2");
  EXPECT_EQ(error_of([&] { r.int_field("n"); }), at + "field 'n': expected an integer, got number 1.5");
  EXPECT_EQ(r.string_field_or("s", "fallback"), "fallback");
  EXPECT_EQ(r.int_field_or("missing", 7), 7);
  EXPECT_EQ(r.number_field("n"), 1.5);
}

TEST(JsonlReader, MissingFileNamesIt) {
  EXPECT_NE(error_of([] { read_jsonl("/nonexistent/x.jsonl"); }).find("/nonexistent/x.jsonl"), std::string::npos);
}

TEST(JsonlReader, ReadsTheRealLongBenchSample) {
  const std::string path = resolve_data_file(default_data_root(), "longbench/qasper.jsonl", "THUDM/LongBench");
  auto records = read_jsonl(path, 2);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_FALSE(records[0].string_field("context").empty());
  EXPECT_FALSE(records[0].string_list_field("answers").empty());
  EXPECT_GT(records[0].int_field("length"), 0);
}

}  // namespace
}  // namespace kvbench::datasets
