// parse_json builds its DOM with its own SAX handler (issue #31, H2: nlohmann's callback parser
// was quadratic in an array of objects). The values must be exactly nlohmann's DOM parser's, and
// every check (duplicate keys with their line, depth, number overflow, syntax) must stay. The
// scaling itself is measured by bench/bench_json.cpp (timed unit tests are not allowed).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "datasets/json_parse.hpp"
#include "error_text.hpp"

namespace kvbench::datasets {
namespace {

using kvbench::testing::contains;
using kvbench::testing::error_of;
using nlohmann::json;

// A tokenizer.json shape: a vocabulary object and an array of `n` added-token objects, one per line.
std::string tokenizer_like(size_t n, bool duplicate_in_last = false) {
  std::string s = "{\n\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}},\n\"added_tokens\": [\n";
  for (size_t k = 0; k < n; ++k) {
    s += "{\"id\": " + std::to_string(100 + k) + ", \"content\": \"<|extra_" + std::to_string(k) +
         "|>\", \"special\": true, \"lstrip\": false" +
         (duplicate_in_last && k + 1 == n ? ", \"id\": 7" : "") + "}" + (k + 1 < n ? ",\n" : "\n");
  }
  return s + "]\n}\n";
}

json random_value(std::mt19937& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 4 ? 6 : 8));
  switch (kind) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<int64_t>(rng()) - (int64_t{1} << 31);
    case 3: return static_cast<uint64_t>(rng()) << 32 | rng();
    case 4: return std::ldexp(static_cast<double>(rng()) - 2e9, static_cast<int>(rng() % 200) - 100);
    case 5: {
      const char* pieces[] = {"a", "\"", "\\", "\n", "é", "😀", "{", "]", "\u0001", " "};
      std::string s;
      for (size_t i = rng() % 6; i > 0; --i) s += pieces[rng() % 10];
      return s;
    }
    case 6: {
      json a = json::array();
      for (size_t i = rng() % 5; i > 0; --i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (size_t i = rng() % 5; i > 0; --i) o["k" + std::to_string(rng() % 8)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonParseDom, RandomDocumentsEqualNlohmannsParser) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 2000; ++trial) {
    const json value = random_value(rng, 0);
    const std::string text = value.dump(static_cast<int>(rng() % 3) - 1);
    const json parsed = parse_json(text, "r.json");
    EXPECT_EQ(parsed, json::parse(text)) << text;
    EXPECT_EQ(parsed.dump(), json::parse(text).dump()) << text;  // same types (int vs unsigned vs float)
  }
}

TEST(JsonParseDom, ManyObjectsInOneArray) {
  const std::string text = tokenizer_like(100000);
  const json parsed = parse_json(text, "tokenizer.json");
  EXPECT_EQ(parsed, json::parse(text));
  ASSERT_EQ(parsed.at("added_tokens").size(), 100000u);
  EXPECT_EQ(parsed["added_tokens"][99999]["content"], "<|extra_99999|>");
  // A repeated key in the last object is still found, on its own line (4 header lines + 100,000).
  const std::string msg = error_of([] { parse_json(tokenizer_like(100000, true), "tokenizer.json"); });
  EXPECT_TRUE(contains(msg, "tokenizer.json:100003: invalid JSON: duplicate key \"id\" in one object")) << msg;
}

TEST(JsonParseDom, ErrorsKeepTheirMessages) {
  EXPECT_TRUE(contains(error_of([] { parse_json("{}\nx", "t.json"); }), "t.json:2: invalid JSON: syntax error"));
  EXPECT_TRUE(contains(error_of([] { parse_json("[1, 2", "t.json"); }), "t.json:1: invalid JSON: syntax error"));
  EXPECT_TRUE(contains(error_of([] { parse_json("[{\"a\": 1},\n{\"b\": 1e400}]", "t.json"); }),
                       "t.json:2: invalid JSON: number overflow parsing '1e400'"));
  const std::string nested = error_of([] { parse_json("[{\"x\": 1}, {\"y\": [{\"x\": 1,\n\"x\": 2}]}]", "n.json"); });
  EXPECT_TRUE(contains(nested, "n.json:2: invalid JSON: duplicate key \"x\"")) << nested;
  // The same key in sibling objects, and the key "" once, are fine.
  EXPECT_NO_THROW(parse_json("[{\"x\": 1}, {\"x\": 2}, {\"\": {\"x\": 3}}]", "ok.json"));
  EXPECT_TRUE(contains(error_of([] { parse_json("{\"\": 1, \"\": 2}", "e.json"); }), "duplicate key \"\""));
  // Top-level scalars, and JSONL records' first line.
  EXPECT_EQ(parse_json(" 42 ", "s.json"), 42);
  EXPECT_EQ(parse_json("\"s\"", "s.json"), "s");
  EXPECT_TRUE(contains(error_of([] { parse_json("{\"a\": tru}", "f.jsonl", 7); }), "f.jsonl:7: invalid JSON:"));
}

}  // namespace
}  // namespace kvbench::datasets
