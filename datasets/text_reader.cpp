#include "datasets/text_reader.hpp"

#include "datasets/regular_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kvbench::datasets {

std::string read_text(const std::string& path) {
  return read_regular_file(path, "text file");
}

std::vector<std::string> read_tinystories(const std::string& path) {
  std::istringstream in(read_text(path));
  std::vector<std::string> stories;
  std::string line, story;
  auto flush = [&] {
    const auto first = story.find_first_not_of(" \n\r\t");
    if (first != std::string::npos) {
      const auto last = story.find_last_not_of(" \n\r\t");
      stories.push_back(story.substr(first, last - first + 1));
    }
    story.clear();
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == "<|endoftext|>") {
      flush();
      continue;
    }
    story += line + "\n";
  }
  flush();
  if (stories.empty()) throw std::runtime_error(path + ": no stories (the file is empty or holds only whitespace)");
  return stories;
}

}  // namespace kvbench::datasets
