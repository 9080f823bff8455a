// One prefill per prompt across a grid's cells (harness/prefill_sharing.hpp): every registered
// policy, replaying a prefill another session computed and decoding in a batch with the other
// sessions' steps (models/decode_batch.hpp), ends with the cache, the logits and the meters of its
// own run, bit for bit; and a grid run with sharing writes the results it writes without, while
// prefilling each prompt once.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "every_policy.hpp"
#include "harness/grid_runner.hpp"
#include "harness/prefill_sharing.hpp"
#include "harness/results_store.hpp"
#include "harness/temp_dir.hpp"
#include "models/decode_batch.hpp"
#include "models/inference_session.hpp"
#include "models/model_loader.hpp"
#include "models/prefill_share.hpp"
#include "policies/registry.hpp"

namespace kvbench::harness {
namespace {

// What a session leaves after its prefill and a few greedy steps.
struct Trace {
  std::vector<torch::Tensor> logits, keys, values, positions, lengths;
  int64_t peak_logical = 0, peak_allocated = 0, max_cache_len = 0, next_position = 0;
  models::PrefillTokens prefill;
  models::DecodeRows rows;
};

class PrefillSharing : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new models::LoadedModel(models::load_model("stories260K"));
    model_ = new models::Transformer(loaded_->config, loaded_->weights);
  }
  static std::vector<int64_t> prompt(int64_t n, int64_t salt) {
    std::vector<int64_t> t{1};
    for (int64_t i = 1; i < n; ++i) t.push_back(3 + (i * 37 + salt * 11) % 500);
    return t;
  }
  // Two prompts, each prefilled then decoded 4 greedy steps, as a task's examples would be.
  static std::vector<Trace> run(const std::string& policy_name, models::Protocol protocol, const policies::Budget& budget) {
    std::vector<Trace> traces;
    for (int64_t example = 0; example < 2; ++example) {
      models::prefill_tokens_of_this_thread() = {};
      models::decode_rows_of_this_thread() = {};
      auto policy = policy_name == "full" ? nullptr
                                          : policies::make_policy(policy_name, kvbench::testing::runnable_params(
                                                                                   policy_name, model_->config()));
      models::SessionOptions options;
      options.protocol = protocol;
      options.budget = budget;
      options.text = kvbench::testing::stories_text();
      models::InferenceSession session(*model_, policy.get(), options);
      Trace t;
      torch::Tensor logits = session.prefill(prompt(70 + 9 * example, example));
      t.logits.push_back(logits.clone());
      for (int step = 0; step < 4; ++step) {
        logits = session.step(logits.reshape({-1}).argmax().item<int64_t>());
        t.logits.push_back(logits.clone());
      }
      for (int64_t l = 0; l < session.cache().n_layers(); ++l) {
        const policies::LayerCache& layer = session.cache().layer(l);
        t.keys.push_back(layer.keys().clone());
        t.values.push_back(layer.values().clone());
        t.positions.push_back(layer.positions().clone());
        t.lengths.push_back(layer.head_lengths().clone());
      }
      t.peak_logical = session.peak_logical_bytes();
      t.peak_allocated = session.peak_allocated_bytes();
      t.max_cache_len = session.max_cache_len();
      t.next_position = session.next_position();
      t.prefill = models::prefill_tokens_of_this_thread();
      t.rows = models::decode_rows_of_this_thread();
      traces.push_back(std::move(t));
    }
    return traces;
  }
  static models::LoadedModel* loaded_;
  static models::Transformer* model_;
};
models::LoadedModel* PrefillSharing::loaded_ = nullptr;
models::Transformer* PrefillSharing::model_ = nullptr;

void expect_same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << what << " " << i;
}

TEST_F(PrefillSharing, EveryPolicyReplaysItsOwnPrefillBitForBit) {
  for (models::Protocol protocol : {models::Protocol::kOneShot, models::Protocol::kDecode}) {
    std::vector<std::string> names;
    for (const auto& info : policies::registered_policies())
      if (!kvbench::testing::policy_refuses(info.name, protocol, /*token_budget=*/false) &&
          !(kvbench::testing::prefill_only(info.name) && protocol != models::Protocol::kOneShot))
        names.push_back(info.name);
    std::vector<std::vector<Trace>> alone, shared(names.size());
    std::vector<policies::Budget> budgets;
    for (const std::string& name : names) {
      // A token budget, or what a policy sized otherwise takes (a compression ratio, or none).
      for (const auto& budget : {policies::Budget::tokens(24), policies::Budget::compression_ratio(0.5),
                                 policies::Budget::unlimited()}) {
        try {
          alone.push_back(run(name, protocol, budget));
          budgets.push_back(budget);
          break;
        } catch (const std::invalid_argument&) {
        }
      }
      ASSERT_EQ(alone.size(), budgets.size()) << name << " ran under no budget";
    }
    std::vector<std::function<void()>> bodies;
    for (size_t i = 0; i < names.size(); ++i) bodies.push_back([&, i] { shared[i] = run(names[i], protocol, budgets[i]); });
    run_taking_turns(bodies);

    int64_t reused = 0, batched = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string what = names[i] + " under " + models::to_string(protocol);
      SCOPED_TRACE(what);
      ASSERT_EQ(shared[i].size(), alone[i].size());
      for (size_t e = 0; e < alone[i].size(); ++e) {
        const Trace &a = alone[i][e], &s = shared[i][e];
        expect_same(a.logits, s.logits, "logits");
        expect_same(a.keys, s.keys, "keys");
        expect_same(a.values, s.values, "values");
        expect_same(a.positions, s.positions, "positions");
        expect_same(a.lengths, s.lengths, "head lengths");
        EXPECT_EQ(a.peak_logical, s.peak_logical);
        EXPECT_EQ(a.peak_allocated, s.peak_allocated);
        EXPECT_EQ(a.max_cache_len, s.max_cache_len);
        EXPECT_EQ(a.next_position, s.next_position);
        EXPECT_EQ(a.prefill.reused, 0);  // alone: every prompt computed
        EXPECT_EQ(s.prefill.computed + s.prefill.reused, a.prefill.computed);
        reused += s.prefill.reused;
        EXPECT_EQ(a.rows.batched, 0);
        batched += s.rows.batched;
      }
    }
    EXPECT_GT(batched, 0);  // the ring's steps did run together
    // The ring computed each prompt once for all the policies that can share, and once more for
    // each that cannot (it moves the positions attention sees, or scales its logits).
    int64_t computed = 0;
    std::vector<std::string> apart;
    for (size_t i = 0; i < names.size(); ++i) {
      auto p = names[i] == "full" ? nullptr : policies::make_policy(names[i], kvbench::testing::runnable_params(names[i], model_->config()));
      // A policy that rescores the prompt (KVCompose, KVzip) prefills alone, with its scoring
      // forwards besides: its own count is checked against its run alone above.
      if (p && p->rescoring()) continue;
      for (const Trace& s : shared[i]) computed += s.prefill.computed;
      if (p && (p->position_mode() != policies::PositionMode::kOriginal || p->logit_scale(2) != 1.0)) apart.push_back(names[i]);
    }
    EXPECT_GT(reused, 0);
    EXPECT_EQ(computed, (70 + 79) * static_cast<int64_t>(1 + apart.size()))
        << nlohmann::json(apart).dump() << " of " << names.size() << " policies prefill alone";
    EXPECT_GE(apart.size(), 2u);  // StreamingLLM and Cascade at least (cache-slot positions)
  }
}

TEST_F(PrefillSharing, AGridWritesTheSameResultsWithAndWithoutSharing) {
  testing::TempDir dir;
  std::vector<Job> jobs;
  for (const char* policy : {"full", "snapkv", "h2o", "kvpress:knorm", "kvpress:expected_attention", "streaming_llm"})
    for (const char* budget : {"48", "96"})
      jobs.push_back(make_job({{"model", "stories260K"}, {"task", "longbench/trec"}, {"policy", policy}, {"budget", budget},
                               {"limit", 2}}));
  ResultsStore shared(dir / "shared"), alone(dir / "alone");
  PoolOptions sharing, no_sharing;
  no_sharing.share_prefill = false;
  const GridRunSummary with = run_grid_jobs(jobs, shared, sharing, /*quiet=*/true);
  const GridRunSummary without = run_grid_jobs(jobs, alone, no_sharing, /*quiet=*/true);
  ASSERT_TRUE(with.complete());
  ASSERT_TRUE(without.complete());
  EXPECT_EQ(without.prefill_reused, 0);
  EXPECT_EQ(with.prefill_computed + with.prefill_reused, without.prefill_computed);
  // One computation per prompt for the 10 jobs that share, and StreamingLLM's two jobs alone (it
  // rotates keys by cache slot: its forward is not the full cache's).
  EXPECT_EQ(with.prefill_computed * 12, without.prefill_computed * 3);
  // Most decoding projections run for several jobs at once (with sharing, only the forward of a
  // prompt, not each replay, projects its last token's row).
  EXPECT_EQ(without.rows_batched, 0);
  EXPECT_GT(with.rows_batched * 4, with.rows_projected * 3);
  auto comparable = [](nlohmann::json r) {
    r.erase("timings");
    r.erase("finished_at");
    r.erase("environment");
    r["memory"].erase("allocator_peak_bytes");  // the process's peak, not the job's
    return r;
  };
  for (const Job& job : jobs) {
    const nlohmann::json a = nlohmann::json::parse(std::ifstream(shared.result_path(job.id)));
    const nlohmann::json b = nlohmann::json::parse(std::ifstream(alone.result_path(job.id)));
    EXPECT_EQ(comparable(a), comparable(b)) << job.spec.dump();
  }
}

// A shared forward that throws (a token outside the vocabulary) fails every session of the ring
// with the error it would have alone, and none waits for the others forever.
TEST_F(PrefillSharing, AFailedSharedForwardFailsEachSessionAsAlone) {
  std::vector<int64_t> bad = prompt(40, 0);
  bad[20] = model_->config().vocab_size + 5;
  std::vector<std::string> errors(3);
  std::vector<std::function<void()>> bodies;
  for (size_t i = 0; i < errors.size(); ++i)
    bodies.push_back([&, i] {
      auto policy = i == 0 ? nullptr : policies::make_policy(i == 1 ? "snapkv" : "h2o", nlohmann::json::object());
      models::InferenceSession session(*model_, policy.get(), models::SessionOptions{});
      try {
        session.prefill(bad);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  run_taking_turns(bodies);
  for (const std::string& e : errors) EXPECT_NE(e.find("outside the vocabulary"), std::string::npos) << e;
}

// kvpress's compress-once protocol (LongBench's kvpress pipeline: each context prefilled and
// compressed once, its question fed after) shares the context's prefill the same way.
TEST_F(PrefillSharing, CompressOnceCellsShareTheirContexts) {
  testing::TempDir dir;
  std::vector<Job> jobs;
  for (const char* policy : {"full", "snapkv", "kvpress:knorm"})
    jobs.push_back(make_job({{"model", "stories260K"}, {"task", "longbench/qasper"}, {"policy", policy}, {"budget", "64"},
                             {"task_params", {{"pipeline", "kvpress"}}}, {"limit", 2}}));
  ResultsStore shared(dir / "shared"), alone(dir / "alone");
  PoolOptions no_sharing;
  no_sharing.share_prefill = false;
  const GridRunSummary with = run_grid_jobs(jobs, shared, PoolOptions{}, /*quiet=*/true);
  const GridRunSummary without = run_grid_jobs(jobs, alone, no_sharing, /*quiet=*/true);
  ASSERT_TRUE(with.complete() && without.complete());
  EXPECT_EQ(with.prefill_computed * 3, without.prefill_computed);
  EXPECT_EQ(with.prefill_reused, 2 * with.prefill_computed);
  for (const Job& job : jobs) {
    nlohmann::json a = nlohmann::json::parse(std::ifstream(shared.result_path(job.id)));
    nlohmann::json b = nlohmann::json::parse(std::ifstream(alone.result_path(job.id)));
    EXPECT_EQ(a["examples"], b["examples"]) << job.spec.dump();
    EXPECT_EQ(a["metrics"], b["metrics"]) << job.spec.dump();
  }
}

}  // namespace
}  // namespace kvbench::harness
