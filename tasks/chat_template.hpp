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
// Special tokens written as text (<|eot_id|>, <|im_start|>) only become single tokens with a
// tokenizer that knows them.
#include <string>
#include <vector>

namespace kvbench::tasks {

// Throws std::invalid_argument listing the known names.
std::string apply_chat_template(const std::string& name, const std::string& prompt);
std::vector<std::string> chat_template_names();

}  // namespace kvbench::tasks
