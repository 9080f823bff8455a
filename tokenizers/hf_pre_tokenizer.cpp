#include "tokenizers/hf_pre_tokenizer.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "tokenizers/byte_level.hpp"
#include "tokenizers/onig_regex.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {
namespace {

using Span = std::pair<size_t, size_t>;

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// [begin, end) pieces covering `text`, each flagged as a match of the pattern or not.
struct Piece {
  Span span;
  bool match;
};

std::vector<Piece> pieces_of(const std::string& text, const std::vector<Span>& matches) {
  std::vector<Piece> out;
  size_t prev = 0;
  for (const Span& m : matches) {
    if (prev != m.first) out.push_back({{prev, m.first}, false});
    out.push_back({m, true});
    prev = m.second;
  }
  if (prev != text.size()) out.push_back({{prev, text.size()}, false});
  return out;
}

// Hugging Face's NormalizedString::split: which spans survive, merged per `behavior`.
std::vector<Span> apply_behavior(std::vector<Piece> pieces, Behavior behavior) {
  std::vector<Span> out;
  bool previous_match = false;
  switch (behavior) {
    case Behavior::kIsolated:
      for (const Piece& p : pieces) out.push_back(p.span);
      break;
    case Behavior::kRemoved:
      for (const Piece& p : pieces)
        if (!p.match) out.push_back(p.span);
      break;
    case Behavior::kContiguous:
      for (const Piece& p : pieces) {
        if (p.match == previous_match && !out.empty()) {
          out.back().second = p.span.second;
        } else {
          out.push_back(p.span);
        }
        previous_match = p.match;
      }
      break;
    case Behavior::kMergedWithPrevious:
      for (const Piece& p : pieces) {
        if (p.match && !previous_match && !out.empty()) {
          out.back().second = p.span.second;
        } else {
          out.push_back(p.span);
        }
        previous_match = p.match;
      }
      break;
    case Behavior::kMergedWithNext:
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        if (it->match && !previous_match && !out.empty()) {
          out.back().first = it->span.first;
        } else {
          out.push_back(it->span);
        }
        previous_match = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  return out;
}

void split_words(std::vector<PreToken>& words, const std::function<std::vector<Span>(const std::string&)>& find,
                 Behavior behavior, bool invert) {
  std::vector<PreToken> out;
  out.reserve(words.size());
  for (const PreToken& w : words) {
    std::vector<Piece> pieces = pieces_of(w.text, find(w.text));
    if (invert)
      for (Piece& p : pieces) p.match = !p.match;
    for (const Span& s : apply_behavior(std::move(pieces), behavior))
      if (s.second > s.first) out.push_back({w.text.substr(s.first, s.second - s.first), w.at_text_start && s.first == 0});
  }
  words.swap(out);
}

std::vector<Span> find_literal(const std::string& text, const std::string& literal) {
  std::vector<Span> found;
  for (size_t at = text.find(literal); at != std::string::npos; at = text.find(literal, at + literal.size()))
    found.emplace_back(at, at + literal.size());
  return found;
}

class SplitPreTokenizer : public HfPreTokenizer {
 public:
  SplitPreTokenizer(std::unique_ptr<OnigRegex> regex, std::string literal, Behavior behavior, bool invert)
      : regex_(std::move(regex)), literal_(std::move(literal)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::vector<PreToken>& words, RegexBudget& budget) const override {
    split_words(
        words, [&](const std::string& w) { return regex_ ? regex_->find_all(w, budget) : find_literal(w, literal_); },
        behavior_, invert_);
  }

 private:
  std::unique_ptr<OnigRegex> regex_;
  std::string literal_;
  Behavior behavior_;
  bool invert_;
};

class ByteLevelPreTokenizer : public HfPreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex, RegexSource source)
      : add_prefix_space_(add_prefix_space),
        regex_(use_regex ? std::make_unique<OnigRegex>(byte_level::gpt2_pattern(), std::move(source)) : nullptr) {}
  void pre_tokenize(std::vector<PreToken>& words, RegexBudget& budget) const override {
    if (add_prefix_space_)
      for (PreToken& w : words)
        if (w.text.empty() || w.text[0] != ' ') w.text.insert(0, " ");
    if (regex_)
      split_words(
          words, [&](const std::string& w) { return regex_->find_all(w, budget); }, Behavior::kIsolated, false);
    for (PreToken& w : words) w.text = byte_level::encode(w.text);
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<OnigRegex> regex_;
};

enum class PrependScheme { kAlways, kFirst, kNever };

// Spaces become the replacement ("▁"), which is prepended per `scheme`; with `split`, each word
// then starts at a replacement (MergedWithNext).
class MetaspacePreTokenizer : public HfPreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}
  void pre_tokenize(std::vector<PreToken>& words, RegexBudget&) const override {
    for (PreToken& w : words) {
      std::string out;
      out.reserve(w.text.size() + replacement_.size());
      for (char c : w.text) {
        if (c == ' ') {
          out += replacement_;
        } else {
          out.push_back(c);
        }
      }
      const bool starts = out.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts && (scheme_ == PrependScheme::kAlways || (scheme_ == PrependScheme::kFirst && w.at_text_start)))
        out.insert(0, replacement_);
      w.text.swap(out);
    }
    if (split_)
      split_words(words, [this](const std::string& w) { return find_literal(w, replacement_); }, Behavior::kMergedWithNext, false);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
};

class SequencePreTokenizer : public HfPreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<HfPreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(std::vector<PreToken>& words, RegexBudget& budget) const override {
    for (const auto& s : steps_) s->pre_tokenize(words, budget);
  }

 private:
  std::vector<std::unique_ptr<HfPreTokenizer>> steps_;
};

Behavior parse_behavior(const JsonFields& f) {
  const std::string b = f.string("behavior");
  if (b == "Removed") return Behavior::kRemoved;
  if (b == "Isolated") return Behavior::kIsolated;
  if (b == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::kMergedWithNext;
  if (b == "Contiguous") return Behavior::kContiguous;
  f.fail("behavior", "unknown \"" + b + "\" (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
}

}  // namespace

std::unique_ptr<HfPreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex,
                                                              RegexSource source) {
  return std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, use_regex, std::move(source));
}

std::unique_ptr<HfPreTokenizer> parse_pre_tokenizer(const JsonFields& f) {
  const std::string type = f.string("type");
  if (type == "Split") {
    f.allow_only({"type", "pattern", "behavior", "invert"});
    JsonFields pattern = f.object("pattern");
    const Behavior behavior = parse_behavior(f);
    const bool invert = f.boolean_or("invert", false);
    if (pattern.has("Regex")) {
      pattern.allow_only({"Regex"});
      try {
        auto regex =
            std::make_unique<OnigRegex>(pattern.string("Regex"), RegexSource{f.file(), pattern.where("Regex")});
        return std::make_unique<SplitPreTokenizer>(std::move(regex), "", behavior, invert);
      } catch (const std::invalid_argument& e) {
        pattern.fail("Regex", e.what());
      }
    }
    if (pattern.has("String")) {
      pattern.allow_only({"String"});
      const std::string literal = pattern.string("String");
      if (literal.empty()) pattern.fail("String", "must not be empty");
      return std::make_unique<SplitPreTokenizer>(nullptr, literal, behavior, invert);
    }
    pattern.fail_here("must be {\"Regex\": ...} or {\"String\": ...}");
  }
  if (type == "ByteLevel") {
    f.allow_only({"type", "add_prefix_space", "trim_offsets", "use_regex"});
    return make_byte_level_pre_tokenizer(f.boolean_or("add_prefix_space", true), f.boolean_or("use_regex", true),
                                         {f.file(), f.where("use_regex")});
  }
  if (type == "Metaspace") {
    f.allow_only({"type", "replacement", "add_prefix_space", "prepend_scheme", "split", "str_rep"});
    const std::string replacement = f.string("replacement");
    size_t length = 0;
    if (replacement.empty() || (utf8::decode_at(replacement, 0, &length), length != replacement.size()))
      f.fail("replacement", "must be one character");
    PrependScheme scheme = PrependScheme::kAlways;
    if (f.has("prepend_scheme")) {
      const std::string name = f.string("prepend_scheme");
      if (name == "always") {
        scheme = PrependScheme::kAlways;
      } else if (name == "first") {
        scheme = PrependScheme::kFirst;
      } else if (name == "never") {
        scheme = PrependScheme::kNever;
      } else {
        f.fail("prepend_scheme", "unknown \"" + name + "\" (always, first, never)");
      }
    }
    if (!f.boolean_or("add_prefix_space", true)) {  // the older spelling of "never"
      if (f.has("prepend_scheme") && scheme != PrependScheme::kNever)
        f.fail("add_prefix_space", "false contradicts prepend_scheme");
      scheme = PrependScheme::kNever;
    }
    return std::make_unique<MetaspacePreTokenizer>(replacement, scheme, f.boolean_or("split", true));
  }
  if (type == "Sequence") {
    f.allow_only({"type", "pretokenizers"});
    std::vector<std::unique_ptr<HfPreTokenizer>> steps;
    for (size_t i = 0; i < f.array("pretokenizers").size(); ++i) steps.push_back(parse_pre_tokenizer(f.element("pretokenizers", i)));
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  f.fail("type", "unknown \"" + type + "\" (supported: Split, ByteLevel, Metaspace, Sequence)");
}

}  // namespace kvbench::models
