#include "datasets/punkt.hpp"

#include <optional>

#include "datasets/data_error.hpp"
#include "datasets/line_reader.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::datasets {
namespace {

using metrics::python_isspace;
using metrics::utf8_decode;
using metrics::utf8_encode;

// Orthographic context flags (punkt's _ORTHO_*): where a type was seen upper/lower case.
constexpr int kBegUc = 1 << 1, kMidUc = 1 << 2, kUnkUc = 1 << 3, kBegLc = 1 << 4, kMidLc = 1 << 5, kUnkLc = 1 << 6;
constexpr int kUc = kBegUc + kMidUc + kUnkUc, kLc = kBegLc + kMidLc + kUnkLc;

bool in(char32_t c, const char32_t* set) {
  for (; *set; ++set)
    if (c == *set) return true;
  return false;
}
// PunktLanguageVars' character classes.
bool non_word(char32_t c) { return in(c, U")\";}]*:@'({[?!"); }
bool excluded_word_start(char32_t c) { return in(c, U"(\"`{[:;&#*@)}]-,"); }
bool sent_end(char32_t c) { return in(c, U".?!"); }
bool ascii_whitespace(char32_t c) { return in(c, U" \t\n\r\x0b\x0c"); }  // string.whitespace

// _re_multi_char_punct at p: -{2,} | \.{2,} | (?:\.\s){2,}\.  (first alternative that matches).
std::size_t multi_char_at(const std::u32string& s, std::size_t p) {
  const std::size_t n = s.size();
  if (p >= n) return 0;
  for (char32_t run : {U'-', U'.'}) {
    std::size_t e = p;
    while (e < n && s[e] == run) ++e;
    if (e - p >= 2) return e - p;
  }
  std::size_t reps = 0;
  while (p + 2 * reps + 1 < n && s[p + 2 * reps] == U'.' && python_isspace(s[p + 2 * reps + 1])) ++reps;
  if (reps >= 2 && p + 2 * reps < n && s[p + 2 * reps] == U'.') return 2 * reps + 1;
  if (reps >= 3) return 2 * reps - 1;  // greedy repetition backs off one: its '.' ends the match
  return 0;
}

// The lookahead that ends a word token at e.
bool word_end_at(const std::u32string& s, std::size_t e) {
  const std::size_t n = s.size();
  if (e >= n || python_isspace(s[e]) || non_word(s[e]) || multi_char_at(s, e)) return true;
  if (s[e] != U',') return false;
  return e + 1 >= n || python_isspace(s[e + 1]) || non_word(s[e + 1]) || multi_char_at(s, e + 1);
}

std::u32string lower(const std::u32string& s) { return metrics::python_lower(s); }

std::u32string rstrip(const std::u32string& s) {
  std::size_t e = s.size();
  while (e > 0 && python_isspace(s[e - 1])) --e;
  return s.substr(0, e);
}

// ^-?[\.,]?\d[\d,\.-]*\.?$ (the whole string).
bool numeric(const std::u32string& s) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == U'-') ++i;
  if (i < s.size() && (s[i] == U'.' || s[i] == U',')) ++i;
  if (i >= s.size() || !metrics::python_re_digit(s[i])) return false;
  for (++i; i < s.size(); ++i)
    if (!metrics::python_re_digit(s[i]) && s[i] != U',' && s[i] != U'.' && s[i] != U'-') return false;
  return true;
}

struct Token {
  std::u32string tok, type;
  bool period_final = false, sentbreak = false, abbr = false, ellipsis = false;

  explicit Token(std::u32string t) : tok(std::move(t)) {
    const std::u32string low = lower(tok);
    type = numeric(low) ? U"##number##" : low;
    period_final = !tok.empty() && tok.back() == U'.';
  }
  std::u32string type_no_period() const {
    return type.size() > 1 && type.back() == U'.' ? type.substr(0, type.size() - 1) : type;
  }
  std::u32string type_no_sentperiod() const { return sentbreak ? type_no_period() : type; }
  bool first_upper() const { return metrics::python_isupper(tok[0]); }
  bool first_lower() const { return metrics::python_islower(tok[0]); }
  bool is_ellipsis() const {  // \.\.+$
    if (tok.size() < 2) return false;
    for (char32_t c : tok)
      if (c != U'.') return false;
    return true;
  }
  bool is_initial() const {  // [^\W\d]\.$
    return tok.size() == 2 && tok[1] == U'.' && metrics::python_re_word(tok[0]) && !metrics::python_re_digit(tok[0]);
  }
};

// _tokenize_words: the word tokens of every line with non-whitespace content.
std::vector<Token> tokenize_words(const std::u32string& text) {
  std::vector<Token> out;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = text.find(U'\n', begin);
    const std::u32string line = text.substr(begin, end == std::u32string::npos ? std::u32string::npos : end - begin);
    for (auto& w : PunktSentenceTokenizer::word_tokenize(line)) out.emplace_back(std::move(w));
    if (end == std::u32string::npos) break;
    begin = end + 1;
  }
  return out;
}

// One period-context match: the sentence-end character at `at`, what follows it.
struct EndContext {
  std::size_t at = 0;
  std::u32string after_tok;
  std::optional<std::size_t> next_tok_start;
};

// period_context_re().finditer: [.?!](?=(?P<after_tok>NonWord|\s+(?P<next_tok>\S+)))
std::vector<EndContext> period_contexts(const std::u32string& s) {
  std::vector<EndContext> out;
  const std::size_t n = s.size();
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (!sent_end(s[i])) continue;
    if (non_word(s[i + 1])) {
      out.push_back({i, s.substr(i + 1, 1), std::nullopt});
    } else if (python_isspace(s[i + 1])) {
      std::size_t j = i + 1;
      while (j < n && python_isspace(s[j])) ++j;
      if (j == n) continue;
      std::size_t k = j;
      while (k < n && !python_isspace(s[k])) ++k;
      out.push_back({i, s.substr(i + 1, k - i - 1), j});
    }
  }
  return out;
}

// Python's text[a:b] for 0 <= a, b.
std::u32string slice(const std::u32string& s, std::size_t a, std::size_t b) {
  if (a >= s.size() || a >= b) return {};
  return s.substr(a, std::min(b, s.size()) - a);
}

int ortho(const PunktParameters& p, const std::u32string& type) {
  const auto it = p.ortho_context.find(type);
  return it == p.ortho_context.end() ? 0 : it->second;
}

enum class Starter { yes, no, unknown };

// _ortho_heuristic: is this token the first of a sentence?
Starter ortho_heuristic(const PunktParameters& p, const Token& t) {
  if (t.tok.size() == 1 && in(t.tok[0], U";:,.!?")) return Starter::no;
  const int context = ortho(p, t.type_no_sentperiod());
  if (t.first_upper() && (context & kLc) && !(context & kMidUc)) return Starter::yes;
  if (t.first_lower() && ((context & kUc) || !(context & kBegLc))) return Starter::no;
  return Starter::unknown;
}

void first_pass(const PunktParameters& p, Token& t) {
  const std::u32string& tok = t.tok;
  if (tok.size() == 1 && sent_end(tok[0])) {
    t.sentbreak = true;
  } else if (t.is_ellipsis()) {
    t.ellipsis = true;
  } else if (t.period_final && !(tok.size() >= 2 && tok[tok.size() - 2] == U'.')) {
    const std::u32string base = lower(tok.substr(0, tok.size() - 1));
    const std::size_t dash = base.rfind(U'-');
    const std::u32string last = dash == std::u32string::npos ? base : base.substr(dash + 1);
    if (p.abbrev_types.count(base) || p.abbrev_types.count(last))
      t.abbr = true;
    else
      t.sentbreak = true;
  }
}

// _second_pass_annotation of t1 given its successor (first-pass annotations only).
void second_pass(const PunktParameters& p, Token& t1, const Token& t2) {
  if (!t1.period_final) return;
  const std::u32string typ = t1.type_no_period();
  const std::u32string next_typ = t2.type_no_sentperiod();
  const bool initial = t1.is_initial();
  if (p.collocations.count({typ, next_typ})) {
    t1.sentbreak = false, t1.abbr = true;
    return;
  }
  if ((t1.abbr || t1.ellipsis) && !initial) {
    if (ortho_heuristic(p, t2) == Starter::yes) {
      t1.sentbreak = true;
      return;
    }
    if (t2.first_upper() && p.sent_starters.count(next_typ)) {
      t1.sentbreak = true;
      return;
    }
  }
  if (initial || typ == U"##number##") {
    const Starter starter = ortho_heuristic(p, t2);
    if (starter == Starter::no) {
      t1.sentbreak = false, t1.abbr = true;
      return;
    }
    if (starter == Starter::unknown && initial && t2.first_upper() && !(ortho(p, next_typ) & kLc)) {
      t1.sentbreak = false, t1.abbr = true;
    }
  }
}

std::vector<std::string> split_fields(const std::string& line, std::size_t count, const std::string& file, int64_t number) {
  std::vector<std::string> fields;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', begin);
    fields.push_back(line.substr(begin, tab == std::string::npos ? std::string::npos : tab - begin));
    if (tab == std::string::npos) break;
    begin = tab + 1;
  }
  if (fields.size() != count)
    throw DataError(file, number, "expected " + std::to_string(count) + " tab-separated field(s), got " + std::to_string(fields.size()));
  for (const auto& f : fields)
    if (f.empty()) throw DataError(file, number, "empty field");
  return fields;
}

template <typename Fn>
void read_entries(const std::string& file, std::size_t fields, Fn add) {
  LineReader reader(file);
  std::string line;
  while (reader.next(line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    add(split_fields(line, fields, file, reader.line_number()), reader.line_number());
  }
}

}  // namespace

PunktParameters PunktParameters::load(const std::string& folder) {
  PunktParameters p;
  read_entries(folder + "/abbrev_types.txt", 1, [&](const auto& f, int64_t) { p.abbrev_types.insert(utf8_decode(f[0])); });
  read_entries(folder + "/collocations.tab", 2,
               [&](const auto& f, int64_t) { p.collocations.insert({utf8_decode(f[0]), utf8_decode(f[1])}); });
  read_entries(folder + "/sent_starters.txt", 1, [&](const auto& f, int64_t) { p.sent_starters.insert(utf8_decode(f[0])); });
  const std::string ortho_file = folder + "/ortho_context.tab";
  read_entries(ortho_file, 2, [&](const auto& f, int64_t line) {
    std::size_t used = 0;
    int flags = -1;
    try {
      flags = std::stoi(f[1], &used);
    } catch (const std::exception&) {
    }
    if (used != f[1].size() || flags < 0 || flags > 127)
      throw DataError(ortho_file, line, "orthographic context '" + f[1] + "' is not a flag set in [0, 127]");
    p.ortho_context[utf8_decode(f[0])] = flags;
  });
  return p;
}

std::vector<std::u32string> PunktSentenceTokenizer::word_tokenize(const std::u32string& s) {
  std::vector<std::u32string> out;
  const std::size_t n = s.size();
  std::size_t p = 0;
  while (p < n) {
    if (python_isspace(s[p])) {
      ++p;
      continue;
    }
    std::size_t end = p + multi_char_at(s, p);
    if (end == p && !excluded_word_start(s[p])) {  // (?=WordStart)\S+? up to a word end
      end = p + 1;
      while (!word_end_at(s, end)) ++end;
    } else if (end == p) {
      end = p + 1;  // \S
    }
    out.push_back(s.substr(p, end - p));
    p = end;
  }
  return out;
}

bool PunktSentenceTokenizer::text_contains_sentbreak(const std::u32string& context) const {
  std::vector<Token> tokens = tokenize_words(context);
  for (auto& t : tokens) first_pass(params_, t);
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    second_pass(params_, tokens[i], tokens[i + 1]);
    if (tokens[i].sentbreak) return true;  // a break before the last token
  }
  return false;
}

std::vector<std::pair<std::size_t, std::size_t>> PunktSentenceTokenizer::span_tokenize(const std::u32string& text) const {
  // _match_potential_end_contexts: each candidate with the word before it; a candidate whose word
  // overlaps the next candidate's is merged into it ("acting!!!" is one context).
  struct Candidate {
    EndContext match;
    std::size_t word_start;
  };
  std::vector<Candidate> candidates;
  {
    std::size_t prev_start = 0, prev_stop = 0;
    std::optional<EndContext> prev;
    for (EndContext& m : period_contexts(text)) {
      std::size_t last_space = 0;  // _get_last_whitespace_index: 0 when none (or at 0)
      const std::u32string before = slice(text, prev_stop, m.at);
      for (std::size_t i = before.size(); i-- > 0;)
        if (ascii_whitespace(before[i])) {
          last_space = i;
          break;
        }
      const std::size_t word_start = last_space ? last_space + prev_stop + 1 : prev_start;
      if (prev && prev_stop <= word_start) candidates.push_back({*prev, prev_start});
      prev = m;
      prev_start = word_start, prev_stop = m.at;
    }
    if (prev) candidates.push_back({*prev, prev_start});
  }

  // _slices_from_text
  std::vector<std::pair<std::size_t, std::size_t>> slices;
  std::size_t last_break = 0;
  for (const Candidate& c : candidates) {
    const std::u32string context = slice(text, c.word_start, c.match.at) + text[c.match.at] + c.match.after_tok;
    if (!text_contains_sentbreak(context)) continue;
    slices.emplace_back(last_break, c.match.at + 1);
    last_break = c.match.next_tok_start ? *c.match.next_tok_start : c.match.at + 1;
  }
  slices.emplace_back(last_break, rstrip(text).size());

  // _realign_boundaries: closing quotes and brackets after a break belong to the sentence before.
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::size_t realign = 0;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const std::pair<std::size_t, std::size_t> s1{slices[i].first + realign, slices[i].second};
    if (i + 1 == slices.size()) {
      if (!slice(text, s1.first, s1.second).empty()) spans.push_back(s1);
      continue;
    }
    const std::u32string next = slice(text, slices[i + 1].first, slices[i + 1].second);
    // ["\')\]}]+?(?:\s+|(?=--)|$), MULTILINE, at the start of the next slice.
    std::size_t k = 0, match_end = 0;
    bool matched = false;
    while (k < next.size() && in(next[k], U"\"')]}")) {
      ++k;
      if (k < next.size() && python_isspace(next[k])) {
        match_end = k;
        while (match_end < next.size() && python_isspace(next[match_end])) ++match_end;
        matched = true;
      } else if (k == next.size() || (k + 1 < next.size() && next[k] == U'-' && next[k + 1] == U'-')) {
        match_end = k;
        matched = true;
      }
      if (matched) break;
    }
    if (matched) {
      spans.emplace_back(s1.first, slices[i + 1].first + k);  // the match without its trailing whitespace
      realign = match_end;
    } else {
      realign = 0;
      if (!slice(text, s1.first, s1.second).empty()) spans.push_back(s1);
    }
  }
  return spans;
}

std::vector<std::string> PunktSentenceTokenizer::tokenize(const std::string& text) const {
  const std::u32string t = utf8_decode(text);
  std::vector<std::string> out;
  for (const auto& [a, b] : span_tokenize(t)) out.push_back(utf8_encode(slice(t, a, b)));
  return out;
}

}  // namespace kvbench::datasets
