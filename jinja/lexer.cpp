#include "jinja/lexer.hpp"

#include <algorithm>
#include <cctype>

#include "jinja/utf8.hpp"

namespace kvbench::jinja {
namespace {

std::string normalize_newlines(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

// Length in bytes of the Python whitespace code point at s[i], 0 if none.
size_t space_at(const std::string& s, size_t i) {
  if (i >= s.size()) return 0;
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return utf8::is_space(c) ? 1 : 0;
  const size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  const auto cps = utf8::decode(s.substr(i, len));
  return cps.size() == 1 && utf8::is_space(cps[0]) ? len : 0;
}

// Python str.rstrip().
std::string rstrip(const std::string& s) {
  auto cps = utf8::decode(s);
  while (!cps.empty() && utf8::is_space(cps.back())) cps.pop_back();
  return utf8::encode(cps);
}

bool all_space(const std::string& s, size_t from) {
  for (size_t i = from; i < s.size();) {
    const size_t n = space_at(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

class Lexer {
 public:
  Lexer(const std::string& source, const LexerOptions& options) : src_(normalize_newlines(source)), opt_(options) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t start = find_tag_start(pos_);
      if (start == std::string::npos) {
        emit_data(src_.substr(pos_), pos_);
        pos_ = src_.size();
        break;
      }
      const char kind = src_[start + 1];
      char sign = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (sign != '-' && sign != '+') sign = '\0';
      std::string text = src_.substr(pos_, start - pos_);
      const size_t text_pos = pos_;
      const bool raw = kind == '%' && is_raw_begin(start);
      if (sign == '-') {
        text = rstrip(text);
      } else if (sign != '+' && opt_.lstrip_blocks && kind != '{') {
        const size_t nl = text.rfind('\n');
        const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        if ((l_pos > 0 || line_starting_) && l_pos < text.size() && all_space(text, l_pos)) text.resize(l_pos);
      }
      emit_data(text, text_pos);
      pos_ = start + 2 + (sign ? 1 : 0);
      if (raw) {
        lex_raw(start);
      } else if (kind == '#') {
        lex_comment(start);
      } else {
        lex_tag(kind == '{', start);
      }
    }
    tokens_.push_back({TokenType::kEnd, "", location(src_.size())});
    return std::move(tokens_);
  }

 private:
  // Offsets mostly grow, so the scan continues from the last one asked for.
  SourceLocation location(size_t offset) const {
    if (offset < cached_offset_) {
      cached_offset_ = 0;
      cached_ = {1, 1};
    }
    for (size_t i = cached_offset_; i < offset && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++cached_.line;
        cached_.column = 1;
      } else {
        ++cached_.column;
      }
    }
    cached_offset_ = std::max(cached_offset_, std::min(offset, src_.size()));
    return cached_;
  }

  [[noreturn]] void fail(const std::string& message, size_t offset) const {
    throw TemplateSyntaxError(message, location(offset));
  }

  size_t find_tag_start(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1))
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  void emit_data(const std::string& text, size_t offset) {
    if (!text.empty()) tokens_.push_back({TokenType::kData, text, location(offset)});
  }

  size_t skip_spaces(size_t i) const {
    while (size_t n = space_at(src_, i)) i += n;
    return i;
  }

  bool word_at(size_t i, const std::string& word) const {
    if (src_.compare(i, word.size(), word) != 0) return false;
    const size_t after = i + word.size();
    return after >= src_.size() || !(std::isalnum(static_cast<unsigned char>(src_[after])) || src_[after] == '_');
  }

  // Matches `-%}\s*`, `+%}` or `%}` (then one optional newline with trim_blocks) at i; returns
  // the offset after it, or npos.
  size_t match_end(size_t i, const std::string& close, bool trim) const {
    if (src_.compare(i, 1, "-") == 0 && src_.compare(i + 1, close.size(), close) == 0)
      return skip_spaces(i + 1 + close.size());
    if (src_.compare(i, 1, "+") == 0 && src_.compare(i + 1, close.size(), close) == 0) return i + 1 + close.size();
    if (src_.compare(i, close.size(), close) == 0) {
      size_t after = i + close.size();
      if (trim && opt_.trim_blocks && after < src_.size() && src_[after] == '\n') ++after;
      return after;
    }
    return std::string::npos;
  }

  bool is_raw_begin(size_t start) const {
    size_t i = start + 2;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    i = skip_spaces(i);
    if (!word_at(i, "raw")) return false;
    i = skip_spaces(i + 3);
    return src_.compare(i, 2, "%}") == 0 || src_.compare(i, 3, "-%}") == 0;
  }

  void lex_raw(size_t start) {
    // {% raw %} ends with `-%}\s*` or `%}` (no trim_blocks on the opening tag, as Jinja2).
    size_t i = skip_spaces(skip_spaces(pos_) + 3);
    if (src_.compare(i, 3, "-%}") == 0) {
      pos_ = skip_spaces(i + 3);
    } else {
      pos_ = i + 2;
    }
    for (size_t j = src_.find("{%", pos_); j != std::string::npos; j = src_.find("{%", j + 1)) {
      size_t k = j + 2;
      char sign = '\0';
      if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) sign = src_[k++];
      k = skip_spaces(k);
      if (!word_at(k, "endraw")) continue;
      const size_t end = match_end(skip_spaces(k + 6), "%}", true);
      if (end == std::string::npos) continue;
      std::string body = src_.substr(pos_, j - pos_);
      if (sign == '-') {
        body = rstrip(body);
      } else if (sign != '+' && opt_.lstrip_blocks) {
        const size_t nl = body.rfind('\n');
        const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        if ((l_pos > 0 || line_starting_) && l_pos < body.size() && all_space(body, l_pos)) body.resize(l_pos);
      }
      emit_data(body, pos_);
      line_starting_ = end > 0 && src_[end - 1] == '\n';
      pos_ = end;
      return;
    }
    fail("missing end of raw directive ({% endraw %})", start);
  }

  void lex_comment(size_t start) {
    for (size_t j = src_.find("#}", pos_); j != std::string::npos; j = src_.find("#}", j + 1)) {
      size_t end;
      if (j > pos_ && (src_[j - 1] == '-' || src_[j - 1] == '+'))
        end = match_end(j - 1, "#}", true);
      else
        end = match_end(j, "#}", true);
      line_starting_ = end > 0 && src_[end - 1] == '\n';
      pos_ = end;
      return;
    }
    fail("missing end of comment tag (#})", start);
  }

  void lex_tag(bool variable, size_t start) {
    tokens_.push_back({variable ? TokenType::kVarBegin : TokenType::kBlockBegin, "", location(start)});
    const std::string close = variable ? "}}" : "%}";
    std::vector<char> balance;
    while (true) {
      pos_ = skip_spaces(pos_);
      if (pos_ >= src_.size())
        fail(std::string("unexpected end of template: tag opened here was never closed with '") + close + "'", start);
      if (balance.empty()) {
        const size_t end = match_end(pos_, close, !variable);
        if (end != std::string::npos) {
          tokens_.push_back({variable ? TokenType::kVarEnd : TokenType::kBlockEnd, "", location(pos_)});
          line_starting_ = end > 0 && src_[end - 1] == '\n';
          pos_ = end;
          return;
        }
      }
      const char c = src_[pos_];
      const size_t at = pos_;
      if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number();
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t e = pos_;
        while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        tokens_.push_back({TokenType::kName, src_.substr(pos_, e - pos_), location(at)});
        pos_ = e;
      } else if (c == '\'' || c == '"') {
        lex_string();
      } else {
        static const char* two[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (const char* t : two)
          if (src_.compare(pos_, 2, t) == 0) op = t;
        if (op.empty()) {
          if (std::string("+-/*%~[](){}<>=.:|,;").find(c) == std::string::npos)
            fail(std::string("unexpected char '") + c + "'", pos_);
          op = std::string(1, c);
        }
        if (op == "(" || op == "[" || op == "{") {
          balance.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
        } else if (op == ")" || op == "]" || op == "}") {
          if (balance.empty()) fail("unexpected '" + op + "'", pos_);
          if (balance.back() != op[0]) fail("unexpected '" + op + "', expected '" + balance.back() + "'", pos_);
          balance.pop_back();
        }
        tokens_.push_back({TokenType::kOperator, op, location(at)});
        pos_ += op.size();
      }
    }
  }

  void lex_number() {
    const size_t at = pos_;
    auto digits = [&](size_t i) {
      while (i < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[i])) || src_[i] == '_')) ++i;
      return i;
    };
    size_t e = digits(pos_);
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
      e = digits(e + 1);
      is_float = true;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t f = e + 1;
      if (f < src_.size() && (src_[f] == '+' || src_[f] == '-')) ++f;
      if (f < src_.size() && std::isdigit(static_cast<unsigned char>(src_[f]))) {
        e = digits(f);
        is_float = true;
      }
    }
    std::string text;
    for (size_t i = pos_; i < e; ++i)
      if (src_[i] != '_') text += src_[i];
    tokens_.push_back({is_float ? TokenType::kFloat : TokenType::kInteger, text, location(at)});
    pos_ = e;
  }

  void lex_string() {
    const size_t at = pos_;
    const char quote = src_[pos_++];
    std::string value;
    while (true) {
      if (pos_ >= src_.size()) fail("unterminated string literal", at);
      const char c = src_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c != '\\') {
        value += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) fail("unterminated string literal", at);
      const char n = src_[pos_ + 1];
      pos_ += 2;
      auto hex = [&](int count) {
        if (pos_ + count > src_.size()) fail("truncated \\x/\\u escape in string literal", pos_);
        char32_t cp = 0;
        for (int k = 0; k < count; ++k) {
          const char h = src_[pos_ + k];
          if (!std::isxdigit(static_cast<unsigned char>(h))) fail("truncated \\x/\\u escape in string literal", pos_);
          cp = cp * 16 + static_cast<char32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
        }
        pos_ += count;
        utf8::append(value, cp);
      };
      switch (n) {
        case '\n': break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'v': value += '\v'; break;
        case 'x': hex(2); break;
        case 'u': hex(4); break;
        case 'U': hex(8); break;
        default:
          if (n >= '0' && n <= '7') {
            char32_t cp = static_cast<char32_t>(n - '0');
            for (int k = 0; k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k)
              cp = cp * 8 + static_cast<char32_t>(src_[pos_++] - '0');
            utf8::append(value, cp);
          } else {
            value += '\\';  // Python keeps unknown escapes as written
            value += n;
          }
      }
    }
    tokens_.push_back({TokenType::kString, value, location(at)});
  }

  std::string src_;
  LexerOptions opt_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
  mutable size_t cached_offset_ = 0;
  mutable SourceLocation cached_{1, 1};
};

}  // namespace

std::vector<Token> tokenize(const std::string& source, const LexerOptions& options) {
  return Lexer(source, options).run();
}

}  // namespace kvbench::jinja
