// RULER's generator against the official scripts: every manifest under tests/fixtures/ruler/
// <tokenizer>/<max_seq_length>/ was written by NVIDIA/RULER's prepare.py itself
// (scripts/ruler_reference/record.sh; README there); ours must be the same bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>

#include "datasets/ruler/ruler_generator.hpp"
#include "task_fixtures.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {
namespace {

using namespace testing;
namespace ruler = datasets::ruler;

const std::map<std::string, std::string>& tokenizer_dirs() {
  static const std::map<std::string, std::string> d = {
      {"llama3", std::string(KVBENCH_SHARED_DIR) + "/models/llama3-tokenizer"},
      {"qwen3", std::string(KVBENCH_SHARED_DIR) + "/models/qwen3-tokenizer"},
      {"stories260K", std::string(KVBENCH_SHARED_DIR) + "/models/stories260K/tok512.model"},
  };
  return d;
}

const models::Tokenizer& tokenizer(const std::string& name) {
  static std::map<std::string, std::unique_ptr<models::Tokenizer>> loaded;
  auto& t = loaded[name];
  if (!t) t = std::make_unique<models::Tokenizer>(tokenizer_dirs().at(name));
  return *t;
}

struct Recorded {
  std::string tokenizer, folder, file;  // llama3, 4096 | 4096_seed7 | ..., niah_single_1.jsonl
};

std::vector<Recorded> recorded() {
  std::vector<Recorded> out;
  for (const auto& [name, dir] : tokenizer_dirs()) {
    const std::filesystem::path root = std::filesystem::path(fixtures_dir()) / "ruler" / name;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& folder : std::filesystem::directory_iterator(root))
      for (const auto& file : std::filesystem::directory_iterator(folder.path()))
        if (file.path().extension() == ".jsonl") out.push_back({name, folder.path().filename().string(), file.path().filename().string()});
  }
  std::sort(out.begin(), out.end(), [](const Recorded& a, const Recorded& b) {
    return std::tie(a.tokenizer, a.folder, a.file) < std::tie(b.tokenizer, b.folder, b.file);
  });
  return out;
}

class RulerGenerator : public ::testing::TestWithParam<Recorded> {};

// The folder names the run: "<max_seq_length>" plus "_seed<n>" or "_<model_template_type>".
ruler::Request request_for(const Recorded& r, const std::string& expected) {
  ruler::Request q;
  std::string task = r.file.substr(0, r.file.size() - 6);
  if (task.size() > 8 && task.compare(task.size() - 8, 8, "_fixture") == 0) task.resize(task.size() - 8);
  q.task = task;
  const std::size_t underscore = r.folder.find('_');
  q.max_seq_length = std::stoll(r.folder.substr(0, underscore));
  if (underscore != std::string::npos) {
    const std::string variant = r.folder.substr(underscore + 1);
    if (variant.rfind("seed", 0) == 0)
      q.random_seed = std::stoll(variant.substr(4));
    else
      q.model_template_type = variant;
  }
  q.num_samples = std::count(expected.begin(), expected.end(), '\n');
  return q;
}

TEST_P(RulerGenerator, WritesTheOfficialScriptsBytes) {
  const Recorded& r = GetParam();
  const std::string expected = read_file(fixture("ruler/" + r.tokenizer + "/" + r.folder + "/" + r.file));
  const ruler::Request request = request_for(r, expected);
  ruler::RulerData data({std::string(KVBENCH_TESTS_DIR) + "/../data/ruler"},
                        {{"hotpotqa.json", fixture("ruler/hotpotqa_fixture.json")}, {"squad.json", fixture("ruler/squad_fixture.json")}});
  const models::Tokenizer& tok = tokenizer(r.tokenizer);
  std::string got;
  for (const ruler::Sample& s : ruler::generate(request, [&](const std::string& text) { return static_cast<int64_t>(tok.encode(text, false).size()); }, data))
    got += ruler::manifest_line(s) + "\n";
  EXPECT_EQ(got, expected);
}

INSTANTIATE_TEST_SUITE_P(Recorded, RulerGenerator, ::testing::ValuesIn(recorded()), [](const auto& info) {
  std::string name = info.param.tokenizer + "_" + info.param.folder + "_" + info.param.file.substr(0, info.param.file.size() - 6);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

}  // namespace
}  // namespace kvbench::tasks
