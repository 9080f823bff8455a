// Regression tests for issue #14 in the readers: deep nesting, duplicate keys, numbers beyond a
// double, truncated/corrupt gzip, non-regular files, and the fuzzers' crashing inputs.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "datasets/csv_reader.hpp"
#include "datasets/json_parse.hpp"
#include "datasets/jsonl_reader.hpp"
#include "datasets/line_reader.hpp"
#include "datasets/regular_file.hpp"
#include "datasets/text_reader.hpp"
#include "temp_file.hpp"
#include "error_text.hpp"

namespace kvbench::datasets {
namespace {

using testing::TempFile;

using kvbench::testing::error_of;
using kvbench::testing::contains;

TEST(JsonParse, NestingBeyondTheLimitIsAnErrorNotAStackOverflow) {
  // 75,000 levels crashed nlohmann's recursive destructor/copy before the limit.
  const std::string deep = std::string(75000, '[') + std::string(75000, ']');
  const std::string msg = error_of([&] { parse_json(deep, "grid.json"); });
  EXPECT_TRUE(contains(msg, "grid.json:1: invalid JSON: nested deeper than 256 levels")) << msg;
  // Exactly at the limit is fine; brackets inside strings do not count.
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(parse_json(ok, "ok.json"));
  EXPECT_NO_THROW(parse_json("{\"s\": \"" + std::string(1000, '[') + "\\\"[\"}", "s.json"));
  // The line of the offending bracket.
  const std::string msg2 = error_of([&] { parse_json("{\n\"a\":\n" + std::string(300, '{'), "x.json"); });
  EXPECT_TRUE(contains(msg2, "x.json:3:")) << msg2;
}

TEST(JsonParse, DuplicateKeysAreErrorsNamingTheKeyAndLine) {
  const std::string msg = error_of([] { parse_json("{\n  \"task\": \"a\",\n  \"budget\": 1,\n  \"task\": \"b\"\n}", "job.json"); });
  EXPECT_TRUE(contains(msg, "job.json:4: invalid JSON: duplicate key \"task\"")) << msg;
  // The same key in different objects is not a duplicate.
  EXPECT_NO_THROW(parse_json("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}, \"c\": [{\"x\": 1}, {\"x\": 2}]}", "ok.json"));
  const std::string nested = error_of([] { parse_json("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2, \"x\": 3}}", "n.json"); });
  EXPECT_TRUE(contains(nested, "duplicate key \"x\"")) << nested;
}

TEST(JsonParse, NumberOverflowNamesTheFileAndLine) {
  const std::string msg = error_of([] { parse_json("{\n\"budget\": 1e400\n}", "spec.json"); });
  EXPECT_TRUE(contains(msg, "spec.json:2: invalid JSON: ")) << msg;
  EXPECT_TRUE(contains(msg, "1e400")) << msg;
  EXPECT_FALSE(contains(msg, "[json.exception")) << msg;
  EXPECT_THROW(parse_json("1e400", "x"), DataError);
}

TEST(JsonParse, JsonlLinesGoThroughTheSameChecks) {
  TempFile f("dup.jsonl", "{\"a\": 1}\n{\"a\": 1, \"a\": 2}\n");
  const std::string msg = error_of([&] { read_jsonl(f.path()); });
  EXPECT_TRUE(contains(msg, f.path() + ":2: invalid JSON: duplicate key \"a\"")) << msg;
}

std::string gzip_bytes(const std::string& text) {
  TempFile gz("tmp.gz", text, /*gzip=*/true);
  return read_text(gz.path());
}

TEST(GzipInput, TruncatedStreamIsReportedNotReadAsComplete) {
  std::string body;
  for (int i = 0; i < 2000; ++i) body += "{\"i\": " + std::to_string(i) + "}\n";
  const std::string packed = gzip_bytes(body);
  ASSERT_GT(packed.size(), 100u);
  for (size_t cut : {packed.size() - 1, packed.size() - 8, packed.size() / 2, size_t{12}}) {
    TempFile truncated("trunc.jsonl.gz", packed.substr(0, cut));
    const std::string msg = error_of([&] { read_jsonl(truncated.path()); });
    EXPECT_TRUE(contains(msg, truncated.path() + ": truncated gzip file")) << "cut " << cut << ": " << msg;
    EXPECT_FALSE(contains(msg, "invalid JSON")) << msg;
  }
  TempFile whole("whole.jsonl.gz", packed);
  EXPECT_EQ(read_jsonl(whole.path()).size(), 2000u);
}

TEST(GzipInput, CorruptCrcIsReported) {
  std::string packed = gzip_bytes("{\"a\": 1}\n{\"a\": 2}\n");
  packed[packed.size() - 8] ^= 0x55;  // the CRC32 in the trailer
  TempFile bad("crc.jsonl.gz", packed);
  const std::string msg = error_of([&] { read_jsonl(bad.path()); });
  EXPECT_TRUE(contains(msg, bad.path() + ": corrupt gzip file")) << msg;
}

// zlib's gzread ignores bytes after a member that do not start another one; they are an error
// naming the file. Further members (cat a.gz b.gz) still read as one file, as gzip -d does.
TEST(GzipInput, TrailingGarbageIsRefusedAndFurtherMembersRead) {
  const std::string first = gzip_bytes("{\"a\": 1}\n"), second = gzip_bytes("{\"a\": 2}\n{\"a\": 3}\n");
  TempFile members("multi.jsonl.gz", first + second);
  const auto records = read_jsonl(members.path());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].value["a"], 3);
  EXPECT_EQ(records[2].line, 3);
  for (const std::string& tail : {std::string("GARBAGE"), std::string("\x1f"), std::string(8, '\0'), std::string("\n")}) {
    TempFile trailing("trail.jsonl.gz", first + tail);
    const std::string msg = error_of([&] { read_jsonl(trailing.path()); });
    EXPECT_EQ(msg, trailing.path() + ": trailing garbage after the gzip data: bytes that do not start another gzip "
                                     "member (the file is damaged or something was appended to it)")
        << ::testing::PrintToString(tail);
  }
  TempFile after_members("trail2.csv.gz", gzip_bytes("a,1\n") + gzip_bytes("b,2\n") + "x");
  EXPECT_TRUE(contains(error_of([&] { read_csv(after_members.path()); }), ": trailing garbage after the gzip data"));
  // A member cut short after a complete one is still "truncated".
  TempFile cut("cut.jsonl.gz", first + second.substr(0, second.size() / 2));
  EXPECT_TRUE(contains(error_of([&] { read_jsonl(cut.path()); }), cut.path() + ": truncated gzip file"));
}

TEST(GzipInput, TruncatedCsvGzipToo) {
  std::string body = "question,A,B,C,D,answer\n";
  for (int i = 0; i < 500; ++i) body += "q" + std::to_string(i) + ",a,b,c,d,A\n";
  const std::string packed = gzip_bytes(body);
  TempFile truncated("trunc.csv.gz", packed.substr(0, packed.size() - 4));
  EXPECT_TRUE(contains(error_of([&] { read_csv(truncated.path()); }), "truncated gzip file"));
}

TEST(RegularFiles, FifoAndDevicesAreRefusedWithoutBlocking) {
  const std::string fifo = (std::filesystem::temp_directory_path() / ("kvbench_fifo_" + std::to_string(::getpid()))).string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Each of these would block forever on open() of a FIFO without a writer.
  EXPECT_TRUE(contains(error_of([&] { read_jsonl(fifo); }), fifo + ": the data file must be a regular file, this is a FIFO"));
  EXPECT_TRUE(contains(error_of([&] { read_text(fifo); }), "this is a FIFO"));
  EXPECT_TRUE(contains(error_of([&] { read_json_file(fifo); }), "this is a FIFO"));
  std::filesystem::remove(fifo);
  EXPECT_TRUE(contains(error_of([] { read_text("/dev/zero"); }), "/dev/zero: the text file must be a regular file, this is a character device"));
  EXPECT_TRUE(contains(error_of([] { read_json_file("/tmp"); }), "this is a directory"));
}

}  // namespace
}  // namespace kvbench::datasets
