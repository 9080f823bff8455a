#pragma once
// Plain-text corpora: whole files (wiki.test.raw, PG19 books) and TinyStories' <|endoftext|>
// separated stories.
#include <string>
#include <vector>

namespace kvbench::datasets {

std::string read_text(const std::string& path);  // the bytes as stored (CRLF kept)
// Stories separated by lines "<|endoftext|>", each trimmed of surrounding blank lines.
std::vector<std::string> read_tinystories(const std::string& path);

}  // namespace kvbench::datasets
