#include "models/weight_checks.hpp"

#include "tokenizers/model_error.hpp"

namespace kvbench::models {
namespace {

// In chunks, so a checkpoint of billions of weights never needs a second full-size copy.
bool all_finite(const torch::Tensor& t) {
  if (!t.defined() || t.numel() == 0 || !t.is_floating_point()) return true;
  const torch::Tensor flat = t.reshape({-1});
  constexpr int64_t kChunk = int64_t{1} << 20;
  for (int64_t begin = 0; begin < flat.numel(); begin += kChunk) {
    const torch::Tensor chunk = flat.narrow(0, begin, std::min(kChunk, flat.numel() - begin)).to(torch::kFloat32);
    if (!torch::isfinite(chunk).all().item<bool>()) return false;
  }
  return true;
}

}  // namespace

void check_finite_weights(const ModelWeights& w, const std::string& origin) {
  auto check = [&](const std::string& name, const torch::Tensor& t) {
    if (!all_finite(t))
      throw ModelLoadError(origin, "tensor '" + name + "' holds NaN or infinite values (a broken checkpoint)");
  };
  check("embedding", w.embedding);
  check("final_norm", w.final_norm);
  if (!w.lm_head.is_same(w.embedding)) check("lm_head", w.lm_head);
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& lw = w.layers[l];
    const std::string p = "layers." + std::to_string(l) + ".";
    for (const auto& [name, t] : {std::pair<const char*, const torch::Tensor&>{"attn_norm", lw.attn_norm},
                                  {"wq", lw.wq}, {"wk", lw.wk}, {"wv", lw.wv}, {"wo", lw.wo}, {"bq", lw.bq},
                                  {"bk", lw.bk}, {"bv", lw.bv}, {"ffn_norm", lw.ffn_norm}, {"w_gate", lw.w_gate},
                                  {"w_down", lw.w_down}, {"w_up", lw.w_up}})
      check(p + name, t);
  }
}

void check_tokenizer_vocab(int64_t tokenizer_vocab, const LoadedModel& model) {
  if (tokenizer_vocab > model.config.vocab_size)
    throw ModelLoadError(model.tokenizer_path,
                         "the tokenizer has " + std::to_string(tokenizer_vocab) + " tokens, more than the " +
                             std::to_string(model.config.vocab_size) + " rows of the model's embedding (" +
                             model.weights_path + "): they do not belong together; pass the model's own tokenizer");
}

}  // namespace kvbench::models
