#include "metrics/gpqa.hpp"

#include <map>
#include <optional>

#include "metrics/gsm8k.hpp"
#include "metrics/unicode.hpp"

namespace kvbench::metrics {

namespace {

using Text = std::u32string;  // Python str: matched and sliced in code points

// RegexFilter's result: the match stripped, or the fallback.
std::string stripped(const Text& match) { return python_strip(utf8_encode(match)); }

// filter_ignores with ignore_case and ignore_punctuation: str.lower, then every P* character out.
Text lower_without_punctuation(const std::string& text) {
  Text out;
  for (char32_t c : python_lower(utf8_decode(text)))
    if (!unicode_punctuation(c)) out += c;
  return out;
}

// re.findall of literal alternatives tried in order (re.escape'd choices joined by '|'): at each
// position the first alternative that matches; after an empty match the same position allows only
// a non-empty one (Python 3.7+), then the scan moves on. The last match, or nullopt.
std::optional<Text> last_alternative(const Text& text, const std::vector<Text>& alternatives) {
  std::optional<Text> last;
  bool after_empty = false;
  for (size_t pos = 0; pos <= text.size();) {
    const Text* found = nullptr;
    for (const Text& alt : alternatives)
      if (!(after_empty && alt.empty()) && text.compare(pos, alt.size(), alt) == 0 && pos + alt.size() <= text.size()) {
        found = &alt;
        break;
      }
    if (!found) {
      ++pos;
      after_empty = false;
      continue;
    }
    last = *found;
    after_empty = found->empty();
    pos += found->size();
  }
  return last;
}

}  // namespace

std::string gpqa_strict_answer(const std::string& output) {
  const std::string marker = "The answer is ";
  for (size_t at = output.find(marker); at != std::string::npos; at = output.find(marker, at + 1)) {
    const size_t from = at + marker.size();
    const size_t line_end = std::min(output.find('\n', from), output.size());
    const Text line = utf8_decode(output.substr(from, line_end - from));
    if (!line.empty()) return stripped(line.substr(0, line.size() - 1));  // (.*)(?=.): one character must follow
  }
  return kGsm8kInvalid;
}

std::string gpqa_flexible_answer(const std::string& output, const std::vector<std::string>& choices) {
  const Text text = utf8_decode(output);
  // (\([A-Z]\)), group_select -1
  std::optional<Text> last;
  for (size_t i = 0; i + 2 < text.size(); ++i)
    if (text[i] == U'(' && text[i + 1] >= U'A' && text[i + 1] <= U'Z' && text[i + 2] == U')') {
      last = text.substr(i, 3);
      i += 2;
    }
  if (last && !stripped(*last).empty()) return stripped(*last);
  // The choices' texts, as their letters.
  std::vector<Text> alternatives;
  std::map<std::string, std::string> letter_of;
  for (size_t k = 0; k < choices.size(); ++k) {
    const Text alt = lower_without_punctuation(python_strip(choices[k]));
    alternatives.push_back(alt);
    letter_of[utf8_encode(alt)] = "(" + std::string(1, static_cast<char>('A' + k)) + ")";
  }
  if (const std::optional<Text> found = last_alternative(lower_without_punctuation(output), alternatives)) {
    std::string match = stripped(*found);
    if (!match.empty() && letter_of.count(match)) match = letter_of.at(match);
    if (!match.empty()) return match;
  }
  // `:[\s]*(A|B|...)`, the letters of the choices, group_select -1
  std::optional<char32_t> letter;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != U':') continue;
    size_t j = i + 1;
    while (j < text.size() && python_isspace(text[j])) ++j;
    if (j < text.size() && text[j] >= U'A' && text[j] < U'A' + choices.size()) {
      letter = text[j];
      i = j;
    }
  }
  if (letter) return "(" + utf8_encode(*letter) + ")";
  return kGsm8kInvalid;
}

bool gpqa_exact_match(const std::string& prediction, const std::string& gold) {
  auto normalise = [](const std::string& s) {
    std::string out;
    for (char c : python_lower(s))  // string.punctuation: the ASCII punctuation characters
      if (!std::ispunct(static_cast<unsigned char>(c))) out += c;
    return out;
  };
  return normalise(prediction) == normalise(gold);
}

}  // namespace kvbench::metrics
