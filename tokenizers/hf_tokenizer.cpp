#include "tokenizers/hf_tokenizer.hpp"

#include <optional>

#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {

HfTokenizer::HfTokenizer(HfPipeline pipeline, std::string format)
    : p_(std::move(pipeline)), added_(p_.added_tokens, p_.normalizer.get()), format_(std::move(format)) {
  vocab_size_ = p_.model->max_id() + 1;
  for (const AddedToken& t : added_.tokens()) vocab_size_ = std::max(vocab_size_, t.id + 1);
}

std::vector<int> HfTokenizer::encode(const std::string& text, bool add_special_tokens,
                                     const std::vector<ExtraSpecialToken>& extra) const {
  utf8::require_valid(text, "tokenizer input");
  std::optional<AddedVocabulary> with_extra;  // the added vocabulary with `extra` appended, as transformers' add_special_tokens
  if (!extra.empty()) {
    std::vector<AddedToken> tokens = added_.tokens();
    for (const ExtraSpecialToken& t : extra)
      if (!added_.id_of(t.content)) tokens.push_back({t.content, t.id, /*special=*/true});
    with_extra.emplace(std::move(tokens), p_.normalizer.get());
  }
  const AddedVocabulary& added = with_extra ? *with_extra : added_;
  std::vector<int> ids;
  std::vector<PreToken> words;
  RegexBudget budget(text.size());
  for (TextPiece& raw : added.split(text, /*normalized_tokens=*/false)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    if (p_.normalizer) p_.normalizer->normalize(raw.text);
    for (TextPiece& piece : added.split(raw.text, /*normalized_tokens=*/true)) {
      if (piece.id >= 0) {
        ids.push_back(piece.id);
        continue;
      }
      words.clear();
      words.push_back({std::move(piece.text), raw.offset == 0 && piece.offset == 0});
      if (p_.pre_tokenizer) p_.pre_tokenizer->pre_tokenize(words, budget);
      for (const PreToken& w : words) p_.model->tokenize(w.text, ids);
    }
  }
  if (p_.post_processor) p_.post_processor->process(ids, add_special_tokens);
  return ids;
}

std::string HfTokenizer::decode(const std::vector<int>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int id : ids) {
    if (const AddedToken* added = added_.by_id(id)) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
    } else if (const std::string* t = p_.model->id_to_token(id)) {
      tokens.push_back(*t);
    }  // an unknown id decodes to nothing
  }
  if (p_.decoder) return p_.decoder->decode(std::move(tokens));
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
  return out;
}

std::optional<int> HfTokenizer::token_to_id(const std::string& token) const {
  if (auto id = added_.id_of(token)) return id;
  return p_.model->token_to_id(token);
}

std::string HfTokenizer::piece(int id) const {
  if (const AddedToken* added = added_.by_id(id)) return added->content;
  const std::string* t = p_.model->id_to_token(id);
  return t ? *t : std::string();
}

bool HfTokenizer::is_special(int id) const {
  const AddedToken* added = added_.by_id(id);
  return added && added->special;
}

}  // namespace kvbench::models
