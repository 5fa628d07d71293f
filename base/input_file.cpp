#include "nmpsim/base/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "nmpsim/base/errors.h"

namespace nmpsim::base {

namespace {

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

/// Closes a file descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

void check_path_text(const std::string& path, const std::string& what) {
  if (path.empty()) throw InputError(what + ": empty file name");
  if (path.find('\0') != std::string::npos)
    throw InputError(what + ": the file name '" + shown(path.substr(0, path.find('\0'))) + "' contains a NUL byte");
}

bool names_a_file(const std::string& path) {
  struct stat st {};
  return !path.empty() && path.find('\0') == std::string::npos && stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

std::string read_input_file(const std::string& path, size_t max_bytes) {
  check_path_text(path, "input file");
  // O_NONBLOCK: opening a FIFO without a writer returns at once; it is cleared again before reading.
  const Fd f{open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  if (f.fd < 0) throw InputError(path + ": cannot open file: " + std::strerror(errno));
  struct stat st {};
  if (fstat(f.fd, &st) != 0) throw InputError(path + ": cannot read file: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
    throw InputError(path + ": not a regular file (a block device or a socket)");
  if (S_ISREG(st.st_mode) && static_cast<unsigned long long>(st.st_size) > max_bytes)
    throw InputError(path + ": " + std::to_string(st.st_size) + " bytes; inputs are limited to " + mib(max_bytes));
  const int flags = fcntl(f.fd, F_GETFL);
  if (flags >= 0) fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string bytes;
  if (S_ISREG(st.st_mode)) bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;  // a FIFO whose writer has not written: nothing to read
    if (n < 0) throw InputError(path + ": cannot read file: " + std::strerror(errno));
    if (n == 0) break;
    if (bytes.size() + static_cast<size_t>(n) > max_bytes)
      throw InputError(path + ": larger than " + mib(max_bytes) + "; inputs are limited to " + mib(max_bytes));
    // Inputs are text or gzip: a NUL byte in text is an error found now, not after reading 1 GiB of
    // /dev/zero.
    const bool gzip =
        !bytes.empty() ? static_cast<unsigned char>(bytes[0]) == 0x1f : static_cast<unsigned char>(buf[0]) == 0x1f;
    const void* nul = gzip ? nullptr : std::memchr(buf, 0, static_cast<size_t>(n));
    if (nul)
      throw InputError(path + ": not a text file: a NUL byte at offset " +
                       std::to_string(bytes.size() + static_cast<size_t>(static_cast<const char*>(nul) - buf)));
    bytes.append(buf, static_cast<size_t>(n));
  }
  return gunzip_if_compressed(std::move(bytes), path, max_bytes);
}

std::string gunzip_if_compressed(std::string bytes, const std::string& where, size_t max_bytes) {
  auto is_member = [&](size_t at) {
    return bytes.size() >= at + 2 && static_cast<unsigned char>(bytes[at]) == 0x1f &&
           static_cast<unsigned char>(bytes[at + 1]) == 0x8b;
  };
  if (!is_member(0)) return bytes;
  std::string text;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw InputError(where + ": cannot decompress: zlib failed");
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  size_t at = 0;
  char out[1 << 16];
  while (at < bytes.size()) {
    if (!is_member(at))
      throw InputError(where + ": " + std::to_string(bytes.size() - at) +
                       " bytes of garbage after the gzip data (at byte " + std::to_string(at) + ")");
    inflateReset(&z);
    z.next_in = reinterpret_cast<Bytef*>(&bytes[at]);
    const size_t avail = bytes.size() - at;
    z.avail_in = static_cast<uInt>(std::min<size_t>(avail, 1u << 30));
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      z.next_out = reinterpret_cast<Bytef*>(out);
      z.avail_out = sizeof out;
      rc = inflate(&z, Z_NO_FLUSH);
      if (rc == Z_BUF_ERROR && z.avail_in == 0)
        throw InputError(where + ": corrupt gzip data: the compressed stream ends early (truncated file?)");
      if (rc != Z_OK && rc != Z_STREAM_END)
        throw InputError(where + ": corrupt gzip data: " + (z.msg ? z.msg : "inflate failed"));
      const size_t got = sizeof out - z.avail_out;
      if (text.size() + got > max_bytes)
        throw InputError(where + ": decompresses to more than " + mib(max_bytes) + "; inputs are limited to " +
                         mib(max_bytes));
      text.append(out, got);
    }
    at = static_cast<size_t>(reinterpret_cast<char*>(z.next_in) - bytes.data());
  }
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f && static_cast<unsigned char>(text[1]) == 0x8b)
    throw InputError(where + ": gzip-compressed twice (decompress it once: gunzip < FILE > FILE.json.gz)");
  return text;
}

}  // namespace nmpsim::base
