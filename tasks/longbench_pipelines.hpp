#pragma once
// The three LongBench pipelines in use (task_params.pipeline):
//  - pred_py (default): THUDM/LongBench pred.py — tasks/longbench.hpp;
//  - kvcache_factory: Zefan-Cai/KVCache-Factory run_longbench.py @7ee6be0 (Dec 2024, the version
//    the KV-cache papers ran): the chat wrapper is applied to every subset BEFORE the middle
//    truncation, its own model2maxlen (llama2 3950, llama3 7950, mistral 31500), EOS masked at the
//    first step (min_length = context + 1), EOS the only stop token (no samsum "\n");
//  - kvpress: NVIDIA/kvpress (evaluation/benchmarks/longbench + kvpress/pipeline.py): the prompt
//    split into a context (compressed by the policy) and a question + answer prefix fed after the
//    compression without eviction; the context is cut from the right; dataset2maxlen + 20 new
//    tokens; greedy with no EOS mask; its scorer strips the prediction's leading whitespace.
#include <string>
#include <vector>

#include "datasets/jsonl_reader.hpp"
#include "tokenizers/tokenizer.hpp"
#include "tasks/kvpress_prompt.hpp"
#include "tasks/longbench.hpp"

namespace kvbench::tasks::longbench {

enum class Pipeline { PredPy, KvcacheFactory, Kvpress };
Pipeline parse_pipeline(const std::string& name);  // pred_py | kvcache_factory | kvpress
const char* to_string(Pipeline pipeline);
std::vector<std::string> pipeline_names();

// KVCache-Factory's model2maxlen: the value of the last key (in its order llama2, llama-2,
// llama3, llama-3, mistral) contained in the lower-cased `model` (run_longbench.py's substring
// match on the model path). Throws listing the keys when none matches.
int64_t kvcache_factory_max_length(const std::string& model);

// KVCache-Factory: format, the chat template (any subset), then pred.py's middle truncation of
// the BOS-tokenised text; the result is tokenised again with BOS.
PreparedPrompt kvcache_factory_prompt(const models::Tokenizer& tokenizer, const std::string& prompt_template,
                                      const datasets::JsonRecord& record, int64_t max_length,
                                      const std::string& chat_template);

// kvpress's rows: the LongBench template split into the context part and the question part
// (question template + answer prefix), as create_huggingface_dataset.py writes them; for trec,
// triviaqa and samsum the answer prefix is cut from the end of `input` (str.removesuffix, so
// nothing is cut when the input ends otherwise).
// The parts of tasks/kvpress_prompt.hpp for one LongBench record.
KvpressParts kvpress_parts(const std::string& subset, const std::string& prompt_template,
                           const datasets::JsonRecord& record, const std::string& chat_template,
                           const models::Tokenizer& tokenizer);

// kvpress adds 20 tokens to dataset2maxlen ("to avoid any cut-offs").
constexpr int64_t kKvpressExtraNewTokens = 20;

// calculate_metrics.py: prediction.lstrip(), first line for trec/triviaqa/samsum/lsht.
std::string kvpress_scored_prediction(const std::string& subset, const std::string& prediction);

}  // namespace kvbench::tasks::longbench
