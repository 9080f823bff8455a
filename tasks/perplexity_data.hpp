#pragma once
// The texts the perplexity protocols of the papers read, in the official formats:
//  - WikiText rows as Hugging Face's wikitext loader yields them (BUZZ Table 3 iterates
//    data["text"]): one row per line of wiki.{test,valid}.raw, the line with its "\n", a blank
//    line as ""; or a JSONL export with a "text" field per row.
//  - PG19 books (Cascade Table 1): a folder of <book>.txt files (deepmind/pg19's layout, taken in
//    file-name order), a JSONL export with one "text" per book (emozilla/pg19-test, row order = the
//    book index of the paper's Table 10), or one plain-text book.
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench::tasks::perplexity_data {

struct Text {
  std::string id;
  std::string text;
};

// HF wikitext rows of a .raw file (or the "text" field of each JSONL record).
std::vector<std::string> read_wikitext_rows(const std::string& path);

// Books of a folder (*.txt, sorted by name), a .jsonl/.jsonl.gz file ("text"; id = "short_book_title"
// when present, else the row index) or a single text file (one book, id = its file name).
std::vector<Text> read_books(const std::string& path);

// The Cascade reference's PG19 subset (cascade/dataset/pg19.py): books sorted by token length
// (stable), then sorted positions 20..43 followed by position 19 — 25 books. Returns indices into
// the lengths. std::invalid_argument when fewer than 44 books are given.
std::vector<size_t> cascade_pg19_selection(const std::vector<int64_t>& token_lengths);

}  // namespace kvbench::tasks::perplexity_data
