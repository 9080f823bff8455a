#include "tasks/chat_template.hpp"

#include <stdexcept>

#include "models/model_chat_template.hpp"
#include "tokenizers/tokenizer.hpp"

namespace kvbench::tasks {
namespace {

// Jinja's `trim`: Python str.strip() on ASCII whitespace (enough for the templates' purpose).
std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  const auto first = s.find_first_not_of(ws);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(ws) - first + 1);
}

}  // namespace

std::vector<std::string> chat_template_names() {
  return {"none", "llama2", "llama2-meta", "llama3", "mistral", "qwen", "vicuna", "llama2-litm", kModelChatTemplate};
}

bool template_carries_special_tokens(const std::string& name) { return name == kModelChatTemplate; }

bool encode_adds_special_tokens(const std::string& chat_template, const std::string& prompt,
                                const models::Tokenizer& tokenizer) {
  if (!template_carries_special_tokens(chat_template)) return true;
  if (tokenizer.bos_id() < 0) return false;  // Qwen: the template's text is all there is
  return prompt.rfind(tokenizer.piece(tokenizer.bos_id()), 0) != 0;
}

std::string apply_chat_template(const std::string& name, const std::string& prompt, const models::Tokenizer& tokenizer) {
  if (name != kModelChatTemplate) return apply_chat_template(name, prompt);
  return models::ModelChatTemplate::for_tokenizer(tokenizer.path())->render_user_prompt(prompt);
}

std::string apply_chat_template(const std::string& name, const std::string& prompt) {
  if (name == "none") return prompt;
  if (name == kModelChatTemplate)
    throw std::invalid_argument("chat template \"model\" (the model's own) needs the model's tokenizer");
  if (name == "llama2") return "[INST]" + prompt + "[/INST]";
  if (name == "llama2-meta" || name == "mistral") return "[INST] " + prompt + " [/INST]";
  if (name == "llama2-litm")
    return "[INST] <<SYS>>\nYou are a helpful, respectful and honest assistant. Always answer as helpfully as possible, "
           "while being safe. Please ensure that your responses are socially unbiased and positive in nature. If a "
           "question does not make any sense, or is not factually coherent, explain why instead of answering something "
           "not correct. If you don't know the answer to a question, please don't share false information.\n<</SYS>>\n\n" +
           prompt + " [/INST]";
  if (name == "llama3")
    return "<|start_header_id|>user<|end_header_id|>\n\n" + trim(prompt) +
           "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
  if (name == "qwen")
    return "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n" + prompt +
           "<|im_end|>\n<|im_start|>assistant\n";
  if (name == "vicuna")
    return "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, "
           "detailed, and polite answers to the user's questions. USER: " +
           prompt + " ASSISTANT:";
  std::string known;
  for (const auto& n : chat_template_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown chat template '" + name + "' (known: " + known + ")");
}

}  // namespace kvbench::tasks
