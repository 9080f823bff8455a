#include "models/hf_normalizer.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <vector>

#include "models/utf8_text.hpp"

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
  std::string normalize_span(const char* data, size_t size) const {
    utf8proc_uint8_t* out = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(data), static_cast<utf8proc_ssize_t>(size),
                                            &out, static_cast<utf8proc_option_t>(options_));
    if (n < 0) throw std::invalid_argument(std::string("normalizer: ") + utf8proc_errmsg(n));
    std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
    std::free(out);
    return result;
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
