#include "datasets/json_parse.hpp"

#include <cctype>
#include <vector>

#include "datasets/regular_file.hpp"

namespace kvbench::datasets {
namespace {

struct Position {
  int64_t line;
  int64_t column;
};

Position position_of(std::string_view text, size_t offset, int64_t first_line) {
  Position p{first_line, 1};
  for (size_t i = 0; i < std::min(offset, text.size()); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

[[noreturn]] void fail_at(std::string_view text, size_t offset, const std::string& origin, int64_t first_line,
                          const std::string& what) {
  const Position p = position_of(text, offset, first_line);
  throw DataError(origin, p.line, "invalid JSON: " + what + " (column " + std::to_string(p.column) + ")");
}

// Calls fn(offset, c) for every character outside string literals (the opening quote of a string
// included, its contents and escapes skipped): a bracket inside a value is not structure.
template <class Fn>
void for_each_outside_strings(std::string_view text, Fn&& fn) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    fn(i, c);
  }
}

// Depth of nesting, counted before nlohmann builds anything.
void check_depth(std::string_view text, const std::string& origin, int64_t first_line) {
  int depth = 0;
  for_each_outside_strings(text, [&](size_t i, char c) {
    if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth)
        fail_at(text, i, origin, first_line,
                "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels of objects and arrays");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  });
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string short_message(const std::exception& e) {
  std::string what = e.what();
  if (!what.empty() && what[0] == '[') {
    const size_t end = what.find("] ");
    if (end != std::string::npos) what = what.substr(end + 2);
  }
  return what;
}

// The offset of the n-th (1-based) occurrence of "key" used as an object key, or npos.
size_t nth_key_offset(std::string_view text, const std::string& key, int n) {
  const std::string quoted = nlohmann::json(key).dump();
  size_t at = 0;
  while ((at = text.find(quoted, at)) != std::string_view::npos) {
    size_t after = at + quoted.size();
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r'))
      ++after;
    if (after < text.size() && text[after] == ':' && --n == 0) return at;
    at += quoted.size();
  }
  return std::string_view::npos;
}

struct DuplicateKey {
  std::string key;
  int occurrence;  // how many times the key had been seen as a key before, anywhere, + 1
};

using Json = nlohmann::json;

// nlohmann's DOM builder (json_sax_dom_parser) plus the duplicate-key check, as a SAX handler.
// Not nlohmann's callback parser: its end_object scans the whole parent container for a
// discarded value after every object, quadratic in an array of objects (a tokenizer.json with
// 200,000 added_tokens took 30 s). Each key is inserted once into its object's map, and an
// insertion that finds the key already there is the duplicate: no separate set of keys.
class CheckedDomBuilder {
 public:
  explicit CheckedDomBuilder(Json& root) : root_(root) {}

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(Json::number_integer_t v) { return value(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(v); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return value(v); }
  bool string(Json::string_t& v) { return value(std::move(v)); }
  bool binary(Json::binary_t& v) { return value(std::move(v)); }
  bool start_object(std::size_t) {
    open_.push_back(place(Json::object()));
    return true;
  }
  bool key(Json::string_t& k) {
    auto inserted = open_.back()->get_ref<Json::object_t&>().try_emplace(k, nullptr);
    if (!inserted.second) throw DuplicateKey{k, 0};
    member_ = &inserted.first->second;
    return true;
  }
  bool end_object() {
    open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    open_.push_back(place(Json::array()));
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  // Rethrown as the parser made it (parse_error with its byte, out_of_range for a number).
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

 private:
  template <class V>
  bool value(V&& v) {
    place(Json(std::forward<V>(v)));
    return true;
  }
  // The new value's home: the root, the end of the open array, or the member of the open object
  // whose key came last. Containers on open_ stay put: nothing is added to an array while its
  // last element is the open one, and std::map never moves its values.
  Json* place(Json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *open_.back();
    if (top.is_array()) {
      auto& array = top.get_ref<Json::array_t&>();
      array.push_back(std::move(v));
      return &array.back();
    }
    *member_ = std::move(v);
    return member_;
  }

  Json& root_;
  std::vector<Json*> open_;  // the objects and arrays not yet closed, outermost first
  Json* member_ = nullptr;    // the value slot of the last key
};

// Which occurrence of `key` as a key (1-based, anywhere in the text) repeats one in its own object:
// a second pass, on the error path only, so the first keeps no count of every key. Builds nothing.
class DuplicateCounter {
 public:
  explicit DuplicateCounter(const std::string& key) : key_(key) {}

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(Json::number_integer_t) { return true; }
  bool number_unsigned(Json::number_unsigned_t) { return true; }
  bool number_float(Json::number_float_t, const Json::string_t&) { return true; }
  bool string(Json::string_t&) { return true; }
  bool binary(Json::binary_t&) { return true; }
  bool start_object(std::size_t) {
    seen_in_object_.push_back(false);
    return true;
  }
  bool key(Json::string_t& k) {
    if (k != key_) return true;
    ++occurrence_;
    if (seen_in_object_.back()) {
      found_ = true;
      return false;  // stops the parse
    }
    seen_in_object_.back() = true;
    return true;
  }
  bool end_object() {
    seen_in_object_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const Json::exception&) { return false; }

  int occurrence() const { return found_ ? occurrence_ : 1; }

 private:
  const std::string& key_;
  std::vector<bool> seen_in_object_;
  int occurrence_ = 0;
  bool found_ = false;
};

int duplicate_occurrence(std::string_view text, const std::string& key) {
  DuplicateCounter counter(key);
  Json::sax_parse(text.begin(), text.end(), &counter);
  return counter.occurrence();
}

}  // namespace

std::vector<size_t> json_array_element_offsets(std::string_view text) {
  std::vector<size_t> offsets;
  int depth = 0;
  bool element_next = false;
  for_each_outside_strings(text, [&](size_t i, char c) {
    if (std::isspace(static_cast<unsigned char>(c))) return;
    if (element_next && depth == 1) offsets.push_back(i), element_next = false;
    if (c == '[' || c == '{') element_next = ++depth == 1;
    else if (c == ']' || c == '}') --depth;
    else if (c == ',' && depth == 1) element_next = true;
  });
  return offsets;
}

nlohmann::json parse_json(std::string_view text, const std::string& origin, int64_t first_line) {
  check_depth(text, origin, first_line);
  try {
    Json root;
    CheckedDomBuilder builder(root);
    Json::sax_parse(text.begin(), text.end(), &builder);  // strict: nothing may follow the value
    return root;
  } catch (const DuplicateKey& d) {
    const size_t at = nth_key_offset(text, d.key, duplicate_occurrence(text, d.key));
    fail_at(text, at == std::string_view::npos ? 0 : at, origin, first_line,
            "duplicate key \"" + d.key + "\" in one object (JSON readers disagree on which value wins)");
  } catch (const nlohmann::json::parse_error& e) {
    // "parse error at line 1, column 5: syntax error ..." -> "syntax error ...": our position
    // is the one in the file (JSONL records start further down).
    std::string what = short_message(e);
    const size_t colon = what.find(": ");
    if (what.rfind("parse error at line ", 0) == 0 && colon != std::string::npos) what = what.substr(colon + 2);
    fail_at(text, e.byte > 0 ? e.byte - 1 : 0, origin, first_line, what);
  } catch (const nlohmann::json::out_of_range& e) {
    // "number overflow parsing '1e400'": locate the number.
    std::string what = short_message(e);
    size_t at = 0;
    const size_t q1 = what.find('\''), q2 = what.rfind('\'');
    if (q1 != std::string::npos && q2 > q1) at = text.find(what.substr(q1 + 1, q2 - q1 - 1));
    fail_at(text, at == std::string_view::npos ? 0 : at, origin, first_line,
            what + " (a number beyond the range of a double)");
  } catch (const nlohmann::json::exception& e) {
    fail_at(text, 0, origin, first_line, short_message(e));
  }
}

nlohmann::json read_json_file(const std::string& path) { return parse_json(read_regular_file(path, "JSON file"), path); }

}  // namespace kvbench::datasets
