#include "tokenizers/onig_regex.hpp"

#include <oniguruma.h>

#include <nlohmann/json.hpp>

#include <mutex>
#include <stdexcept>

#include "tokenizers/model_error.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {
namespace {

// A text's budget: far above what real patterns take (Llama-3's on a long run of spaces: ~2 steps
// a byte), and about two seconds of backtracking on a 46 KB text.
constexpr uint64_t kBudgetBase = uint64_t{1} << 20;
constexpr uint64_t kBudgetPerByte = 1024;
// A search's first allowance; each retry of the search gets four times more.
constexpr uint64_t kFirstAllowance = 64;

void initialize_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

const UChar* bytes(const std::string& s) { return reinterpret_cast<const UChar*>(s.data()); }

struct RegionDeleter {
  void operator()(OnigRegion* r) const { onig_region_free(r, 1); }
};

struct MatchParamDeleter {
  void operator()(OnigMatchParam* p) const { onig_free_match_param(p); }
};

std::string error_text(int rc) {
  UChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
  onig_error_code_to_str(message, rc);
  return reinterpret_cast<const char*>(message);
}

}  // namespace

RegexBudget::RegexBudget(size_t text_bytes)
    : text_bytes_(text_bytes), total_(kBudgetBase + kBudgetPerByte * text_bytes), left_(total_) {}

OnigRegex::OnigRegex(const std::string& pattern, RegexSource source)
    : regex_(nullptr), pattern_(pattern), source_(std::move(source)) {
  initialize_once();
  regex_t* compiled = nullptr;
  OnigErrorInfo info;
  const int rc = onig_new(&compiled, bytes(pattern), bytes(pattern) + pattern.size(), ONIG_OPTION_NONE,
                          ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
  if (rc != ONIG_NORMAL) {
    UChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
    onig_error_code_to_str(message, rc, &info);
    throw std::invalid_argument(std::string("invalid regex: ") + reinterpret_cast<const char*>(message));
  }
  regex_ = compiled;
}

OnigRegex::~OnigRegex() { onig_free(static_cast<regex_t*>(regex_)); }

void OnigRegex::fail(const std::string& what) const {
  const std::string quoted = nlohmann::json(pattern_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  throw ModelLoadError(source_.file, source_.field + ": pattern " + quoted + ": " + what);
}

// Oniguruma does not say how many steps a search took, only whether it stayed within its limit. So
// a search first gets a small allowance and is repeated with four times more while it runs out,
// each try charged its whole allowance: a search costs the budget under about five times the steps
// it took, plus the first allowance, and never more than the budget holds.
int OnigRegex::search(const std::string& text, size_t from, void* region, void* param, RegexBudget& budget) const {
  auto* match_param = static_cast<OnigMatchParam*>(param);
  const UChar* begin = bytes(text);
  const UChar* end = begin + text.size();
  for (uint64_t allowance = kFirstAllowance;; allowance *= 4) {
    const uint64_t granted = std::min(allowance, budget.left());
    if (granted == 0) break;  // 0 would mean "no limit" to Oniguruma
    onig_set_retry_limit_in_search_of_match_param(match_param, static_cast<unsigned long>(granted));
    const int rc = onig_search_with_param(static_cast<regex_t*>(regex_), begin, end, begin + from, end,
                                          static_cast<OnigRegion*>(region), ONIG_OPTION_NONE, match_param);
    budget.spend(granted);
    if (rc != ONIGERR_RETRY_LIMIT_IN_SEARCH_OVER) return rc;
    if (granted < allowance) break;
  }
  fail("more than " + std::to_string(budget.total()) + " backtracking steps on a text of " +
       std::to_string(budget.text_bytes()) +
       " bytes, the budget of one text (a pattern that backtracks catastrophically)");
}

std::vector<std::pair<size_t, size_t>> OnigRegex::find_all(const std::string& text, RegexBudget& budget) const {
  std::vector<std::pair<size_t, size_t>> out;
  std::unique_ptr<OnigRegion, RegionDeleter> region(onig_region_new());
  std::unique_ptr<OnigMatchParam, MatchParamDeleter> param(onig_new_match_param());
  onig_initialize_match_param(param.get());
  size_t from = 0;
  bool have_last = false;
  size_t last_end = 0;
  while (from <= text.size()) {
    const int rc = search(text, from, region.get(), param.get(), budget);
    if (rc == ONIG_MISMATCH) break;
    if (rc < 0) fail("regex search failed: " + error_text(rc));  // e.g. one match over Oniguruma's retry limit
    const auto b = static_cast<size_t>(region->beg[0]);
    const auto e = static_cast<size_t>(region->end[0]);
    if (b == e && have_last && last_end == e) {
      if (from >= text.size()) break;
      from += utf8::char_length(text, from);
      continue;
    }
    out.emplace_back(b, e);
    from = e;
    last_end = e;
    have_last = true;
  }
  return out;
}

}  // namespace kvbench::models
