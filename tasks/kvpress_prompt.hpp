#pragma once
// kvpress's prompt assembly (kvpress/pipeline.py KVPressTextGenerationPipeline.preprocess), for
// every task run the kvpress way: the context is what the policy compresses; each question, with
// a suffix and the answer prefix, is fed after the compression. Without a chat template the
// context is BOS + context and the suffix "\n"; with one, the template is applied to
// context + a separator and split there (the part after the separator is the suffix); the model's
// own template is rendered with enable_thinking=False, pipeline.py's default.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policies/context_rescoring.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {

struct KvpressParts {
  std::string context;   // what the policy compresses (BOS added when tokenised)
  std::string question;  // question + suffix + answer prefix, fed after the compression
  bool context_has_bos = false;  // the model's own template wrote BOS into the context text
  // Non-empty in a query-aware context built for a policy that names a delimiter: the special
  // token between its context and its question, which kvpress_ids removes.
  std::string query_delimiter;
};
// `chat_template` "none", a named template, or "model" (the tokenizer's own).
KvpressParts kvpress_parts(const std::string& context, const std::string& question, const std::string& answer_prefix,
                           const std::string& chat_template, const models::Tokenizer& tokenizer);
// kvpress's query-aware prompt (evaluate.py --query_aware, lines 342-354): the question moved into
// the context, after `delimiter` where the policy names one (Policy::query_delimiter: FinchPress
// adds "<|finch_sep|>" to the tokenizer as a special token); nothing is asked after the
// compression but the suffix and the answer prefix.
KvpressParts kvpress_query_aware_parts(const std::string& context, const std::string& question, const std::string& answer_prefix,
                                       const std::string& chat_template, const models::Tokenizer& tokenizer,
                                       const std::string& delimiter);

struct KvpressIds {
  std::vector<int64_t> context;   // BOS + context (BOS added unless the text has it), cut from the right
  std::vector<int64_t> question;  // no BOS
  int64_t original_context_tokens = 0;
  bool truncated = false;
  // With a query delimiter: the context's last tokens that are the question (FinchPress's window,
  // the tokens after the delimiter, which is removed as FinchPress's embedding hook removes it).
  int64_t query_tokens = 0;
};
// The context cut to max_context_length tokens from the right, as pipeline.py does (a query
// delimiter counts, as it does there: it is removed after the cut).
KvpressIds kvpress_ids(const models::Tokenizer& tokenizer, const KvpressParts& parts, int64_t max_context_length);

// Every row's ids when several rows may share a context: each context cut to max_context_length
// tokens, by default to what the model's context (`model_context`) leaves for the longest question
// asked of that context plus its max_new_tokens: one length per context, so that its questions still
// share one prefill (kvpress cuts to a fixed max_context_length: the tokenizer's model_max_length).
// Throws naming `task` and the parameter that sets the length when a question and its answer leave
// no room.
std::vector<KvpressIds> kvpress_ids_by_context(const models::Tokenizer& tokenizer, const std::vector<KvpressParts>& parts,
                                               const std::vector<int64_t>& max_new_tokens, int64_t model_context,
                                               std::optional<int64_t> max_context_length, const std::string& task,
                                               const std::string& length_param = "max_context_length");

// The model's tokenizer and own chat template as kvpress's presses read them (KVzip's repeat
// prompts): encode without special tokens; the template rendered as pipeline.py renders it.
std::shared_ptr<const policies::PromptText> model_prompt_text(const models::Tokenizer& tokenizer);

}  // namespace kvbench::tasks
