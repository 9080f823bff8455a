#include "datasets/line_reader.hpp"

#include "datasets/regular_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace kvbench::datasets {

namespace {

constexpr unsigned char kGzipMagic[2] = {0x1f, 0x8b};

}  // namespace

// Plain files are read as they are; a file that starts with the gzip magic is inflated member by
// member with zlib's inflate (not gzread: gzread silently ignores bytes after a member that do
// not start another one, so a damaged or appended-to file would read as complete).
struct LineReader::Impl {
  std::FILE* file = nullptr;
  bool gzip = false;
  z_stream strm{};
  bool inflating = false;    // inflateInit2 done
  bool member_done = false;  // the last member ended; what follows must be another one or nothing
  unsigned char in[1 << 16];
  std::string buffer;
  size_t pos = 0;
  bool eof = false;

  ~Impl() {
    if (inflating) inflateEnd(&strm);
    if (file) std::fclose(file);
  }

  // Appends up to sizeof(in) - kept raw bytes after the `kept` unread ones; false at end of file.
  bool read_raw(const std::string& path, size_t kept = 0) {
    if (kept > 0) std::memmove(in, strm.next_in, kept);
    const size_t n = std::fread(in + kept, 1, sizeof(in) - kept, file);
    if (n == 0 && std::ferror(file)) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
    strm.next_in = in;
    strm.avail_in = static_cast<uInt>(kept + n);
    return n > 0;
  }

  // Inflates into `out`; 0 at the end of the last member.
  size_t inflate_some(char* out, size_t capacity, const std::string& path) {
    strm.next_out = reinterpret_cast<Bytef*>(out);
    strm.avail_out = static_cast<uInt>(capacity);
    while (strm.avail_out == capacity) {
      if (member_done) {
        if (strm.avail_in < 2) read_raw(path, strm.avail_in);
        if (strm.avail_in == 0) return 0;  // the end of the file right after a member
        if (strm.avail_in < 2 || std::memcmp(strm.next_in, kGzipMagic, 2) != 0)
          throw std::runtime_error(path + ": trailing garbage after the gzip data: bytes that do not start another "
                                          "gzip member (the file is damaged or something was appended to it)");
        inflateReset(&strm);  // concatenated members read as one stream, as gzip -d does
        member_done = false;
      }
      // zlib would report a stream cut short as "unexpected end of file" at best: without this
      // check a truncated download reads as a complete, shorter file.
      if (strm.avail_in == 0 && !read_raw(path))
        throw std::runtime_error(path + ": truncated gzip file: it ends before the gzip trailer (the data is incomplete)");
      const int code = inflate(&strm, Z_NO_FLUSH);
      if (code == Z_STREAM_END) {
        member_done = true;
      } else if (code == Z_DATA_ERROR || code == Z_NEED_DICT) {
        const std::string detail = strm.msg ? strm.msg : "invalid data";
        throw std::runtime_error(path + ": corrupt gzip file: " + detail +
                                 (detail.find("check") != std::string::npos ? " (CRC or length mismatch)" : ""));
      } else if (code == Z_MEM_ERROR) {
        throw std::runtime_error(path + ": read error: out of memory inflating the gzip data");
      }  // Z_OK, or Z_BUF_ERROR: more input needed (read above)
    }
    return capacity - strm.avail_out;
  }

  bool fill(const std::string& path) {
    if (eof) return false;
    char chunk[1 << 16];
    size_t got = 0;
    if (gzip) {
      got = inflate_some(chunk, sizeof(chunk), path);
    } else {
      got = std::fread(chunk, 1, sizeof(chunk), file);
      if (got == 0 && std::ferror(file)) throw std::runtime_error(path + ": read error: " + std::strerror(errno));
    }
    if (got == 0) {
      eof = true;
      return false;
    }
    buffer.erase(0, pos);
    pos = 0;
    buffer.append(chunk, got);
    return true;
  }
};

LineReader::LineReader(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
  require_regular_file(path, "data file");
  Impl& s = *impl_;
  s.file = std::fopen(path.c_str(), "rb");
  if (!s.file) throw std::runtime_error(path + ": cannot open");
  s.read_raw(path);
  s.gzip = s.strm.avail_in >= 2 && std::memcmp(s.in, kGzipMagic, 2) == 0;  // by magic bytes, whatever the name
  if (s.gzip) {
    if (inflateInit2(&s.strm, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error(path + ": cannot start zlib");
    s.inflating = true;
  } else if (std::fseek(s.file, 0, SEEK_SET) != 0) {
    throw std::runtime_error(path + ": read error: cannot seek");
  }
}

LineReader::~LineReader() = default;

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
