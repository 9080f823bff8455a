#include "tokenizers/added_vocabulary.hpp"

#include "tokenizers/hf_normalizer.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {
namespace {

// The code point that ends before byte `end` (walking back over continuation bytes).
int32_t char_before(const std::string& s, size_t end) {
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<unsigned char>(s[begin]) & 0xC0) == 0x80) --begin;
  size_t n = 0;
  return utf8::decode_at(s, begin, &n);
}

int32_t char_at(const std::string& s, size_t at) {
  size_t n = 0;
  return utf8::decode_at(s, at, &n);
}

}  // namespace

void AddedVocabulary::Trie::add(const std::string& key, int token) {
  int node = 0;
  for (unsigned char c : key) {
    auto it = nodes[static_cast<size_t>(node)].next.find(c);
    if (it == nodes[static_cast<size_t>(node)].next.end()) {
      nodes.push_back(Node{});
      const int created = static_cast<int>(nodes.size()) - 1;
      nodes[static_cast<size_t>(node)].next[c] = created;
      node = created;
    } else {
      node = it->second;
    }
  }
  if (nodes[static_cast<size_t>(node)].token < 0) nodes[static_cast<size_t>(node)].token = token;
  first_byte[static_cast<unsigned char>(key[0])] = true;
}

int AddedVocabulary::Trie::longest(const std::string& text, size_t at, size_t* length) const {
  if (!first_byte[static_cast<unsigned char>(text[at])]) return -1;
  int node = 0;
  int best = -1;
  for (size_t i = at; i < text.size(); ++i) {
    const auto& next = nodes[static_cast<size_t>(node)].next;
    auto it = next.find(static_cast<unsigned char>(text[i]));
    if (it == next.end()) break;
    node = it->second;
    if (nodes[static_cast<size_t>(node)].token >= 0) {
      best = nodes[static_cast<size_t>(node)].token;
      *length = i + 1 - at;
    }
  }
  return best;
}

AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, const HfNormalizer* normalizer) : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& t = tokens_[i];
    by_id_.emplace(t.id, i);
    id_of_.emplace(t.content, t.id);
    if (t.content.empty()) continue;
    if (t.normalized) {
      std::string key = t.content;
      if (normalizer) normalizer->normalize(key);
      if (!key.empty()) normalized_.add(key, static_cast<int>(i));
    } else {
      raw_.add(t.content, static_cast<int>(i));
    }
  }
}

std::vector<TextPiece> AddedVocabulary::split(const std::string& text, bool normalized_tokens) const {
  const Trie& trie = normalized_tokens ? normalized_ : raw_;
  std::vector<TextPiece> out;
  if (trie.nodes.size() == 1) {  // no tokens of this kind
    if (!text.empty()) out.push_back({text, -1, 0});
    return out;
  }
  size_t done = 0;  // text before `done` is already emitted
  for (size_t at = 0; at < text.size();) {
    size_t length = 0;
    const int index = trie.longest(text, at, &length);
    if (index < 0) {
      ++at;
      continue;
    }
    const AddedToken& tok = tokens_[static_cast<size_t>(index)];
    size_t start = at;
    size_t stop = at + length;
    at = stop;  // matches never overlap, whether or not this one is kept
    if (tok.single_word) {
      const bool start_ok = start == 0 || !utf8::is_word_character(char_before(text, start));
      const bool stop_ok = stop == text.size() || !utf8::is_word_character(char_at(text, stop));
      if (!start_ok || !stop_ok) continue;
    }
    if (tok.lstrip) {
      size_t s = start;
      while (s > done) {
        size_t b = s - 1;
        while (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80) --b;
        if (!utf8::is_whitespace(char_at(text, b))) break;
        s = b;
      }
      start = s;
    }
    if (tok.rstrip) {
      while (stop < text.size()) {
        size_t n = 0;
        const int32_t c = utf8::decode_at(text, stop, &n);
        if (!utf8::is_whitespace(c)) break;
        stop += n;
      }
      at = stop;
    }
    if (done < start) out.push_back({text.substr(done, start - done), -1, done});
    out.push_back({"", tok.id, start});
    done = stop;
  }
  if (done < text.size()) out.push_back({text.substr(done), -1, done});
  return out;
}

const AddedToken* AddedVocabulary::by_id(int id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<int> AddedVocabulary::id_of(const std::string& content) const {
  auto it = id_of_.find(content);
  if (it == id_of_.end()) return std::nullopt;
  return it->second;
}

}  // namespace kvbench::models
