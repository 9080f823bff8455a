#include "models/inference_session.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "models/attention.hpp"
#include "models/prefill_share.hpp"

namespace kvbench::models {

InferenceSession::InferenceSession(const Transformer& model, policies::Policy* policy, SessionOptions options)
    : model_(model),
      policy_(policy),
      options_(options),
      cache_(model.make_cache(policy ? policy->position_mode() : policies::PositionMode::kOriginal)) {
  if (options_.block < 1) throw std::invalid_argument("stream block size must be at least 1");
  if (policy_ && policy_->observes_only_to_compress() && policy_->rescoring())
    throw std::logic_error(policy_->name() + ": a rescoring policy compresses after forwards that do not, so it cannot skip their observations");
  // Policies that never look at slot order evict in O(evicted) (policies/layer_cache.hpp).
  if (policy_ && policy_->slot_order_free()) cache_.set_slot_order(policies::SlotOrder::kAny);
}

torch::Tensor InferenceSession::run(const std::vector<int64_t>& tokens, policies::Phase phase, bool compress,
                                    bool all_logits) {
  CacheControl control = inspector_;
  control.policy = policy_;
  control.phase = phase;
  control.compress = compress && policy_ != nullptr;
  control.attention = options_.attention;
  control.decode_graphs = options_.cuda_graphs;
  torch::Tensor logits = model_.forward(tokens, next_position_, cache_, control, all_logits);
  account(static_cast<int64_t>(tokens.size()));
  return logits;
}

void InferenceSession::account(int64_t tokens_fed) {
  next_position_ += tokens_fed;
  peak_bytes_ = std::max(peak_bytes_, cache_.logical_bytes());
  peak_allocated_bytes_ = std::max(peak_allocated_bytes_, cache_.allocated_bytes());
  cache_len_ = cache_.max_head_length();
  max_cache_len_ = std::max(max_cache_len_, cache_len_);
}

std::optional<torch::Tensor> InferenceSession::shared_prefill(const std::vector<int64_t>& tokens, bool all_logits) {
  PrefillShare* share = PrefillShare::current();
  // Shared: a prompt fed whole, its last logits, no probe, and a policy that changes neither the
  // positions attention sees nor its logits (so the forward is the full cache's).
  if (!share || all_logits || options_.protocol == Protocol::kStream || inspector_.inspect || inspector_.on_attention)
    return std::nullopt;
  if (policy_ && (policy_->position_mode() != policies::PositionMode::kOriginal || policy_->logit_scale(2) != 1.0))
    return std::nullopt;
  const policies::StatsRequest want = policy_ ? policy_->wants() : policies::StatsRequest{};
  const bool fused = fused_output(want, static_cast<int64_t>(tokens.size()), options_.attention);
  std::optional<PrefillShare::Use> use = share->acquire(model_, tokens, want, fused);
  if (!use) return std::nullopt;
  torch::Tensor logits = replay_shared_prefill(*use->prefill, use->request, tokens, policy_, cache_);
  account(static_cast<int64_t>(tokens.size()));
  return logits;
}

torch::Tensor InferenceSession::prefill(const std::vector<int64_t>& tokens, bool all_logits, int64_t query_tokens) {
  if (tokens.empty()) throw std::invalid_argument("prefill: empty prompt");
  if (query_tokens < 0 || query_tokens >= static_cast<int64_t>(tokens.size()))
    throw std::invalid_argument("prefill: the question's " + std::to_string(query_tokens) + " tokens leave no context in a prompt of " +
                                std::to_string(tokens.size()));
  const auto& c = model_.config();
  info_ = {c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, static_cast<int64_t>(tokens.size()),
           options_.budget.resolve(static_cast<int64_t>(tokens.size())), options_.seed, options_.budget.compression_ratio(),
           query_tokens,
           c.origin.empty() ? std::string() : c.origin + "|" + c10::toString(model_.dtype()) + "|" + model_.device().str()};
  if (policy_) policy_->begin(info_);
  if (policy_ && policy_->rescoring() && (!info_.unlimited() || policy_->rescoring()->standalone()) &&
      options_.protocol != Protocol::kStream)
    return rescored_prefill(tokens, all_logits);
  if (std::optional<torch::Tensor> logits = shared_prefill(tokens, all_logits)) return *logits;
  prefill_tokens_of_this_thread().computed += static_cast<int64_t>(tokens.size());
  return feed_prompt(tokens, policies::Phase::kPrefill, all_logits);
}

torch::Tensor InferenceSession::rescored_prefill(const std::vector<int64_t>& tokens, bool all_logits) {
  policies::ContextRescoring& rescoring = *policy_->rescoring();
  torch::Tensor logits;
  if (rescoring.standalone()) {
    // The policy scores the model itself first (kvpress's DuoAttention on the fly): each
    // calibration input runs alone from position 0 on a cache of its own; what it held is the
    // model's, not the prompt's, so it counts in neither the session's peaks nor its prefill tokens.
    struct Restore {  // the prompt's cache, peaks and probes, however the calibration ends
      InferenceSession& s;
      policies::KVCache prompt_cache;
      int64_t peak_bytes, peak_allocated, max_len, next_position;
      CacheControl inspector;
      ~Restore() {
        s.cache_ = std::move(prompt_cache);
        s.peak_bytes_ = peak_bytes, s.peak_allocated_bytes_ = peak_allocated, s.max_cache_len_ = max_len;
        s.next_position_ = next_position, s.cache_len_ = s.cache_.max_head_length();
        s.inspector_ = std::move(inspector);
      }
    };
    {
      Restore restore{*this, std::exchange(cache_, model_.make_cache(cache_.position_mode())), peak_bytes_, peak_allocated_bytes_,
                      max_cache_len_, next_position_, std::exchange(inspector_, CacheControl{})};
      const Checkpoint empty = checkpoint();
      const std::vector<std::vector<int64_t>> inputs = rescoring.scoring_inputs(tokens, options_.text.get());
      for (size_t i = 0; i < inputs.size(); ++i) {
        rescoring.begin_scoring_input(i);
        run(inputs[i], policies::Phase::kPrefillBlock, /*compress=*/false, false);
        rollback(empty);
      }
    }
    logits = run(tokens, policies::Phase::kPrefill, /*compress=*/false, all_logits);
  } else {
    logits = run(tokens, policies::Phase::kPrefill, /*compress=*/false, all_logits);
    const Checkpoint prompt = checkpoint();
    // Probes see the job's forwards only; they are back however the scoring forwards end.
    struct Restore {
      CacheControl& slot;
      CacheControl saved;
      ~Restore() { slot = std::move(saved); }
    } restore{inspector_, std::exchange(inspector_, CacheControl{})};
    const std::vector<std::vector<int64_t>> inputs = rescoring.scoring_inputs(tokens, options_.text.get());
    for (size_t i = 0; i < inputs.size(); ++i) {
      rescoring.begin_scoring_input(i);
      run(inputs[i], policies::Phase::kPrefillBlock, /*compress=*/false, false);
      rollback(prompt);
      prefill_tokens_of_this_thread().computed += static_cast<int64_t>(inputs[i].size());
    }
    if (const std::optional<policies::AppendedEmbeddings> appended = rescoring.appended()) {
      CacheControl plain;
      plain.attention = options_.attention;
      try {
        model_.forward_embeddings(appended->rows, next_position_, cache_, plain, false, appended->adapter);
      } catch (const std::invalid_argument& e) {  // rows of the wrong width: name the file they came from
        throw std::invalid_argument(appended->origin + ": " + e.what());
      }
      account(appended->rows.size(0));
      prefill_tokens_of_this_thread().computed += appended->rows.size(0);
    }
  }
  prefill_tokens_of_this_thread().computed += static_cast<int64_t>(tokens.size());
  for (int64_t l = 0; l < cache_.n_layers(); ++l) policy_->compress(l, cache_.layer(l), policies::Phase::kPrefill);
  account(0);
  return logits;
}

torch::Tensor InferenceSession::extend(const std::vector<int64_t>& tokens) {
  if (tokens.empty()) throw std::invalid_argument("extend: no tokens");
  if (next_position_ == 0) throw std::logic_error("extend: the session has no prefill to extend");
  return feed_prompt(tokens, policies::Phase::kPrefillBlock, false);
}

torch::Tensor InferenceSession::feed_prompt(const std::vector<int64_t>& tokens, policies::Phase whole, bool all_logits) {
  if (options_.protocol != Protocol::kStream) return run(tokens, whole, true, all_logits);
  std::vector<torch::Tensor> rows;
  for (size_t begin = 0; begin < tokens.size(); begin += options_.block) {
    const size_t end = std::min(tokens.size(), begin + static_cast<size_t>(options_.block));
    std::vector<int64_t> block(tokens.begin() + begin, tokens.begin() + end);
    const bool last = end == tokens.size();
    torch::Tensor logits = run(block, policies::Phase::kPrefillBlock, true, all_logits || last);
    if (all_logits || last) rows.push_back(all_logits ? logits : logits.narrow(0, logits.size(0) - 1, 1));
    if (prefill_progress_) prefill_progress_(static_cast<int64_t>(end), static_cast<int64_t>(tokens.size()));
  }
  return all_logits ? torch::cat(rows, 0) : rows.back();
}

void InferenceSession::rollback(const Checkpoint& checkpoint) {
  cache_.rollback(checkpoint.cache);
  next_position_ = checkpoint.next_position;
  cache_len_ = cache_.max_head_length();
}

torch::Tensor InferenceSession::step(int64_t token) {
  const bool compress = options_.protocol != Protocol::kOneShot;
  return run({token}, policies::Phase::kDecode, compress, false).squeeze(0);
}

}  // namespace kvbench::models
