#include "policies/cascade_book.hpp"

#include <limits>
#include <stdexcept>

namespace kvbench::policies::cascade {

Book::Book(int64_t sinks, std::vector<int64_t> capacities, int64_t base, bool token_selection, bool eager_fill)
    : n_sinks_(sinks), capacities_(std::move(capacities)), token_selection_(token_selection) {
  if (sinks < 0 || base < 2) throw std::invalid_argument("cascade: need sinks >= 0 and base >= 2");
  int64_t period = 1;
  for (int64_t c : capacities_) {
    if (c < 1) throw std::invalid_argument("cascade: every sub-cache needs capacity >= 1");
    periods_.push_back(period);
    period = period > std::numeric_limits<int64_t>::max() / base ? std::numeric_limits<int64_t>::max() : period * base;
  }
  cascades_.resize(capacities_.size());
  // The reference (cascading_cache.py, eager_fill) accepts everywhere while the 0-based token
  // index is <= max_seq_len + sinks, i.e. non-sink step t <= |C|.
  if (eager_fill) {
    eager_until_ = 0;
    for (int64_t c : capacities_) eager_until_ += c;
  }
}

bool Book::accepting(size_t i) const { return seen_ % periods_.at(i) == 0; }

std::optional<Token> Book::insert(const Token& incoming, const Referee& referee) {
  if (static_cast<int64_t>(sinks_.size()) < n_sinks_) {
    sinks_.push_back(incoming);
    return std::nullopt;
  }
  Token item = incoming;
  std::vector<bool> accepts(cascades_.size());
  const bool eager = seen_ <= eager_until_;
  for (size_t i = 0; i < cascades_.size(); ++i) accepts[i] = eager || accepting(i);
  ++seen_;
  for (size_t i = 0; i < cascades_.size(); ++i) {
    std::deque<Token>& buf = cascades_[i];
    if (accepts[i]) {
      buf.push_back(item);  // cases 1–2: accept; when full, the oldest moves on to the next sub-cache
      if (static_cast<int64_t>(buf.size()) <= capacities_[i]) return std::nullopt;
      item = buf.front();
      buf.pop_front();
      continue;
    }
    if (buf.empty()) {  // eager add to an empty sub-cache rather than dropping the token
      buf.push_back(item);
      return std::nullopt;
    }
    // Cases 3–4: not accepting; under token selection the incoming token replaces the newest one
    // if the referee says so (by default: its attention EMA is at least as high); otherwise, and
    // always without token selection, it is discarded.
    if (!token_selection_) return item;
    const Contest contest = referee ? referee(item, buf.back())
                            : item.score >= buf.back().score ? Contest{item, buf.back()}
                                                              : Contest{buf.back(), item};
    buf.back() = contest.stays;
    return contest.leaves;
  }
  return item;  // evicted from the last sub-cache: gone
}

int64_t Book::size() const {
  int64_t total = static_cast<int64_t>(sinks_.size());
  for (const auto& c : cascades_) total += static_cast<int64_t>(c.size());
  return total;
}

std::vector<Token*> Book::in_order() {
  std::vector<Token*> out;
  for (Token& t : sinks_) out.push_back(&t);
  for (size_t i = cascades_.size(); i-- > 0;)
    for (Token& t : cascades_[i]) out.push_back(&t);
  return out;
}

std::vector<int64_t> split_capacity(int64_t total, int64_t n) {
  if (n < 1 || total < n) throw std::invalid_argument("cascade: need 1 <= sub-caches <= window size");
  std::vector<int64_t> caps(n, total / n);
  for (int64_t i = 0; i < total % n; ++i) ++caps[i];
  return caps;
}

int64_t approximate_context_length(const std::vector<int64_t>& capacities, int64_t base) {
  int64_t total = 0, factor = 1;
  for (int64_t c : capacities) {
    total += c * factor;
    factor *= base;
  }
  return total;
}

}  // namespace kvbench::policies::cascade
