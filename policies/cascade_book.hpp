#pragma once
// The bookkeeping of the Cascading KV cache (cascading-kv-cache.txt §3.1, Alg. 1, Fig. 4): a sink
// buffer and N sub-caches, each a circular buffer (deque) of (position, score). Token ids only:
// the policy turns the book's content into LayerCache::keep indices. Kept free of tensors so
// that long synthetic streams can be simulated cheaply (eq. 4's reach).
#include <cstdint>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

namespace kvbench::policies::cascade {

struct Token {
  int64_t position = 0;  // or any id the caller gives its tokens (the policy: ids whose positions live on the device)
  double score = 0;      // EMA of received attention
};

// Cases 3–4: a sub-cache that is not accepting keeps either the incoming token or its own newest
// one; the other leaves the book. Nothing else Alg. 1 does depends on scores.
struct Contest {
  Token stays, leaves;
};
using Referee = std::function<Contest(const Token& incoming, const Token& newest)>;

class Book {
 public:
  // capacities[i] = |C_i|; sub-cache i (0-based) accepts at non-sink step t iff t % base^i == 0
  // (base 2: one in 2^(i−1) in the paper's 1-based numbering; 3, 4: Table 5's alternatives).
  // eager_fill (the reference's default): every sub-cache accepts while t <= Σ|C_i|, so the
  // cascade holds every token until it is full instead of thinning from the start.
  Book(int64_t sinks, std::vector<int64_t> capacities, int64_t base, bool token_selection, bool eager_fill = false);

  // Alg. 1 for one incoming token. Returns the token that left the book, if one did. `referee`
  // decides cases 3–4 under token selection (default: by score, ties to the incoming token, as
  // the reference kernel compares score >= old_score).
  std::optional<Token> insert(const Token& token, const Referee& referee = {});

  int64_t size() const;
  int64_t non_sink_seen() const { return seen_; }
  bool accepting(size_t cascade) const;  // for the next incoming non-sink token
  const std::deque<Token>& sinks() const { return sinks_; }
  const std::deque<Token>& cascade(size_t i) const { return cascades_.at(i); }
  size_t n_cascades() const { return cascades_.size(); }
  // Every kept token, oldest first: sinks, then the last sub-cache … the first one. Tokens of a
  // later sub-cache are always older than those of an earlier one, so this is position order.
  std::vector<Token*> in_order();

 private:
  int64_t n_sinks_;
  std::vector<int64_t> capacities_;
  std::vector<int64_t> periods_;  // base^i, saturated
  bool token_selection_;
  int64_t eager_until_ = -1;  // non-sink steps t <= this are accepted everywhere; -1 = never
  std::deque<Token> sinks_;
  std::vector<std::deque<Token>> cascades_;
  int64_t seen_ = 0;  // non-sink tokens inserted so far
};

// |C| tokens split into n sub-caches of |C|/n (the first ones take the remainder).
std::vector<int64_t> split_capacity(int64_t total, int64_t n);

// eq. 4 generalised: Σ_i |C_i|·base^i, the approximate context length.
int64_t approximate_context_length(const std::vector<int64_t>& capacities, int64_t base);

}  // namespace kvbench::policies::cascade
