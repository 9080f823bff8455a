#pragma once
// kvpress's duo_attention_on_the_fly(model, num_samples=50, q_len=500) (duo_attention_press.py), its
// "experimental method to quickly compute DuoAttention scores" of the model's own heads, in two
// pieces the press (duo_attention_press.cpp) runs through a session's calibration forwards.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kvbench::policies::kvpress {

// The chapters it scores with: load_dataset("kmfoda/booksum", split="train").to_pandas()
// .sample(num_samples, random_state=42)["chapter"], i.e. the rows np.random.RandomState(42)
// .choice(rows, num_samples, replace=False) picks (pandas' sample), in that order. The split as
// published (CSV with a "chapter" column) or JSONL records with a "chapter" field; read twice
// (count, then the picked rows), never held whole.
std::vector<std::string> duo_sampled_chapters(const std::string& path, int64_t num_samples);

// One layer of one chapter: the mean projected query [heads, T, d] and key [kv_heads, T, d] (no q/k
// norm: kvpress tests the decoder layer, not its attention, for Qwen3's), each repeated q_len times
// and rotated at positions 0 .. q_len − 1 by `rotate`; the last query's softmax over the q_len
// keys; the mean of its cumulative sum per head, averaged over each KV head's group: [kv_heads].
torch::Tensor duo_layer_scores(const torch::Tensor& projected_queries, const torch::Tensor& projected_keys,
                               const std::function<torch::Tensor(const torch::Tensor&, int64_t)>& rotate, int64_t q_len);

}  // namespace kvbench::policies::kvpress
