#include "models/onig_regex.hpp"

#include <oniguruma.h>

#include <mutex>
#include <stdexcept>

#include "models/utf8_text.hpp"

namespace kvbench::models {
namespace {

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

}  // namespace

OnigRegex::OnigRegex(const std::string& pattern) : regex_(nullptr) {
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

std::vector<std::pair<size_t, size_t>> OnigRegex::find_all(const std::string& text) const {
  std::vector<std::pair<size_t, size_t>> out;
  std::unique_ptr<OnigRegion, RegionDeleter> region(onig_region_new());
  const UChar* begin = bytes(text);
  const UChar* end = begin + text.size();
  size_t from = 0;
  bool have_last = false;
  size_t last_end = 0;
  while (from <= text.size()) {
    const int rc = onig_search(static_cast<regex_t*>(regex_), begin, end, begin + from, end, region.get(), ONIG_OPTION_NONE);
    if (rc == ONIG_MISMATCH) break;
    if (rc < 0) {  // e.g. ONIG_ERROR_RETRY_LIMIT_IN_MATCH_OVER on a pathological pattern
      UChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
      onig_error_code_to_str(message, rc);
      throw std::runtime_error(std::string("regex search failed: ") + reinterpret_cast<const char*>(message));
    }
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
