#include "tokenizers/bpe_model.hpp"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {
namespace {

uint64_t pair_key(int left, int right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

struct Symbol {
  int id;
  int prev;
  int next;
  bool removed;
};

struct QueuedMerge {
  uint32_t rank;
  int pos;
  int new_id;
  // std::priority_queue pops the largest: make the lowest rank, then the leftmost, the largest.
  bool operator<(const QueuedMerge& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

BpeModel::BpeModel(Vocab vocab, const Merges& merges, BpeOptions options,
                   const std::function<void(size_t, const std::string&)>& fail)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  int max_id = -1;
  for (const auto& [token, id] : vocab_) max_id = std::max(max_id, id);
  tokens_.resize(static_cast<size_t>(max_id + 1));
  has_token_.assign(tokens_.size(), false);
  for (const auto& [token, id] : vocab_) {
    tokens_[static_cast<size_t>(id)] = token;
    has_token_[static_cast<size_t>(id)] = true;
  }
  const size_t prefix_len = options_.continuing_subword_prefix ? options_.continuing_subword_prefix->size() : 0;
  merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto& [a, b] = merges[i];
    auto ia = vocab_.find(a);
    if (ia == vocab_.end()) fail(i, "unknown token \"" + a + "\"");
    auto ib = vocab_.find(b);
    if (ib == vocab_.end()) fail(i, "unknown token \"" + b + "\"");
    if (b.size() < prefix_len) fail(i, "\"" + b + "\" is shorter than continuing_subword_prefix");
    const std::string merged = a + b.substr(prefix_len);
    auto in = vocab_.find(merged);
    if (in == vocab_.end()) fail(i, "the merged token \"" + merged + "\" is not in the vocabulary");
    // A repeated pair keeps its last rank, as Hugging Face's HashMap collect does.
    merges_[pair_key(ia->second, ib->second)] = Merge{static_cast<uint32_t>(i), in->second};
  }
  // Single characters below U+0800 (the byte-level alphabet and more) resolve through a table.
  decorated_ = (options_.continuing_subword_prefix && !options_.continuing_subword_prefix->empty()) ||
               (options_.end_of_word_suffix && !options_.end_of_word_suffix->empty());
  char_ids_.assign(0x800, -1);
  for (const auto& [token, id] : vocab_) {
    size_t len = 0;
    const int32_t cp = token.empty() ? -1 : utf8::decode_at(token, 0, &len);
    if (cp >= 0 && cp < 0x800 && len == token.size()) char_ids_[static_cast<size_t>(cp)] = id;
  }
  if (options_.unk_token) {
    auto it = vocab_.find(*options_.unk_token);
    if (it != vocab_.end()) unk_id_ = it->second;
  }
}

std::string vocab_problem(const BpeModel::Vocab& vocab) {
  if (vocab.empty()) return "is empty: a BPE model needs at least one token";
  std::vector<std::pair<int, const std::string*>> by_id;
  by_id.reserve(vocab.size());
  for (const auto& [token, id] : vocab) by_id.emplace_back(id, &token);
  // Sorted by id, then token, so the message does not depend on hash order.
  std::sort(by_id.begin(), by_id.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : *a.second < *b.second;
  });
  for (size_t i = 1; i < by_id.size(); ++i)
    if (by_id[i].first == by_id[i - 1].first)
      return "id " + std::to_string(by_id[i].first) + " is held by both \"" + *by_id[i - 1].second + "\" and \"" +
             *by_id[i].second + "\"";
  return "";
}

std::optional<int> BpeModel::token_to_id(const std::string& token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int id) const {
  if (id < 0 || id >= static_cast<int>(tokens_.size()) || !has_token_[static_cast<size_t>(id)]) return nullptr;
  return &tokens_[static_cast<size_t>(id)];
}

const BpeModel::Merge* BpeModel::find_merge(int left, int right) const {
  auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

std::vector<int> BpeModel::merge_word(const std::string& word) const {
  // Initial symbols: one per character (with the subword prefix / word suffix where set).
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  std::optional<int> pending_unk;
  auto add = [&symbols](int id) {
    const int pos = static_cast<int>(symbols.size());
    symbols.push_back(Symbol{id, pos - 1, pos + 1, false});
  };
  for (size_t i = 0; i < word.size();) {
    const size_t n = utf8::char_length(word, i);
    const bool first = i == 0;
    const bool last = i + n >= word.size();
    if (!decorated_) {  // the common case: a table lookup, no string
      size_t len = 0;
      const int32_t cp = utf8::decode_at(word, i, &len);
      if (cp >= 0 && cp < static_cast<int32_t>(char_ids_.size()) && char_ids_[static_cast<size_t>(cp)] >= 0) {
        if (pending_unk) add(*pending_unk);
        pending_unk.reset();
        add(char_ids_[static_cast<size_t>(cp)]);
        i += n;
        continue;
      }
    }
    std::string s = word.substr(i, n);
    if (!first && options_.continuing_subword_prefix) s = *options_.continuing_subword_prefix + s;
    if (last && options_.end_of_word_suffix) s += *options_.end_of_word_suffix;
    i += n;
    auto it = vocab_.find(s);
    if (it != vocab_.end()) {
      if (pending_unk) add(*pending_unk);
      pending_unk.reset();
      add(it->second);
      continue;
    }
    if (options_.byte_fallback) {
      std::vector<int> bytes;
      for (unsigned char b : s) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        auto bt = vocab_.find(name);
        if (bt == vocab_.end()) break;
        bytes.push_back(bt->second);
      }
      if (bytes.size() == s.size()) {
        for (int id : bytes) add(id);
        continue;
      }
    }
    if (unk_id_) {
      if (pending_unk && !options_.fuse_unk) add(*pending_unk);
      pending_unk = *unk_id_;
    }
  }
  if (pending_unk) add(*pending_unk);
  if (!symbols.empty()) symbols.back().next = -1;

  std::vector<QueuedMerge> heap_storage;
  heap_storage.reserve(symbols.size());
  std::priority_queue<QueuedMerge> queue(std::less<QueuedMerge>(), std::move(heap_storage));
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    if (const Merge* m = find_merge(symbols[i].id, symbols[i + 1].id))
      queue.push(QueuedMerge{m->rank, static_cast<int>(i), m->new_id});
  while (!queue.empty()) {
    const QueuedMerge top = queue.top();
    queue.pop();
    Symbol& cur = symbols[static_cast<size_t>(top.pos)];
    if (cur.removed || cur.next < 0) continue;
    Symbol& right = symbols[static_cast<size_t>(cur.next)];
    const Merge* still = find_merge(cur.id, right.id);
    if (!still || still->new_id != top.new_id) continue;  // a stale entry
    cur.id = top.new_id;
    right.removed = true;
    cur.next = right.next;
    if (cur.next >= 0) symbols[static_cast<size_t>(cur.next)].prev = top.pos;
    if (cur.prev >= 0)
      if (const Merge* m = find_merge(symbols[static_cast<size_t>(cur.prev)].id, cur.id))
        queue.push(QueuedMerge{m->rank, cur.prev, m->new_id});
    if (cur.next >= 0)
      if (const Merge* m = find_merge(cur.id, symbols[static_cast<size_t>(cur.next)].id))
        queue.push(QueuedMerge{m->rank, top.pos, m->new_id});
  }
  std::vector<int> ids;
  for (const Symbol& s : symbols)
    if (!s.removed) ids.push_back(s.id);
  return ids;
}

void BpeModel::tokenize(const std::string& word, std::vector<int>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    auto it = vocab_.find(word);
    if (it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = word.size() < kCacheMaxWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(word);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int> ids = merge_word(word);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity) cache_.emplace(word, std::move(ids));
  }
}

}  // namespace kvbench::models
