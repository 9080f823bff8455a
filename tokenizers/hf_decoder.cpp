#include "tokenizers/hf_decoder.hpp"

#include <cctype>
#include <cstdlib>

#include "tokenizers/byte_level.hpp"
#include "tokenizers/utf8_text.hpp"

namespace kvbench::models {
namespace {

class ByteLevelDecoder : public HfDecoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) bytes += byte_level::decode_bytes(t);
    return {utf8::lossy(bytes)};
  }
};

class ReplaceDecoder : public HfDecoder {
 public:
  ReplaceDecoder(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (std::string& t : tokens) {
      std::string out;
      size_t at = 0;
      for (size_t hit; (hit = t.find(from_, at)) != std::string::npos; at = hit + from_.size()) {
        out.append(t, at, hit - at);
        out += to_;
      }
      out.append(t, at, std::string::npos);
      t.swap(out);
    }
    return tokens;
  }

 private:
  std::string from_, to_;
};

// "<0x41>" -> 0x41; -1 when the token is not a byte token (Rust's u8::from_str_radix also takes
// a leading '+').
int byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  if (!hex(t[4]) || !(hex(t[3]) || t[3] == '+')) return -1;
  return static_cast<int>(std::strtol(t.substr(3, 2).c_str(), nullptr, 16));
}

class ByteFallbackDecoder : public HfDecoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    std::string bytes;
    auto flush = [&] {
      if (bytes.empty()) return;
      try {
        utf8::require_valid(bytes, "bytes");
        out.push_back(bytes);
      } catch (const std::invalid_argument&) {
        for (size_t i = 0; i < bytes.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
      }
      bytes.clear();
    };
    for (std::string& t : tokens) {
      const int b = byte_token(t);
      if (b >= 0) {
        bytes.push_back(static_cast<char>(b));
        continue;
      }
      flush();
      out.push_back(std::move(t));
    }
    flush();
    return out;
  }
};

class FuseDecoder : public HfDecoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string joined;
    for (const auto& t : tokens) joined += t;
    return {joined};
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character from each token.
class StripDecoder : public HfDecoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (std::string& t : tokens) {
      size_t begin = 0;
      for (size_t i = 0; i < start_ && t.compare(begin, content_.size(), content_) == 0; ++i) begin += content_.size();
      size_t end = t.size();
      for (size_t i = 0; i < stop_ && end >= begin + content_.size() &&
                         t.compare(end - content_.size(), content_.size(), content_) == 0;
           ++i)
        end -= content_.size();
      t = t.substr(begin, end - begin);
    }
    return tokens;
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

// The replacement ("▁") becomes a space, except in the first token when a prefix was prepended.
class MetaspaceDecoder : public HfDecoder {
 public:
  MetaspaceDecoder(std::string replacement, bool drop_in_first) : replacement_(std::move(replacement)), drop_in_first_(drop_in_first) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (size_t at = 0; at < t.size();) {
        if (t.compare(at, replacement_.size(), replacement_) == 0) {
          if (!(i == 0 && drop_in_first_)) out.push_back(' ');
          at += replacement_.size();
        } else {
          out.push_back(t[at++]);
        }
      }
      tokens[i].swap(out);
    }
    return tokens;
  }

 private:
  std::string replacement_;
  bool drop_in_first_;
};

class SequenceDecoder : public HfDecoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<HfDecoder>> steps) : steps_(std::move(steps)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (const auto& s : steps_) tokens = s->decode_chain(std::move(tokens));
    return tokens;
  }

 private:
  std::vector<std::unique_ptr<HfDecoder>> steps_;
};

size_t count_field(const JsonFields& f, const std::string& key) {
  const nlohmann::json& v = f.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0) f.fail(key, "must be a non-negative integer");
  return v.get<size_t>();
}

}  // namespace

std::string HfDecoder::decode(std::vector<std::string> tokens) const {
  std::string out;
  for (const auto& t : decode_chain(std::move(tokens))) out += t;
  return out;
}

std::unique_ptr<HfDecoder> make_byte_level_decoder() { return std::make_unique<ByteLevelDecoder>(); }

std::unique_ptr<HfDecoder> parse_decoder(const JsonFields& f) {
  const std::string type = f.string("type");
  if (type == "ByteLevel") {
    f.allow_only({"type", "add_prefix_space", "trim_offsets", "use_regex"});
    return make_byte_level_decoder();
  }
  if (type == "Replace") {
    f.allow_only({"type", "pattern", "content"});
    return std::make_unique<ReplaceDecoder>(replace_pattern_string(f), f.string("content"));
  }
  if (type == "ByteFallback") {
    f.allow_only({"type"});
    return std::make_unique<ByteFallbackDecoder>();
  }
  if (type == "Fuse") {
    f.allow_only({"type"});
    return std::make_unique<FuseDecoder>();
  }
  if (type == "Strip") {
    f.allow_only({"type", "content", "start", "stop"});
    const std::string content = f.string("content");
    if (content.empty()) f.fail("content", "must be one character");
    return std::make_unique<StripDecoder>(content, count_field(f, "start"), count_field(f, "stop"));
  }
  if (type == "Metaspace") {
    f.allow_only({"type", "replacement", "add_prefix_space", "prepend_scheme", "split", "str_rep"});
    const std::string replacement = f.string("replacement");
    size_t length = 0;
    if (replacement.empty() || (utf8::decode_at(replacement, 0, &length), length != replacement.size()))
      f.fail("replacement", "must be one character");
    bool never = !f.boolean_or("add_prefix_space", true);
    if (f.has("prepend_scheme")) {
      const std::string name = f.string("prepend_scheme");
      if (name != "always" && name != "first" && name != "never")
        f.fail("prepend_scheme", "unknown \"" + name + "\" (always, first, never)");
      never = never || name == "never";
    }
    return std::make_unique<MetaspaceDecoder>(replacement, !never);
  }
  if (type == "Sequence") {
    f.allow_only({"type", "decoders"});
    std::vector<std::unique_ptr<HfDecoder>> steps;
    for (size_t i = 0; i < f.array("decoders").size(); ++i) steps.push_back(parse_decoder(f.element("decoders", i)));
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  f.fail("type", "unknown \"" + type + "\" (supported: ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, Sequence)");
}

}  // namespace kvbench::models
