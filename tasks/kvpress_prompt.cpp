#include "tasks/kvpress_prompt.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "models/model_chat_template.hpp"
#include "tasks/chat_template.hpp"

namespace kvbench::tasks {
namespace {

// pipeline.py's apply_chat_template call: one user message, add_generation_prompt=True, and
// enable_thinking=False (its default), which Qwen3's template answers with an empty think block.
std::string render(const std::string& chat_template, const std::string& text, const models::Tokenizer& tokenizer) {
  if (chat_template != kModelChatTemplate) return apply_chat_template(chat_template, text, tokenizer);
  const nlohmann::ordered_json messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", text}}});
  return models::ModelChatTemplate::for_tokenizer(tokenizer.path())->render(messages, true, {{"enable_thinking", false}});
}

}  // namespace

KvpressParts kvpress_parts(const std::string& context, const std::string& question, const std::string& answer_prefix,
                           const std::string& chat_template, const models::Tokenizer& tokenizer) {
  KvpressParts parts;
  parts.context = context;
  std::string suffix = "\n";  // pipeline.py without a chat template: separates question and answer
  if (chat_template != "none") {
    const std::string separator(context.size() + 10, '#');
    const std::string rendered = render(chat_template, context + separator, tokenizer);
    const size_t cut = rendered.find(separator);
    if (cut == std::string::npos) throw std::logic_error("kvpress: the chat template lost the separator");
    parts.context = rendered.substr(0, cut);
    parts.context_has_bos = !encode_adds_special_tokens(chat_template, parts.context, tokenizer);
    suffix = rendered.substr(cut + separator.size());
  }
  parts.question = question + suffix + answer_prefix;
  return parts;
}

KvpressParts kvpress_query_aware_parts(const std::string& context, const std::string& question, const std::string& answer_prefix,
                                       const std::string& chat_template, const models::Tokenizer& tokenizer,
                                       const std::string& delimiter) {
  KvpressParts parts = kvpress_parts(context + delimiter + question, "", answer_prefix, chat_template, tokenizer);
  parts.query_delimiter = delimiter;
  return parts;
}

KvpressIds kvpress_ids(const models::Tokenizer& tokenizer, const KvpressParts& parts, int64_t max_context_length) {
  if (max_context_length < 1) throw std::invalid_argument("kvpress: max_context_length must be >= 1");
  KvpressIds ids;
  // pipeline.py encodes bos_token + context, or the rendered template, without adding specials.
  const bool add_bos = !parts.context_has_bos;
  const std::vector<int> context = parts.query_delimiter.empty() ? tokenizer.encode(parts.context, add_bos)
                                                                 : tokenizer.encode(parts.context, add_bos, {parts.query_delimiter});
  const std::vector<int> question = tokenizer.encode(parts.question, /*add_bos=*/false);
  ids.original_context_tokens = static_cast<int64_t>(context.size());
  ids.truncated = ids.original_context_tokens > max_context_length;
  ids.context.assign(context.begin(), context.begin() + std::min<int64_t>(max_context_length, ids.original_context_tokens));
  ids.question.assign(question.begin(), question.end());
  if (!parts.query_delimiter.empty()) {
    // FinchPress's embedding hook: exactly one delimiter, a question after it, and the delimiter
    // dropped before the model sees the prompt.
    const int delimiter = tokenizer.encode(parts.query_delimiter, false, {parts.query_delimiter}).at(0);
    const auto at = std::find(ids.context.begin(), ids.context.end(), delimiter);
    const std::string where = "kvpress (query-aware, delimiter " + parts.query_delimiter + "): ";
    if (std::count(ids.context.begin(), ids.context.end(), delimiter) != 1)
      throw std::invalid_argument(where + (at == ids.context.end() ? "the context was cut before the question; raise max_context_length"
                                                                    : "the text holds the delimiter itself"));
    ids.query_tokens = static_cast<int64_t>(ids.context.end() - at) - 1;
    if (ids.query_tokens == 0) throw std::invalid_argument(where + "no question tokens after the delimiter");
    ids.context.erase(at);
  }
  return ids;
}

std::vector<KvpressIds> kvpress_ids_by_context(const models::Tokenizer& tokenizer, const std::vector<KvpressParts>& parts,
                                               const std::vector<int64_t>& max_new_tokens, int64_t model_context,
                                               std::optional<int64_t> max_context_length, const std::string& task,
                                               const std::string& length_param) {
  struct Shared {
    int64_t room = 0;               // the tokens the context may keep
    std::optional<KvpressIds> cut;  // encoded and cut once
  };
  std::map<std::string, Shared> by_context;
  std::vector<std::vector<int>> questions;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int64_t question_tokens = static_cast<int64_t>(questions.emplace_back(tokenizer.encode(parts[i].question, false)).size());
    const int64_t left = model_context - question_tokens - max_new_tokens.at(i);
    if (!max_context_length && left < 1)
      throw std::invalid_argument(task + " (kvpress): the question (" + std::to_string(question_tokens) + " tokens) and " +
                                  std::to_string(max_new_tokens[i]) + " new tokens leave no room in the model's context; set task_params." + length_param);
    auto [it, fresh] = by_context.try_emplace(parts[i].context, Shared{left, std::nullopt});
    if (!fresh) it->second.room = std::min(it->second.room, left);
  }
  std::vector<KvpressIds> ids;
  for (size_t i = 0; i < parts.size(); ++i) {
    Shared& shared = by_context.at(parts[i].context);
    if (!shared.cut) shared.cut = kvpress_ids(tokenizer, parts[i], max_context_length.value_or(shared.room));
    KvpressIds& row = ids.emplace_back(*shared.cut);
    row.question.assign(questions[i].begin(), questions[i].end());
  }
  return ids;
}

std::shared_ptr<const policies::PromptText> model_prompt_text(const models::Tokenizer& tokenizer) {
  auto text = std::make_shared<policies::PromptText>();
  text->encode_with_specials = [&tokenizer](const std::string& s) {
    const std::vector<int> ids = tokenizer.encode(s, /*add_special_tokens=*/true);
    return std::vector<int64_t>(ids.begin(), ids.end());
  };
  text->encode = [&tokenizer](const std::string& s) {
    const std::vector<int> ids = tokenizer.encode(s, /*add_special_tokens=*/false);
    return std::vector<int64_t>(ids.begin(), ids.end());
  };
  text->chat = [&tokenizer](const std::string& message) -> std::optional<std::string> {
    if (!tokenizer.config().chat_template) return std::nullopt;
    return render(kModelChatTemplate, message, tokenizer);
  };
  return text;
}

}  // namespace kvbench::tasks
