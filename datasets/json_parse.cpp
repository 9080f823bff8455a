#include "datasets/json_parse.hpp"

#include <cctype>
#include <unordered_set>
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

// Which occurrence of `key` as a key (1-based, anywhere in the text) repeats one in its own object:
// a second pass, on the error path only, so the first keeps no count of every key.
int duplicate_occurrence(std::string_view text, const std::string& key) {
  std::vector<bool> seen_in_object;
  int occurrence = 0;
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      seen_in_object.push_back(false);
    } else if (event == Event::object_end) {
      if (!seen_in_object.empty()) seen_in_object.pop_back();
    } else if (event == Event::key && !seen_in_object.empty() && parsed.get_ref<const std::string&>() == key) {
      ++occurrence;
      if (seen_in_object.back()) throw DuplicateKey{key, occurrence};
      seen_in_object.back() = true;
    }
    return true;
  };
  try {
    const nlohmann::json reparsed = nlohmann::json::parse(text.begin(), text.end(), callback);
    (void)reparsed;  // only the callback's count matters
  } catch (const DuplicateKey& d) {
    return d.occurrence;
  } catch (const nlohmann::json::exception&) {
  }
  return 1;
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
  // Hashed: a tokenizer.json holds ~150k keys in one object (its vocabulary).
  std::vector<std::unordered_set<std::string>> open_objects;
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second) throw DuplicateKey{key, 0};
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), callback);
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
