#include "datasets/line_reader.hpp"

#include "datasets/regular_file.hpp"

#include <zlib.h>

#include <cstdio>
#include <stdexcept>

namespace kvbench::datasets {

// gzopen reads plain files transparently too, so one code path serves both.
struct LineReader::Impl {
  gzFile file = nullptr;
  std::string buffer;
  size_t pos = 0;
  bool eof = false;

  bool fill(const std::string& path) {
    if (eof) return false;
    char chunk[1 << 16];
    const int got = gzread(file, chunk, sizeof(chunk));
    int code = Z_OK;
    const char* msg = gzerror(file, &code);
    // zlib reports a gzip stream cut short as the soft error Z_BUF_ERROR ("unexpected end of
    // file") and still returns the bytes it could inflate: without this check a truncated
    // download reads as a complete, shorter file.
    if (code == Z_BUF_ERROR)
      throw std::runtime_error(path + ": truncated gzip file: it ends before the gzip trailer (the data is incomplete)");
    if (got < 0 || (code != Z_OK && code != Z_STREAM_END)) {
      std::string detail = msg ? msg : "unknown";
      if (detail.rfind(path + ": ", 0) == 0) detail = detail.substr(path.size() + 2);  // zlib prefixes the path
      if (code == Z_DATA_ERROR)
        throw std::runtime_error(path + ": corrupt gzip file: " + detail +
                                 (detail.find("check") != std::string::npos ? " (CRC or length mismatch)" : ""));
      throw std::runtime_error(path + ": read error: " + detail);
    }
    if (got == 0) {
      eof = true;
      return false;
    }
    buffer.erase(0, pos);
    pos = 0;
    buffer.append(chunk, static_cast<size_t>(got));
    return true;
  }
};

LineReader::LineReader(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
  require_regular_file(path, "data file");
  impl_->file = gzopen(path.c_str(), "rb");
  if (!impl_->file) throw std::runtime_error(path + ": cannot open");
  gzbuffer(impl_->file, 1 << 17);
}

LineReader::~LineReader() {
  if (impl_ && impl_->file) gzclose(impl_->file);
}

bool LineReader::next(std::string& line) {
  Impl& s = *impl_;
  size_t scanned = s.pos;  // bytes before this offset hold no newline
  while (true) {
    const size_t nl = s.buffer.find('\n', scanned);
    if (nl != std::string::npos) {
      line.assign(s.buffer, s.pos, nl - s.pos);
      s.pos = nl + 1;
      ++line_number_;
      return true;
    }
    const size_t pending = s.buffer.size() - s.pos;
    if (!s.fill(path_)) break;
    scanned = pending;  // fill() moved the unread bytes to the front
  }
  if (s.pos < s.buffer.size()) {  // a last line without a newline
    line.assign(s.buffer, s.pos, std::string::npos);
    s.pos = s.buffer.size();
    ++line_number_;
    return true;
  }
  return false;
}

}  // namespace kvbench::datasets
