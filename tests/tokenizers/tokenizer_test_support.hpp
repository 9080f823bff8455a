#pragma once
// Shared by the tokenizer tests: the real tokenizers (loaded once per program), the reference
// cases recorded from Hugging Face tokenizers, and scratch directories.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "harness/file_tree.hpp"
#include "shared_dir.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::testing {

inline const std::string kFixtures = std::string(KVBENCH_TESTS_DIR) + "/fixtures/tokenizers";

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return nlohmann::json::parse(in);
}

// "llama3" or "qwen3": ../shared/models/<name>-tokenizer, loaded once.
inline const models::Tokenizer& real_tokenizer(const std::string& name) {
  static std::map<std::string, std::unique_ptr<models::Tokenizer>> loaded;
  auto& slot = loaded[name];
  if (!slot) slot = std::make_unique<models::Tokenizer>(kShared + "/models/" + name + "-tokenizer");
  return *slot;
}

// One reference case: every field must match exactly.
inline void expect_case(const models::Tokenizer& tok, const nlohmann::json& c) {
  const std::string text = c.at("text");
  const std::string label = c.at("id").dump() + " " + nlohmann::json(text).dump().substr(0, 120);
  EXPECT_EQ(tok.encode(text, false), c.at("ids").get<std::vector<int>>()) << label;
  EXPECT_EQ(tok.encode(text, true), c.at("ids_with_special_tokens").get<std::vector<int>>()) << label;
  EXPECT_EQ(tok.decode(c.at("ids").get<std::vector<int>>()), c.at("decoded").get<std::string>()) << label;
  const auto with_special = c.at("ids_with_special_tokens").get<std::vector<int>>();
  if (c.contains("decoded_with_special")) {
    EXPECT_EQ(tok.decode(with_special, false), c.at("decoded_with_special").get<std::string>()) << label;
  }
  if (c.contains("decoded_skip_special")) {
    EXPECT_EQ(tok.decode(with_special, true), c.at("decoded_skip_special").get<std::string>()) << label;
  }
}

// A fresh directory under /tmp, removed when the object goes.
class ScratchDir {
 public:
  ScratchDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "kvbench-tok-XXXXXX").string();
    if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  ~ScratchDir() { harness::remove_tree(path_.string()); }  // not remove_all: see harness/file_tree.hpp
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path_ / name, std::ios::binary) << bytes;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace kvbench::testing
