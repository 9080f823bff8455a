#pragma once
// Chat templates for instruction-tuned models, applied to a finished (already truncated) prompt as
// LongBench's build_chat does. The BOS token is never part of a template: the tokenizer adds it
// when the prompt is encoded (so no template gives a double BOS).
//
//   none       the prompt unchanged (base models; stories260K)
//   llama2     "[INST]{prompt}[/INST]"            LongBench pred.py build_chat for llama2-*-chat
//              (no spaces, no system prompt: the reference's exact string)
//   llama2-meta "[INST] {prompt} [/INST]"         Meta's Llama-2-chat format without a system prompt
//   llama2-litm "[INST] <<SYS>>\n{Llama-2 default system prompt}\n<</SYS>>\n\n{prompt} [/INST]"
//              lost-in-the-middle get_qa_responses_from_llama_2.py format_chat_prompt (its leading
//              literal "<s>" is the BOS the tokenizer adds)
//   llama3     "<|start_header_id|>user<|end_header_id|>\n\n{prompt}<|eot_id|>"
//              "<|start_header_id|>assistant<|end_header_id|>\n\n"   (Meta-Llama-3-Instruct HF
//              chat_template with add_generation_prompt; the prompt is trimmed as its `| trim`)
//   mistral    "[INST] {prompt} [/INST]"           Mistral-7B-Instruct v0.1/v0.2 HF chat_template
//   qwen       "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
//              "{prompt}<|im_end|>\n<|im_start|>assistant\n"   Qwen1.5/Qwen2 ChatML default
//   vicuna     "A chat between a curious user and an artificial intelligence assistant. The
//              assistant gives helpful, detailed, and polite answers to the user's questions. USER:
//              {prompt} ASSISTANT:"   fastchat vicuna_v1.1 (LongBench: longchat, vicuna)
//   model      the model's own chat_template (tokenizer_config.json beside its tokenizer), rendered
//              as transformers' apply_chat_template([{"role": "user", "content": prompt}],
//              add_generation_prompt=True) — what kvpress feeds the model. Unlike the names above,
//              its text carries the template's own special tokens (Llama-3's <|begin_of_text|>), so
//              it is encoded WITHOUT adding special tokens again (see template_carries_special_tokens).
// Special tokens written as text (<|eot_id|>, <|im_start|>) only become single tokens with a
// tokenizer that knows them.
#include <string>
#include <vector>

namespace kvbench::models {
class Tokenizer;
}

namespace kvbench::tasks {

inline constexpr const char* kModelChatTemplate = "model";

// Throws std::invalid_argument listing the known names ("model" needs the tokenizer overload).
std::string apply_chat_template(const std::string& name, const std::string& prompt);
// Any name, "model" included: the model's template is found beside `tokenizer`'s file; a model
// without one is a ModelLoadError naming the file.
std::string apply_chat_template(const std::string& name, const std::string& prompt, const models::Tokenizer& tokenizer);
std::vector<std::string> chat_template_names();

// True when the template's text already holds the model's special tokens (BOS), so encoding it
// must not add them again ("model").
bool template_carries_special_tokens(const std::string& name);

// Whether encoding `prompt` must add the tokenizer's special tokens: yes, unless the model's own
// template wrote its BOS and the text still starts with it (a middle cut decodes without special
// tokens, as pred.py does, and then the BOS must be added again). One BOS either way.
bool encode_adds_special_tokens(const std::string& chat_template, const std::string& prompt,
                                const models::Tokenizer& tokenizer);

}  // namespace kvbench::tasks
