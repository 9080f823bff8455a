// Job ids: a hash of the canonical spec and the input checksums, so equal jobs written
// differently share one id and any change to what a job computes gives another.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "datasets/sha256.hpp"
#include "harness/job_id.hpp"
#include "harness/job_spec.hpp"
#include "harness/temp_dir.hpp"
#include "policies/registry.hpp"
#include "tensorio/safetensors.hpp"

namespace kvbench::harness {
namespace {

const nlohmann::json kChecksums = {{"model", std::string(64, 'a')}, {"dataset", std::string(64, 'b')}};

TEST(JobId, IsTheDocumentedHashOfCanonicalSpecAndChecksums) {
  nlohmann::json spec = {{"task", "tinystories"}, {"budget", "64"}, {"a", {{"z", 1}, {"b", 2}}}};
  EXPECT_EQ(canonical_json(spec), R"({"a":{"b":2,"z":1},"budget":"64","task":"tinystories"})");
  const std::string expected = datasets::sha256_hex(canonical_json(spec) + "\nmodel " + std::string(64, 'a') +
                                                    "\ndataset " + std::string(64, 'b') + "\n")
                                   .substr(0, 16);
  EXPECT_EQ(job_id(spec, kChecksums), expected);
  EXPECT_EQ(expected.size(), 16u);
}

TEST(JobId, ChangesWithEverySpecFieldAndChecksum) {
  nlohmann::json base = make_job({{"task", "tinystories"}}).spec;
  const std::string id = job_id(base, kChecksums);
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"budget", "64"}, {"seed", 1}, {"limit", 3}, {"block", 4}, {"protocol", "stream"},
           {"task_params", {{"mode", "stream"}}}, {"policy", "kvec"}, {"dtype", "float32"}}) {
    nlohmann::json changed = base;
    changed[field] = value;
    EXPECT_NE(job_id(changed, kChecksums), id) << field;
  }
  nlohmann::json other = kChecksums;
  other["dataset"] = std::string(64, 'c');
  EXPECT_NE(job_id(base, other), id);
  other = kChecksums;
  other["model"] = std::string(64, 'd');
  EXPECT_NE(job_id(base, other), id);
}

TEST(JobSpec, EqualJobsWrittenDifferentlyShareOneId) {
  Job a = make_job({{"task", "tinystories"}, {"policy", "kvec"}, {"budget", "64"}});
  // Defaults spelled out, keys in another order, the policy's default parameters given explicitly.
  nlohmann::json explicit_spec = {{"policy_params", policies::resolved_params("kvec", nlohmann::json::object())},
                                  {"seed", 0},
                                  {"budget", "64"},
                                  {"protocol", "oneshot"},
                                  {"policy", "kvec"},
                                  {"task", "tinystories"},
                                  {"limit", 0}};
  Job b = make_job(explicit_spec);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.spec, b.spec);
  EXPECT_EQ(a.checksums["model"].get<std::string>().size(), 64u);
  EXPECT_NE(make_job({{"task", "tinystories"}, {"policy", "kvec"}, {"budget", "65"}}).id, a.id);
}

// A learned press's artefact (a parameter that names a file or folder) joins the id as the
// weights do: the same spec on other Q-filters or another adapter folder is another job.
TEST(JobSpec, TheFilesALearnedPressReadsJoinTheId) {
  testing::TempDir dir;
  const std::string filters = dir / "q_filters.safetensors";
  models::write_safetensors(filters, {{"q_filters", torch::zeros({2, 2, 2})}});
  auto job = [](const std::string& policy, const nlohmann::json& params) {
    return make_job({{"task", "tinystories"}, {"policy", policy}, {"policy_params", params}, {"budget", "64"}});
  };
  const Job a = job("kvpress:qfilter", {{"q_filters", filters}});
  ASSERT_TRUE(a.checksums.contains("policy"));
  models::write_safetensors(filters, {{"q_filters", torch::ones({2, 2, 3})}});
  const Job b = job("kvpress:qfilter", {{"q_filters", filters}});
  EXPECT_NE(a.checksums["policy"], b.checksums["policy"]);
  EXPECT_NE(a.id, b.id);
  // A folder: every file under it, nested ones too.
  const std::filesystem::path folder = std::filesystem::path(std::string(dir / "restorekv"));
  std::filesystem::copy(std::filesystem::path(KVBENCH_TESTS_DIR) / "fixtures" / "policy_parity" / "restorekv" / "restorekv", folder);
  const Job c = job("kvpress:RestoreKV", {{"restore_model", folder.string()}});
  ASSERT_TRUE(c.checksums.contains("policy"));
  std::filesystem::create_directories(folder / "nested");
  std::ofstream(folder / "nested" / "notes.txt") << "retrained";
  EXPECT_NE(job("kvpress:RestoreKV", {{"restore_model", folder.string()}}).id, c.id) << "a file added under the folder";
  // Jobs that read no such file keep the id of model and dataset alone.
  const Job plain = job("kvec", nlohmann::json::object());
  EXPECT_FALSE(plain.checksums.contains("policy"));
}

TEST(JobSpec, FileErrorsNameTheFileAndLine) {
  testing::TempDir dir;
  const std::string bad_json = dir / "bad.json";
  std::ofstream(bad_json) << "{\n  \"task\": \"tinystories\",\n  \"budget\": 64,,\n}\n";
  try {
    load_job_file(bad_json);
    FAIL() << "accepted invalid JSON";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(bad_json + ":3:"), std::string::npos) << e.what();
  }
  const std::string bad_field = dir / "field.json";
  std::ofstream(bad_field) << "{\n  \"task\": \"tinystories\",\n  \"limit\": \"three\"\n}\n";
  try {
    load_job_file(bad_field);
    FAIL() << "accepted a string limit";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(bad_field + ":3: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
  }
}

TEST(JobSpec, ShortDescriptionShowsOnlyChangedPolicyParameters) {
  nlohmann::json spec = make_job({{"task", "tinystories"}, {"policy", "kvec"}, {"budget", "64"}, {"limit", 2}}).spec;
  const std::string plain = short_description(spec);
  EXPECT_EQ(plain.find('{'), std::string::npos) << plain;
  EXPECT_NE(plain.find("kvec @64"), std::string::npos) << plain;
  EXPECT_NE(plain.find("limit=2"), std::string::npos) << plain;
  auto defaults = policies::resolved_params("kvec", nlohmann::json::object());
  ASSERT_FALSE(defaults.empty());
  const std::string key = defaults.begin().key();
  nlohmann::json changed = spec;
  if (defaults.begin()->is_number_integer())
    changed["policy_params"][key] = defaults.begin()->get<int64_t>() + 1;
  else if (defaults.begin()->is_number())
    changed["policy_params"][key] = defaults.begin()->get<double>() + 0.5;
  else if (defaults.begin()->is_boolean())
    changed["policy_params"][key] = !defaults.begin()->get<bool>();
  else
    GTEST_SKIP() << "kvec's first parameter is not a number or a flag";
  EXPECT_NE(short_description(changed).find("kvec{" + key + "="), std::string::npos) << short_description(changed);
}

// Found by fuzz_job_spec (build-fuzz/artifacts, 2026-11-23): a spec that was never normalised,
// with an object where the seed's number belongs, made the description throw nlohmann's
// type_error. A display helper shows what it can instead.
TEST(JobSpec, ShortDescriptionOfAnUnnormalisedSpecNeverThrows) {
  const nlohmann::json raw = nlohmann::json::parse(
      R"({"task":"tinystories","policy":"kvec","poilcy_params":{"beta":0.25},"budget":"64","protocol":"stream",)"
      R"("block":2,"seed":{"beta":0.25},"budg":"cpu","dtype":"auto"})");
  EXPECT_EQ(short_description(raw), "tinystories kvec @64 stream/b2 seed=0");
  EXPECT_EQ(short_description(nlohmann::json::parse(R"({"policy": 3, "policy_params": [1], "block": "x", "limit": 2.5})")),
            "? full @full oneshot seed=0");
  EXPECT_EQ(short_description(nlohmann::json::array()), "?");
}

}  // namespace
}  // namespace kvbench::harness
