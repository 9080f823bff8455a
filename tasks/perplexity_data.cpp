#include "tasks/perplexity_data.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <stdexcept>

#include "datasets/data_error.hpp"
#include "datasets/jsonl_reader.hpp"
#include "datasets/text_reader.hpp"

namespace kvbench::tasks::perplexity_data {
namespace {

bool is_jsonl(const std::string& path) {
  auto ends = [&](const std::string& s) { return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0; };
  return ends(".jsonl") || ends(".jsonl.gz");
}

}  // namespace

std::vector<std::string> read_wikitext_rows(const std::string& path) {
  std::vector<std::string> rows;
  if (is_jsonl(path)) {
    datasets::for_each_jsonl(path, [&](const datasets::JsonRecord& r) {
      rows.push_back(r.string_field("text"));
      return true;
    });
    return rows;
  }
  // Python's text-mode iteration: universal newlines ("\r\n" and "\r" read as "\n"), each line
  // keeps its "\n"; the loader turns whitespace-only lines into "".
  const std::string bytes = datasets::read_text(path);
  std::string line;
  auto flush = [&] {
    const bool blank = line.find_first_not_of(" \t\n\r\f\v") == std::string::npos;
    rows.push_back(blank ? "" : line);
    line.clear();
  };
  for (size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (c == '\r') {
      if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
      c = '\n';
    }
    line += c;
    if (c == '\n') flush();
  }
  if (!line.empty()) flush();
  return rows;
}

std::vector<Text> read_books(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<Text> books;
  if (fs::is_directory(path)) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) books.push_back({f.stem().string(), datasets::read_text(f.string())});
    if (books.empty()) throw std::runtime_error(path + ": no <book>.txt files in this folder (PG19's layout: test/<id>.txt)");
    return books;
  }
  if (is_jsonl(path)) {
    datasets::for_each_jsonl(path, [&](const datasets::JsonRecord& r) {
      const std::string id = r.has("short_book_title") && r.value["short_book_title"].is_string()
                                 ? r.string_field("short_book_title")
                                 : "book-" + std::to_string(books.size());
      books.push_back({id, r.string_field("text")});
      return true;
    });
    if (books.empty()) throw std::runtime_error(path + ": no books (expected one JSON object with \"text\" per line)");
    return books;
  }
  books.push_back({fs::path(path).stem().string(), datasets::read_text(path)});
  return books;
}

std::vector<size_t> cascade_pg19_selection(const std::vector<int64_t>& token_lengths) {
  if (token_lengths.size() < 44)
    throw std::invalid_argument("the Cascade PG19 subset takes the books at sorted-length positions 20..43 and 19, so it needs at "
                                "least 44 books; got " + std::to_string(token_lengths.size()) +
                                " (task_params.books: \"all\" streams every book given)");
  std::vector<size_t> order(token_lengths.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return token_lengths[a] < token_lengths[b]; });
  std::vector<size_t> picked(order.begin() + 20, order.begin() + 44);
  picked.push_back(order[19]);
  return picked;
}

}  // namespace kvbench::tasks::perplexity_data
