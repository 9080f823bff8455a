#include "models/prefill_share.hpp"

#include <algorithm>
#include <thread>

#include "models/attention.hpp"
#include "policies/gqa_mode.hpp"
#include "policies/policy.hpp"

namespace kvbench::models {
namespace {

thread_local PrefillShare* current_share = nullptr;

// Where `want` is among `requests` (requests.size() when it is not).
size_t index_of(const std::vector<policies::StatsRequest>& requests, const policies::StatsRequest& want) {
  return static_cast<size_t>(
      std::find_if(requests.begin(), requests.end(), [&](const auto& r) { return r == want; }) -
      requests.begin());
}

// Keeps what the forward hands a policy besides attention statistics (the attention input, the
// queries before RoPE and the rotation, W_o); evicts nothing.
class PrefillCapture final : public policies::Policy {
 public:
  PrefillCapture(const policies::StatsRequest& model_side, int64_t layers) : want_(model_side), seen(layers) {}
  std::string name() const override { return "shared prefill"; }
  policies::StatsRequest wants() const override { return want_; }
  void observe(int64_t layer, policies::LayerCache&, const policies::AttentionStats& stats, policies::Phase) override {
    seen[layer] = stats;
  }
  void compress(int64_t, policies::LayerCache&, policies::Phase) override {}

 private:
  policies::StatsRequest want_;

 public:
  std::vector<policies::AttentionStats> seen;
};

}  // namespace

struct PrefillShare::Entry {
  const Transformer* model = nullptr;
  std::vector<int64_t> tokens;
  bool fused = false;
  std::vector<policies::StatsRequest> requests;
  std::vector<std::thread::id> waiting;  // sessions registered and not yet served
  std::shared_ptr<const SharedPrefill> prefill;
  bool failed = false;  // the forward threw: the waiting sessions prefill alone

  void add(const policies::StatsRequest& want) {
    if (index_of(requests, want) == requests.size()) requests.push_back(want);
    waiting.push_back(std::this_thread::get_id());
  }
  void drop_this_thread() {
    waiting.erase(std::remove(waiting.begin(), waiting.end(), std::this_thread::get_id()), waiting.end());
  }
};

PrefillTokens& prefill_tokens_of_this_thread() {
  thread_local PrefillTokens tokens;
  return tokens;
}

PrefillShare* PrefillShare::current() { return current_share; }
PrefillShare::Scope::Scope(PrefillShare* share) { current_share = share; }
PrefillShare::Scope::~Scope() { current_share = nullptr; }

std::shared_ptr<PrefillShare::Entry> PrefillShare::find(const Transformer& model, const std::vector<int64_t>& tokens,
                                                        bool fused) const {
  for (const auto& e : entries_)
    if (e->model == &model && e->fused == fused && e->tokens == tokens) return e;
  return nullptr;
}

void PrefillShare::close(const std::shared_ptr<Entry>& entry) {
  entries_.erase(std::remove(entries_.begin(), entries_.end(), entry), entries_.end());
}

PrefillShare::Use PrefillShare::take(const std::shared_ptr<Entry>& entry, const policies::StatsRequest& want) {
  entry->drop_this_thread();
  if (entry->waiting.empty()) close(entry);  // every registered session served: free the forward
  return {entry->prefill, index_of(entry->prefill->requests, want)};
}

std::optional<PrefillShare::Use> PrefillShare::acquire(const Transformer& model, const std::vector<int64_t>& tokens,
                                                       const policies::StatsRequest& want, bool fused) {
  const auto T = static_cast<int64_t>(tokens.size());
  std::shared_ptr<Entry> entry = find(model, tokens, fused);
  if (entry && entry->prefill) {  // computed while this session was elsewhere: served if its request is
    if (index_of(entry->prefill->requests, want) == entry->prefill->requests.size()) return std::nullopt;
    prefill_tokens_of_this_thread().reused += T;
    return take(entry, want);
  }
  if (entry) {  // another session met this prompt first: wait for its forward
    entry->add(want);
    while (!entry->prefill && !entry->failed) yield_();
    if (entry->failed) {
      entry->drop_this_thread();
      return std::nullopt;
    }
    prefill_tokens_of_this_thread().reused += T;
    return take(entry, want);
  }
  entry = std::make_shared<Entry>();
  entry->model = &model;
  entry->tokens = tokens;
  entry->fused = fused;
  entry->add(want);
  entries_.push_back(entry);
  yield_();  // one round: every other session with this prompt registers its request
  while (others_mid_step_()) yield_();  // and those still decoding their last prompt, once they are done
  if (entry->waiting.size() == 1) {
    close(entry);
    return std::nullopt;
  }
  try {
    entry->prefill = compute_shared_prefill(model, tokens, entry->requests, fused);
  } catch (...) {
    entry->failed = true;
    entry->drop_this_thread();
    close(entry);
    throw;
  }
  prefill_tokens_of_this_thread().computed += T;
  return take(entry, want);
}

std::shared_ptr<const SharedPrefill> compute_shared_prefill(const Transformer& model,
                                                            const std::vector<int64_t>& tokens,
                                                            const std::vector<policies::StatsRequest>& requests,
                                                            bool fused) {
  const int64_t layers = model.config().n_layers;
  policies::StatsRequest model_side;
  for (const auto& r : requests) {
    model_side.queries_before_rope |= r.queries_before_rope;
    model_side.output_projection |= r.output_projection;
    model_side.hidden_states |= r.hidden_states;
    model_side.projections |= r.projections;
  }
  auto out = std::make_shared<SharedPrefill>();
  out->requests = requests;
  out->keys.resize(layers);
  out->values.resize(layers);
  out->stats.assign(requests.size(), std::vector<policies::AttentionStats>(layers));
  policies::KVCache cache = model.make_cache(policies::PositionMode::kOriginal);
  PrefillCapture capture(model_side, layers);
  CacheControl control;
  control.policy = &capture;
  control.phase = policies::Phase::kPrefill;
  control.attention = fused ? AttentionPath::kAuto : AttentionPath::kChunked;
  control.on_attention = [&](int64_t l, const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& positions, const torch::Tensor&) {
    out->keys[l] = k.clone();  // views of the layer's projection: keep only what is appended
    out->values[l] = v.clone();
    if (l == 0) out->positions = positions;
    for (size_t r = 0; r < requests.size(); ++r) out->stats[r][l] = attention_statistics(q, cache.layer(l), requests[r]);
  };
  out->logits = model.forward(tokens, 0, cache, control, /*all_logits=*/false);
  for (size_t r = 0; r < requests.size(); ++r)
    for (int64_t l = 0; l < layers; ++l) {
      policies::AttentionStats& s = out->stats[r][l];
      const policies::AttentionStats& seen = capture.seen[l];
      if (requests[r].queries_before_rope) s.queries_before_rope = seen.queries_before_rope, s.rotate = seen.rotate;
      if (requests[r].output_projection) s.output_projection = seen.output_projection;
      if (requests[r].hidden_states) s.hidden_states = seen.hidden_states;
      if (requests[r].projections)
        s.projected_queries = seen.projected_queries, s.projected_keys = seen.projected_keys, s.rotate = seen.rotate;
    }
  return out;
}

torch::Tensor replay_shared_prefill(const SharedPrefill& prefill, size_t request, const std::vector<int64_t>& tokens,
                                    policies::Policy* policy, policies::KVCache& cache) {
  c10::InferenceMode inference;
  for (int64_t l = 0; l < static_cast<int64_t>(prefill.keys.size()); ++l) {
    policies::LayerCache& layer = cache.layer(l);
    policies::append_model_heads(layer, prefill.keys[l], prefill.values[l], prefill.positions);
    if (!policy) continue;
    // A copy whose tensors are the shared ones: policies read statistics, never write them (the
    // sharing test runs every registered policy twice on one forward).
    policies::AttentionStats stats = prefill.stats[request][l];
    stats.position_end = prefill.tokens();
    stats.tokens = &tokens;
    policy->observe(l, layer, stats, policies::Phase::kPrefill);
    policy->compress(l, layer, policies::Phase::kPrefill);
  }
  return prefill.logits.clone();
}

}  // namespace kvbench::models
