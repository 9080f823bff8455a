#include "tokenizers/hf_normalizer.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {
namespace {

class UnicodeNormalizer : public HfNormalizer {
 public:
  explicit UnicodeNormalizer(int options) : options_(options) {}
  // ASCII characters are stable under every normal form and never compose with what precedes
  // them, so only each run of non-ASCII characters, with the one character before it (which may
  // compose with a following combining mark), needs normalizing.
  void normalize(std::string& text) const override {
    size_t i = 0;
    while (i < text.size() && static_cast<unsigned char>(text[i]) < 0x80) ++i;
    if (i == text.size()) return;
    std::string out;
    out.reserve(text.size() + 16);
    size_t copied = 0;
    while (i < text.size()) {
      const size_t begin = i > 0 ? i - 1 : 0;
      size_t end = i;
      while (end < text.size() && static_cast<unsigned char>(text[end]) >= 0x80) ++end;
      out.append(text, copied, begin - copied);
      out += normalize_span(text.data() + begin, end - begin);
      copied = end;
      i = end;
      while (i < text.size() && static_cast<unsigned char>(text[i]) < 0x80) ++i;
    }
    out.append(text, copied, std::string::npos);
    text.swap(out);
  }

 private:
  // utf8proc_map orders each run of combining marks by swapping neighbours: quadratic in the run
  // (150,000 marks took minutes). The same steps with a sort: decompose each character, order
  // every run of non-starters by combining class (stably, as those swaps do), then let utf8proc
  // compose and encode.
  std::string normalize_span(const char* data, size_t size) const {
    const auto* in = reinterpret_cast<const utf8proc_uint8_t*>(data);
    const auto options = static_cast<utf8proc_option_t>(options_);
    std::vector<utf8proc_int32_t> chars;
    chars.reserve(size + 1);
    int boundclass = UTF8PROC_BOUNDCLASS_START;
    for (size_t at = 0; at < size;) {
      utf8proc_int32_t cp = 0;
      const utf8proc_ssize_t n = utf8proc_iterate(in + at, static_cast<utf8proc_ssize_t>(size - at), &cp);
      if (n < 0) fail(n);
      at += static_cast<size_t>(n);
      const size_t end = chars.size();
      constexpr utf8proc_ssize_t kRoom = 32;  // every decomposition fits today (U+FDFA's is 18)
      chars.resize(end + kRoom);
      utf8proc_ssize_t m = utf8proc_decompose_char(cp, chars.data() + end, kRoom, options, &boundclass);
      if (m > kRoom) {
        chars.resize(end + static_cast<size_t>(m));
        m = utf8proc_decompose_char(cp, chars.data() + end, m, options, &boundclass);
      }
      if (m < 0) fail(m);
      chars.resize(end + static_cast<size_t>(m));
    }
    order_combining_marks(chars);
    const auto length = static_cast<utf8proc_ssize_t>(chars.size());
    chars.push_back(0);  // utf8proc_reencode writes UTF-8 in place, then a NUL byte
    const utf8proc_ssize_t n = utf8proc_reencode(chars.data(), length, options);
    if (n < 0) fail(n);
    return std::string(reinterpret_cast<const char*>(chars.data()), static_cast<size_t>(n));
  }

  static int combining_class(utf8proc_int32_t c) { return utf8proc_get_property(c)->combining_class; }

  // Canonical ordering: each run of characters with a nonzero combining class sorted by it.
  static void order_combining_marks(std::vector<utf8proc_int32_t>& chars) {
    for (size_t i = 0; i < chars.size();) {
      size_t j = i;
      while (j < chars.size() && combining_class(chars[j]) != 0) ++j;
      if (j - i > 1)
        std::stable_sort(chars.begin() + i, chars.begin() + j, [](utf8proc_int32_t a, utf8proc_int32_t b) {
          return combining_class(a) < combining_class(b);
        });
      i = j > i ? j : i + 1;
    }
  }

  [[noreturn]] static void fail(utf8proc_ssize_t code) {
    throw std::invalid_argument(std::string("normalizer: ") + utf8proc_errmsg(code));
  }

  int options_;
};

class PrependNormalizer : public HfNormalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer : public HfNormalizer {
 public:
  ReplaceNormalizer(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  void normalize(std::string& text) const override {
    std::string out;
    size_t at = 0;
    for (size_t hit; (hit = text.find(from_, at)) != std::string::npos; at = hit + from_.size()) {
      out.append(text, at, hit - at);
      out += to_;
    }
    out.append(text, at, std::string::npos);
    text.swap(out);
  }

 private:
  std::string from_, to_;
};

class SequenceNormalizer : public HfNormalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<HfNormalizer>> steps) : steps_(std::move(steps)) {}
  void normalize(std::string& text) const override {
    for (const auto& s : steps_) s->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<HfNormalizer>> steps_;
};

}  // namespace

std::unique_ptr<HfNormalizer> parse_normalizer(const JsonFields& f) {
  const std::string type = f.string("type");
  const int compose = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
  const int decompose = UTF8PROC_STABLE | UTF8PROC_DECOMPOSE;
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    f.allow_only({"type"});
    int options = type.find('C') != std::string::npos ? compose : decompose;
    if (type[2] == 'K') options |= UTF8PROC_COMPAT;
    return std::make_unique<UnicodeNormalizer>(options);
  }
  if (type == "Prepend") {
    f.allow_only({"type", "prepend"});
    return std::make_unique<PrependNormalizer>(f.string("prepend"));
  }
  if (type == "Replace") {
    f.allow_only({"type", "pattern", "content"});
    return std::make_unique<ReplaceNormalizer>(replace_pattern_string(f), f.string("content"));
  }
  if (type == "Sequence") {
    f.allow_only({"type", "normalizers"});
    std::vector<std::unique_ptr<HfNormalizer>> steps;
    for (size_t i = 0; i < f.array("normalizers").size(); ++i) steps.push_back(parse_normalizer(f.element("normalizers", i)));
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  f.fail("type", "unknown \"" + type + "\" (supported: NFC, NFD, NFKC, NFKD, Prepend, Replace, Sequence)");
}

}  // namespace kvbench::models
