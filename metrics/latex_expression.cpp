#include "metrics/latex_expression.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace kvbench::metrics {

namespace {

using Complex = std::complex<double>;

// ---- Tokens, as LaTeX.g4's lexer cuts them (longest match; the earlier rule on a tie). --------

enum class Tok {
  kAdd, kSub, kMul, kDiv, kLParen, kRParen, kLBrace, kRBrace, kLBraceLit, kRBraceLit, kLBracket, kRBracket,
  kBar, kLBar, kRBar, kLAngle, kRAngle, kLim, kLimApproach, kInt, kSum, kProd, kFuncNormal, kLFloor, kRFloor,
  kLCeil, kRCeil, kSqrt, kOverline, kTimes, kCdot, kCmdDiv, kFrac, kBinom, kMathit, kUnderscore, kCaret, kColon,
  kDifferential, kLetter, kDigit, kEqual, kNeq, kLt, kLte, kGt, kGte, kBang, kQuotes, kSymbol, kComma, kDot,
};

struct Token {
  Tok type;
  std::string text;  // the command's name without '\', the letter, the digit, the quotes
};

bool ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool lexer_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The token a whole "\name" is (SYMBOL when no keyword has that exact name); nullopt: skipped.
std::optional<Token> command_token(const std::string& name) {
  static const std::set<std::string> skipped = {"thinspace", "medspace", "thickspace", "quad", "qquad", "negthinspace",
                                                "negmedspace", "negthickspace", "left", "right", "vrule", "vcenter",
                                                "vbox", "vskip", "vspace", "hfil"};
  static const std::set<std::string> normal = {"exp", "log", "lg", "ln", "sin", "cos", "tan", "csc", "sec", "cot",
                                               "arcsin", "arccos", "arctan", "arccsc", "arcsec", "arccot", "sinh",
                                               "cosh", "tanh", "arsinh", "arcosh", "artanh"};
  static const std::vector<std::pair<std::set<std::string>, Tok>> keywords = {
      {{"lim"}, Tok::kLim},
      {{"to", "rightarrow", "Rightarrow", "longrightarrow", "Longrightarrow"}, Tok::kLimApproach},
      {{"int"}, Tok::kInt}, {{"sum"}, Tok::kSum}, {{"prod"}, Tok::kProd},
      {{"lfloor"}, Tok::kLFloor}, {{"rfloor"}, Tok::kRFloor}, {{"lceil"}, Tok::kLCeil}, {{"rceil"}, Tok::kRCeil},
      {{"sqrt"}, Tok::kSqrt}, {{"overline"}, Tok::kOverline}, {{"times"}, Tok::kTimes}, {{"cdot"}, Tok::kCdot},
      {{"div"}, Tok::kCmdDiv}, {{"frac", "dfrac", "tfrac"}, Tok::kFrac}, {{"binom", "dbinom", "tbinom"}, Tok::kBinom},
      {{"mathit"}, Tok::kMathit}, {{"neq"}, Tok::kNeq}, {{"leq", "le", "leqq", "leqslant"}, Tok::kLte},
      {{"geq", "ge", "geqq", "geqslant"}, Tok::kGte}, {{"langle"}, Tok::kLAngle}, {{"rangle"}, Tok::kRAngle},
  };
  if (skipped.count(name)) return std::nullopt;
  if (normal.count(name)) return Token{Tok::kFuncNormal, name};
  for (const auto& [names, type] : keywords)
    if (names.count(name)) return Token{type, name};
  return Token{Tok::kSymbol, name};
}

// nullopt: a character no token starts with (sympy's lexer error: parse_latex raises).
std::optional<std::vector<Token>> lex(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  const size_t n = s.size();
  auto letters_from = [&](size_t j) {
    size_t k = j;
    while (k < n && ascii_letter(s[k])) ++k;
    return k;
  };
  while (i < n) {
    const char c = s[i];
    if (lexer_space(c)) { ++i; continue; }
    if (c == '\\') {
      if (i + 1 >= n) return std::nullopt;
      const char d = s[i + 1];
      if (ascii_letter(d)) {
        const size_t end = letters_from(i + 1);
        const std::string name = s.substr(i + 1, end - i - 1);
        if ((name == "left" || name == "right") && end < n && s[end] == '|') {
          out.push_back({name == "left" ? Tok::kLBar : Tok::kRBar, name});
          i = end + 1;
          continue;
        }
        if (name == "int" && s.compare(end, 7, "\\limits") == 0 && letters_from(end + 1) == end + 7) {
          out.push_back({Tok::kInt, name});
          i = end + 7;
          continue;
        }
        if (std::optional<Token> t = command_token(name)) out.push_back(*t);
        i = end;
        continue;
      }
      if (d == ',' || d == ':' || d == ';' || d == '!' || d == '*' || d == '-' || d == '.' || d == '/' || d == '"' ||
          d == '(' || d == '=') { i += 2; continue; }
      if (d == '{' || d == '}') { out.push_back({d == '{' ? Tok::kLBraceLit : Tok::kRBraceLit, ""}); i += 2; continue; }
      return std::nullopt;
    }
    if (c == 'd') {  // DIFFERENTIAL: 'd' WS* (letter | \letters), longer than the LETTER d
      size_t j = i + 1;
      while (j < n && lexer_space(s[j])) ++j;
      size_t end = 0;
      if (j < n && ascii_letter(s[j])) end = j + 1;
      else if (j + 1 < n && s[j] == '\\' && ascii_letter(s[j + 1])) end = letters_from(j + 1);
      if (end) {
        std::string var = s.substr(j, end - j);
        if (var[0] == '\\') var = var.substr(1);
        out.push_back({Tok::kDifferential, var});
        i = end;
        continue;
      }
    }
    if (ascii_letter(c)) { out.push_back({Tok::kLetter, std::string(1, c)}); ++i; continue; }
    if (c >= '0' && c <= '9') { out.push_back({Tok::kDigit, std::string(1, c)}); ++i; continue; }
    if (c == '&' || c == '=') {  // EQUAL: ('&' WS*)? '=' | '=' (WS* '&')?
      size_t j = i + 1;
      if (c == '&') {
        while (j < n && lexer_space(s[j])) ++j;
        if (j >= n || s[j] != '=') return std::nullopt;
        i = j + 1;
      } else {
        while (j < n && lexer_space(s[j])) ++j;
        i = (j < n && s[j] == '&') ? j + 1 : i + 1;
      }
      out.push_back({Tok::kEqual, "="});
      continue;
    }
    if (c == '\'') {
      size_t j = i;
      while (j < n && s[j] == '\'') ++j;
      out.push_back({Tok::kQuotes, s.substr(i, j - i)});
      i = j;
      continue;
    }
    static const std::vector<std::pair<char, Tok>> singles = {
        {'+', Tok::kAdd}, {'-', Tok::kSub}, {'*', Tok::kMul}, {'/', Tok::kDiv}, {'(', Tok::kLParen},
        {')', Tok::kRParen}, {'{', Tok::kLBrace}, {'}', Tok::kRBrace}, {'[', Tok::kLBracket}, {']', Tok::kRBracket},
        {'|', Tok::kBar}, {'_', Tok::kUnderscore}, {'^', Tok::kCaret}, {':', Tok::kColon}, {'<', Tok::kLt},
        {'>', Tok::kGt}, {'!', Tok::kBang}, {',', Tok::kComma}, {'.', Tok::kDot}};
    bool matched = false;
    for (const auto& [ch, type] : singles)
      if (c == ch) { out.push_back({type, std::string(1, c)}); matched = true; break; }
    if (!matched) return std::nullopt;
    ++i;
  }
  return out;
}

// ---- Expressions, as convert_* builds them (the values, not sympy's unevaluated tree). --------

struct Node;
using NodeP = std::shared_ptr<const Node>;

struct Node {
  enum Kind { kNumber, kSymbol, kInfinity, kAdd, kNeg, kMul, kPow, kFactorial, kAbs, kFloor, kCeil, kRoot, kFunc, kLog,
              kBinomial, kUndefined, kRelation };
  Kind kind;
  double number = 0;
  std::string name;  // symbol, function or relation operator
  std::vector<NodeP> args;
};

NodeP make(Node::Kind kind, std::vector<NodeP> args = {}, std::string name = {}, double number = 0) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->args = std::move(args);
  n->name = std::move(name);
  n->number = number;
  return n;
}
NodeP reciprocal(NodeP x) { return make(Node::kPow, {std::move(x), make(Node::kNumber, {}, {}, -1)}); }

bool has_symbols(const Node& n) {
  if (n.kind == Node::kSymbol) return true;
  for (const NodeP& a : n.args)
    if (has_symbols(*a)) return true;
  return false;
}

// sympy's str() of a subscript, enough to name x_1 and x_{1} alike.
std::string subscript_name(const Node& n) {
  if (n.kind == Node::kSymbol) return n.name;
  if (n.kind == Node::kNumber) {
    const double r = std::nearbyint(n.number);
    return r == n.number && std::fabs(r) < 1e15 ? std::to_string(static_cast<int64_t>(r)) : std::to_string(n.number);
  }
  std::string s = std::to_string(static_cast<int>(n.kind)) + "(";
  for (const NodeP& a : n.args) s += subscript_name(*a) + ",";
  return s + n.name + ")";
}

// A backtracking reader of LaTeX.g4's rules: every loop takes one more item only when that item
// reads whole, as antlr's prediction does; the first rule reads the longest expression it can and
// leaves the rest (parse_latex's rule `math: relation` has no EOF).
class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  NodeP relation() {
    NodeP left = expr();
    if (!left) return nullptr;
    while (true) {
      const size_t save = pos_;
      if (!at_relation_op()) break;
      const std::string op = t_[pos_].type == Tok::kEqual ? "=" : t_[pos_].text;
      const Tok type = t_[pos_++].type;
      NodeP right = expr();
      if (!right) { pos_ = save; break; }
      left = make(Node::kRelation, {left, right}, relation_name(type, op));
    }
    return left;
  }
  bool outside_subset() const { return outside_; }

 private:
  std::vector<Token> t_;
  size_t pos_ = 0;
  bool outside_ = false;

  bool at(Tok type, size_t ahead = 0) const { return pos_ + ahead < t_.size() && t_[pos_ + ahead].type == type; }
  bool accept(Tok type) {
    if (!at(type)) return false;
    ++pos_;
    return true;
  }
  bool at_relation_op() const {
    return at(Tok::kEqual) || at(Tok::kLt) || at(Tok::kLte) || at(Tok::kGt) || at(Tok::kGte) || at(Tok::kNeq);
  }
  static std::string relation_name(Tok type, const std::string& text) {
    switch (type) {
      case Tok::kLt: return "<";
      case Tok::kGt: return ">";
      case Tok::kLte: return "<=";
      case Tok::kGte: return ">=";
      case Tok::kNeq: return "!=";
      default: return text;
    }
  }
  // Reads `rule` or leaves the position as it was.
  NodeP attempt(const std::function<NodeP()>& rule) {
    const size_t save = pos_;
    const bool outside = outside_;
    NodeP n = rule();
    if (!n) { pos_ = save; outside_ = outside; }
    return n;
  }

  // expr() is read once per position (packrat): the alternatives that read the same span again
  // (f(x) as a function or as x times a group, |..| as a bar or an absolute value) would otherwise
  // take time exponential in the nesting. Nested deeper than kMaxDepth rules (expr, unary, comp:
  // about 100 parentheses) the reading fails, as sympy's parser runs out of Python's recursion
  // limit; the stack stays small whatever the text.
  static constexpr int kMaxDepth = 300;
  struct Deeper {
    int& depth;
    explicit Deeper(int& d) : depth(++d) {}
    ~Deeper() { --depth; }
    bool too_deep() const { return depth > kMaxDepth; }
  };
  struct Memo {
    NodeP node;
    size_t end;
    bool outside;
  };
  std::map<size_t, Memo> memo_;
  int depth_ = 0;

  NodeP expr() {
    if (const auto it = memo_.find(pos_); it != memo_.end()) {
      if (it->second.node) pos_ = it->second.end, outside_ = outside_ || it->second.outside;
      return it->second.node;
    }
    const Deeper deeper(depth_);
    if (deeper.too_deep()) return nullptr;
    const size_t start = pos_;
    const bool outside_before = outside_;
    outside_ = false;
    NodeP n = additive();
    memo_[start] = {n, pos_, outside_};
    if (!n) pos_ = start;
    outside_ = outside_before || (n && outside_);
    return n;
  }

  NodeP additive() {
    NodeP left = mp(false);
    if (!left) return nullptr;
    while (at(Tok::kAdd) || at(Tok::kSub)) {
      const bool minus = at(Tok::kSub);
      NodeP right = attempt([&] { ++pos_; return mp(false); });
      if (!right) break;
      left = make(Node::kAdd, {left, minus ? make(Node::kNeg, {right}) : right});
    }
    return left;
  }

  NodeP mp(bool nofunc) {
    NodeP left = unary(nofunc);
    if (!left) return nullptr;
    while (at(Tok::kMul) || at(Tok::kTimes) || at(Tok::kCdot) || at(Tok::kDiv) || at(Tok::kCmdDiv) || at(Tok::kColon)) {
      const bool divide = at(Tok::kDiv) || at(Tok::kCmdDiv) || at(Tok::kColon);
      NodeP right = attempt([&] { ++pos_; return unary(nofunc); });
      if (!right) break;
      left = make(Node::kMul, {left, divide ? reciprocal(right) : right});
    }
    return left;
  }

  NodeP unary(bool nofunc) {
    const Deeper deeper(depth_);
    if (deeper.too_deep()) return nullptr;
    if (at(Tok::kAdd) || at(Tok::kSub)) {
      const bool minus = at(Tok::kSub);
      ++pos_;
      NodeP inner = unary(nofunc);
      if (!inner) return nullptr;
      return minus ? make(Node::kNeg, {inner}) : inner;
    }
    std::vector<NodeP> items;
    NodeP first = postfix(false);
    if (!first) return nullptr;
    items.push_back(first);
    while (NodeP next = attempt([&] { return postfix(nofunc); })) items.push_back(next);
    return postfix_product(items);
  }

  // convert_postfix_list: the items' product, an 'x' between two items without symbols read as
  // a times sign.
  static NodeP postfix_product(const std::vector<NodeP>& items) {
    NodeP product = items[0];
    for (size_t i = 1; i < items.size(); ++i) {
      const Node& item = *items[i];
      if (i + 1 < items.size() && item.kind == Node::kSymbol && item.name == "x" && !has_symbols(*items[i - 1]) &&
          !has_symbols(*items[i + 1]))
        continue;
      product = make(Node::kMul, {product, items[i]});
    }
    return product;
  }

  NodeP postfix(bool nofunc) {
    NodeP e = exp(nofunc);
    if (!e) return nullptr;
    while (true) {
      if (accept(Tok::kBang)) { e = make(Node::kFactorial, {e}); continue; }
      if (at(Tok::kBar) && (at(Tok::kCaret, 1) || at(Tok::kUnderscore, 1)) && at(Tok::kLBrace, 2)) {
        outside_ = true;  // eval_at: |_{x=a}^{b}
        ++pos_;
        continue;
      }
      break;
    }
    return e;
  }

  NodeP exp(bool nofunc) {
    NodeP base = comp(nofunc);
    if (!base) return nullptr;
    while (at(Tok::kCaret)) {
      NodeP exponent = attempt([&]() -> NodeP {
        ++pos_;
        NodeP x = braced_expr();
        if (!x) x = atom();
        if (x) attempt([&] { return subexpr(); });  // a subscript after the exponent: read, unused
        return x;
      });
      if (!exponent) break;
      base = make(Node::kPow, {base, exponent});
    }
    return base;
  }

  NodeP braced_expr() {
    return attempt([&]() -> NodeP {
      if (!accept(Tok::kLBrace)) return nullptr;
      NodeP e = expr();
      if (!e || !accept(Tok::kRBrace)) return nullptr;
      return e;
    });
  }

  NodeP subexpr() {
    if (!accept(Tok::kUnderscore)) return nullptr;
    NodeP x = braced_expr();
    return x ? x : atom();
  }
  NodeP supexpr() {
    if (!accept(Tok::kCaret)) return nullptr;
    NodeP x = braced_expr();
    return x ? x : atom();
  }

  NodeP comp(bool nofunc) {
    const Deeper deeper(depth_);
    if (deeper.too_deep()) return nullptr;
    for (const auto& rule : std::vector<std::function<NodeP()>>{
             [&] { return group(); }, [&] { return abs_group(); }, [&] { return nofunc ? nullptr : func(); },
             [&] { return atom(); }, [&] { return floor_ceil(Tok::kLFloor, Tok::kRFloor, Node::kFloor); },
             [&] { return floor_ceil(Tok::kLCeil, Tok::kRCeil, Node::kCeil); }})
      if (NodeP n = attempt(rule)) return n;
    return nullptr;
  }

  NodeP group() {
    static const std::vector<std::pair<Tok, Tok>> pairs = {
        {Tok::kLParen, Tok::kRParen}, {Tok::kLBracket, Tok::kRBracket}, {Tok::kLBrace, Tok::kRBrace},
        {Tok::kLBraceLit, Tok::kRBraceLit}};
    for (const auto& [open, close] : pairs) {
      if (!at(open)) continue;
      return attempt([&, close = close]() -> NodeP {
        ++pos_;
        NodeP e = expr();
        return e && accept(close) ? e : nullptr;
      });
    }
    return nullptr;
  }

  NodeP abs_group() {
    if (!accept(Tok::kBar)) return nullptr;
    NodeP e = expr();
    return e && accept(Tok::kBar) ? make(Node::kAbs, {e}) : nullptr;
  }

  NodeP floor_ceil(Tok open, Tok close, Node::Kind kind) {
    if (!accept(open)) return nullptr;
    NodeP e = expr();
    return e && accept(close) ? make(kind, {e}) : nullptr;
  }

  // (subexpr? SINGLE_QUOTES? | SINGLE_QUOTES? subexpr?) after a letter or command: the name's suffix.
  std::string name_suffix() {
    std::string suffix;
    auto sub = [&] {
      if (NodeP s = attempt([&] { return subexpr(); })) suffix += "_{" + subscript_name(*s) + "}";
    };
    auto quotes = [&] {
      if (at(Tok::kQuotes)) suffix += t_[pos_++].text;
    };
    if (at(Tok::kQuotes)) { quotes(); sub(); } else { sub(); quotes(); }
    return suffix;
  }

  NodeP atom() {
    if (at(Tok::kLetter) || at(Tok::kSymbol)) {
      const Token& tok = t_[pos_++];
      if (tok.type == Tok::kSymbol && tok.text == "infty") return make(Node::kInfinity);
      return make(Node::kSymbol, {}, tok.text + name_suffix());
    }
    if (at(Tok::kDigit)) return number();
    if (at(Tok::kDifferential)) return make(Node::kSymbol, {}, "d" + t_[pos_++].text);
    if (accept(Tok::kMathit)) {
      if (!accept(Tok::kLBrace)) return nullptr;
      std::string text;
      while (at(Tok::kLetter)) text += t_[pos_++].text;
      return accept(Tok::kRBrace) ? make(Node::kSymbol, {}, text) : nullptr;
    }
    if (at(Tok::kFrac)) return frac();
    if (accept(Tok::kBinom)) {
      NodeP n = braced_expr();
      NodeP k = n ? braced_expr() : nullptr;
      return k ? make(Node::kBinomial, {n, k}) : nullptr;
    }
    if (at(Tok::kLAngle) || at(Tok::kLBar)) return outside();  // bra / ket
    return nullptr;
  }

  NodeP outside() {
    outside_ = true;
    ++pos_;
    return make(Node::kNumber, {}, {}, std::nan(""));
  }

  // number: DIGIT+ (',' DIGIT DIGIT DIGIT)* ('.' DIGIT+)?
  NodeP number() {
    std::string digits;
    while (at(Tok::kDigit)) digits += t_[pos_++].text;
    while (at(Tok::kComma) && at(Tok::kDigit, 1) && at(Tok::kDigit, 2) && at(Tok::kDigit, 3)) {
      digits += t_[pos_ + 1].text + t_[pos_ + 2].text + t_[pos_ + 3].text;
      pos_ += 4;
    }
    if (at(Tok::kDot) && at(Tok::kDigit, 1)) {
      digits += ".";
      ++pos_;
      while (at(Tok::kDigit)) digits += t_[pos_++].text;
    }
    return make(Node::kNumber, {}, {}, std::strtod(digits.c_str(), nullptr));
  }

  NodeP frac_part() {
    if (at(Tok::kDigit)) return make(Node::kNumber, {}, {}, std::stod(t_[pos_++].text));
    return braced_expr();
  }

  NodeP frac() {
    ++pos_;
    // d/dx and partial derivatives: a lower part that is one differential, or \partial and a name.
    const bool derivative = (at(Tok::kLBrace) || at(Tok::kDigit)) && [&] {
      size_t p = pos_;
      if (t_[p].type == Tok::kLBrace) {  // skip the upper braces
        int depth = 0;
        for (; p < t_.size(); ++p) {
          depth += t_[p].type == Tok::kLBrace ? 1 : t_[p].type == Tok::kRBrace ? -1 : 0;
          if (depth == 0) break;
        }
      }
      ++p;
      if (p + 2 < t_.size() && t_[p].type == Tok::kLBrace && t_[p + 1].type == Tok::kDifferential &&
          t_[p + 2].type == Tok::kRBrace)
        return true;
      return p + 3 < t_.size() && t_[p].type == Tok::kLBrace && t_[p + 1].type == Tok::kSymbol &&
             t_[p + 1].text == "partial" && (t_[p + 2].type == Tok::kLetter || t_[p + 2].type == Tok::kSymbol) &&
             t_[p + 3].type == Tok::kRBrace;
    }();
    NodeP upper = frac_part();
    NodeP lower = upper ? frac_part() : nullptr;
    if (!lower) return nullptr;
    if (derivative) outside_ = true;
    return make(Node::kMul, {upper, reciprocal(lower)});
  }

  NodeP func() {
    if (at(Tok::kFuncNormal)) return normal_func();
    if (at(Tok::kLetter) || at(Tok::kSymbol)) {  // f(x), f_1'(x, y): an undefined function
      const std::string name = t_[pos_++].text + name_suffix();
      if (!accept(Tok::kLParen)) return nullptr;
      std::vector<NodeP> args;
      while (true) {
        NodeP a = expr();
        if (!a) return nullptr;
        args.push_back(a);
        if (!accept(Tok::kComma)) break;
      }
      return accept(Tok::kRParen) ? make(Node::kUndefined, std::move(args), name) : nullptr;
    }
    if (accept(Tok::kSqrt)) {
      NodeP root;
      if (at(Tok::kLBracket)) {
        root = attempt([&]() -> NodeP {
          ++pos_;
          NodeP r = expr();
          return r && accept(Tok::kRBracket) ? r : nullptr;
        });
        if (!root) return nullptr;
      }
      NodeP base = braced_expr();
      if (!base) return nullptr;
      return make(Node::kRoot, {base, root ? root : make(Node::kNumber, {}, {}, 2)});
    }
    if (at(Tok::kOverline) || at(Tok::kInt) || at(Tok::kSum) || at(Tok::kProd) || at(Tok::kLim)) return outside();
    return nullptr;
  }

  NodeP normal_func() {
    const std::string name = t_[pos_++].text;
    NodeP sub, sup;
    if (at(Tok::kUnderscore)) {
      sub = attempt([&] { return subexpr(); });
      sup = attempt([&] { return supexpr(); });
    } else {
      sup = attempt([&] { return supexpr(); });
      sub = attempt([&] { return subexpr(); });
    }
    NodeP arg = attempt([&]() -> NodeP {
      if (!accept(Tok::kLParen)) return nullptr;
      NodeP a = expr();
      if (!a) return nullptr;
      while (at(Tok::kComma)) {  // func_arg: expr (',' func_arg)?, of which the first is used
        ++pos_;
        if (!expr()) return nullptr;
      }
      return accept(Tok::kRParen) ? a : nullptr;
    });
    if (!arg) arg = mp(true);
    if (!arg) return nullptr;
    return apply_normal(name, arg, sub, sup);
  }

  static NodeP apply_normal(std::string name, const NodeP& arg, const NodeP& sub, const NodeP& sup) {
    NodeP f;
    if (name.rfind("arc", 0) == 0 && name.size() == 6) name = "a" + name.substr(3);  // arcsin -> asin
    if (name == "arsinh" || name == "arcosh" || name == "artanh") name = "a" + name.substr(2);
    bool should_pow = true;
    const bool sup_is_minus_one = sup && sup->kind == Node::kNeg && sup->args[0]->kind == Node::kNumber &&
                                  sup->args[0]->number == 1;
    if (name == "log" || name == "lg" || name == "ln") {
      NodeP base = sub ? sub : make(Node::kNumber, {}, {}, name == "lg" ? 10.0 : std::exp(1.0));
      f = make(Node::kLog, {arg, base});
    } else {
      static const std::set<std::string> trig = {"sin", "cos", "tan", "csc", "sec", "cot", "sinh", "cosh", "tanh"};
      if (trig.count(name) && sup_is_minus_one) {
        name = "a" + name;
        should_pow = false;
      }
      f = make(Node::kFunc, {arg}, name);
    }
    const bool sup_truthy = sup && !(sup->kind == Node::kNumber && sup->number == 0);
    return sup_truthy && should_pow ? make(Node::kPow, {f, sup}) : f;
  }
};

// ---- Values. ----------------------------------------------------------------------------------

// A symbol's value at one sample point: the same for every occurrence of the name.
Complex symbol_value(const std::string& name, int sample) {
  uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(sample + 1) * 0x9E3779B97F4A7C15ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  auto unit = [&h] {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return static_cast<double>(h >> 11) / static_cast<double>(1ull << 53);
  };
  const double re = (unit() < 0.5 ? -1 : 1) * (0.35 + 1.3 * unit());
  const double im = (unit() < 0.5 ? -1 : 1) * (0.2 + 0.9 * unit());
  return {re, im};
}

Complex gamma_of(Complex z) {
  if (z.imag() != 0) return {std::nan(""), 0};
  return std::tgamma(z.real());
}

Complex evaluate(const Node& n, int sample, bool real) {
  const double nan = std::nan("");
  auto arg = [&](size_t i) { return evaluate(*n.args[i], sample, real); };
  auto realize = [&](Complex z) { return real && (z.imag() != 0 || std::isnan(z.imag())) ? Complex(nan, 0) : z; };
  switch (n.kind) {
    case Node::kNumber: return n.number;
    case Node::kSymbol: return real ? Complex(nan, 0) : symbol_value(n.name, sample);
    case Node::kInfinity: return std::numeric_limits<double>::infinity();
    case Node::kAdd: return arg(0) + arg(1);
    case Node::kNeg: return -arg(0);
    case Node::kMul: {
      const Complex a = arg(0), b = arg(1);
      if (real || (a.imag() == 0 && b.imag() == 0)) return a.real() * b.real();  // inf * 2 stays inf
      return a * b;
    }
    case Node::kPow: {
      const Complex base = arg(0), e = arg(1);
      if (base == Complex(0, 0) && e.real() < 0 && e.imag() == 0) return nan;  // zoo
      if (base.imag() == 0 && e.imag() == 0) {
        const double r = std::pow(base.real(), e.real());
        if (!std::isnan(r)) return r;
        if (real) return nan;
      }
      return std::pow(base, e);
    }
    case Node::kFactorial: return gamma_of(arg(0) + 1.0);
    case Node::kAbs: return std::abs(arg(0));
    case Node::kFloor: { const Complex z = arg(0); return {std::floor(z.real()), std::floor(z.imag())}; }
    case Node::kCeil: { const Complex z = arg(0); return {std::ceil(z.real()), std::ceil(z.imag())}; }
    case Node::kRoot: {
      const Complex base = arg(0), r = arg(1);
      if (base.imag() == 0 && r.imag() == 0 && base.real() >= 0) return std::pow(base.real(), 1.0 / r.real());
      return realize(std::pow(base, 1.0 / r));
    }
    case Node::kLog: {
      const Complex x = arg(0), b = arg(1);
      if (x.imag() == 0 && b.imag() == 0 && x.real() > 0 && b.real() > 0) return std::log(x.real()) / std::log(b.real());
      return realize(std::log(x) / std::log(b));
    }
    case Node::kFunc: {
      const Complex x = arg(0);
      const std::string& f = n.name;
      Complex y;
      if (f == "sin") y = std::sin(x);
      else if (f == "cos") y = std::cos(x);
      else if (f == "tan") y = std::tan(x);
      else if (f == "csc") y = 1.0 / std::sin(x);
      else if (f == "sec") y = 1.0 / std::cos(x);
      else if (f == "cot") y = 1.0 / std::tan(x);
      else if (f == "asin") y = std::asin(x);
      else if (f == "acos") y = std::acos(x);
      else if (f == "atan") y = std::atan(x);
      else if (f == "acsc") y = std::asin(1.0 / x);
      else if (f == "asec") y = std::acos(1.0 / x);
      else if (f == "acot") y = std::atan(1.0 / x);
      else if (f == "sinh") y = std::sinh(x);
      else if (f == "cosh") y = std::cosh(x);
      else if (f == "tanh") y = std::tanh(x);
      else if (f == "asinh") y = std::asinh(x);
      else if (f == "acosh") y = std::acosh(x);
      else if (f == "atanh") y = std::atanh(x);
      else if (f == "exp") y = std::exp(x);
      else y = nan;
      if (x.imag() == 0 && std::abs(y.imag()) < 1e-300) y = y.real();  // a real argument inside the domain
      return realize(y);
    }
    case Node::kBinomial: {
      const Complex top = arg(0), k = arg(1);
      if (k.imag() == 0 && k.real() >= 0 && std::nearbyint(k.real()) == k.real() && k.real() < 1000) {
        Complex r = 1;
        for (int i = 0; i < static_cast<int>(k.real()); ++i) r = r * (top - static_cast<double>(i)) / static_cast<double>(i + 1);
        return r;
      }
      return gamma_of(top + 1.0) / (gamma_of(k + 1.0) * gamma_of(top - k + 1.0));
    }
    case Node::kUndefined: {  // an unknown f(...): the same pseudo-random function of its arguments everywhere
      Complex y = symbol_value(n.name, 7919);
      for (size_t i = 0; i < n.args.size(); ++i) y += std::sin(arg(i) * (1.3 + static_cast<double>(i)) + y);
      return y;
    }
    case Node::kRelation: return nan;
  }
  return nan;
}

bool finite(Complex z) { return std::isfinite(z.real()) && std::isfinite(z.imag()); }

// math.isclose(b, a, rel_tol=1e-4) on floats (equal infinities are close).
bool numeric_close(double a, double b) {
  if (a == b) return true;
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  return std::fabs(a - b) <= 1e-4 * std::max(std::fabs(a), std::fabs(b));
}

bool same_value(Complex a, Complex b) {
  if (!finite(a) || !finite(b)) return false;
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

// Two expressions equal at every sample point (sympy: a == b, a.equals(b), simplify(a - b) == 0),
// or, without symbols, with floats within 1e-4 (numeric_equal(float(N(a)), float(N(b)))).
bool expressions_equal(const Node& a, const Node& b) {
  if (!has_symbols(a) && !has_symbols(b)) {
    const Complex ra = evaluate(a, 0, true), rb = evaluate(b, 0, true);
    if (!std::isnan(ra.real()) && !std::isnan(rb.real())) return numeric_close(ra.real(), rb.real());
    return same_value(evaluate(a, 0, false), evaluate(b, 0, false));  // complex constants: simplify(a - b) == 0
  }
  int compared = 0;
  for (int sample = 0; sample < 6; ++sample) {
    const Complex va = evaluate(a, sample, false), vb = evaluate(b, sample, false);
    if (!finite(va) && !finite(vb)) continue;
    if (!same_value(va, vb)) return false;
    ++compared;
  }
  return compared >= 3;
}

struct Parsed {
  NodeP node;
  bool outside = false;
};

// Longer texts are not read: sympy's converter recurses once per operator of a chain, so Python's
// recursion limit stops it well before this; here it keeps every tree shallow enough to walk.
constexpr size_t kMaxTokens = 1000;

std::optional<Parsed> parse_latex(const std::string& text) {
  std::optional<std::vector<Token>> tokens = lex(text);
  if (!tokens || tokens->size() > kMaxTokens) return std::nullopt;
  Parser parser(std::move(*tokens));
  NodeP n = parser.relation();
  if (!n) return std::nullopt;
  return Parsed{n, parser.outside_subset()};
}

// symbolic_equal's _parse: parse_latex of the text with "\\" read as "\", then of the text itself.
std::optional<Parsed> parse_answer(const std::string& s) {
  std::string single;
  for (size_t i = 0; i < s.size(); ++i) {
    single += s[i];
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\\') ++i;
  }
  if (auto p = parse_latex(single)) return p;
  return parse_latex(s);
}

}  // namespace

bool latex_parses(const std::string& text) { return parse_latex(text).has_value(); }

SymbolicVerdict latex_symbolic_equal(const std::string& a, const std::string& b) {
  const std::optional<Parsed> pa = parse_answer(a), pb = parse_answer(b);
  if (!pa || !pb) return a == b ? SymbolicVerdict::kEqual : SymbolicVerdict::kNotEqual;  // strings: str(a) == str(b)
  if (pa->outside || pb->outside) return SymbolicVerdict::kOutsideSubset;
  const Node& x = *pa->node;
  const Node& y = *pb->node;
  const bool rx = x.kind == Node::kRelation, ry = y.kind == Node::kRelation;
  if (rx || ry) {
    if (!(rx && ry) || x.name != y.name) return SymbolicVerdict::kNotEqual;
    if (expressions_equal(*x.args[0], *y.args[0]) && expressions_equal(*x.args[1], *y.args[1]))
      return SymbolicVerdict::kEqual;
    if (x.name == "=") {  // (abs(a.lhs - a.rhs)).equals(abs(b.lhs - b.rhs))
      const NodeP dx = make(Node::kAbs, {make(Node::kAdd, {x.args[0], make(Node::kNeg, {x.args[1]})})});
      const NodeP dy = make(Node::kAbs, {make(Node::kAdd, {y.args[0], make(Node::kNeg, {y.args[1]})})});
      if (expressions_equal(*dx, *dy)) return SymbolicVerdict::kEqual;
    }
    return SymbolicVerdict::kNotEqual;
  }
  return expressions_equal(x, y) ? SymbolicVerdict::kEqual : SymbolicVerdict::kNotEqual;
}

}  // namespace kvbench::metrics
