#include "pipeline/io/caf_guard.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"
#include "pipeline/io/byte_stream.hpp"

namespace sigstream {

namespace {

std::uint32_t get_be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
std::int64_t get_be64(const unsigned char* p) {
  return static_cast<std::int64_t>(std::uint64_t{get_be32(p)} << 32 | get_be32(p + 4));
}

bool is(const unsigned char* p, const char* id) {
  return std::memcmp(p, id, 4) == 0;
}

std::string tag(const unsigned char* p) {
  std::string s(reinterpret_cast<const char*>(p), 4);
  for (char& c : s)
    if (c < 0x20 || c > 0x7e)
      c = '?';
  return s;
}

// Where libsndfile's walk goes on after skipping `n` bytes from `from`: its
// skips pass through an int (psf_binheader_readf's 'j'), and one that would
// go back past the start of its header buffer is dropped.
std::int64_t libsndfile_skip(std::int64_t from, std::int64_t n) {
  const auto by = static_cast<std::int32_t>(static_cast<std::uint32_t>(n & 0xffffffff));
  return by < 0 && from + by < 0 ? from : from + by;
}

} // namespace

void check_caf_header(const std::string& name, const CafInput& in) {
  unsigned char h[16];
  std::int64_t seen = 0; // the end of the bytes read so far
  const auto read = [&](std::int64_t at, std::int64_t n, unsigned char* dst) {
    const std::int64_t got = std::max<std::int64_t>(0, in.read(at, dst, n));
    if (got > 0)
      seen = std::max(seen, at + got);
    return got;
  };
  const auto bad = [&](const std::string& why) {
    throw io_error(name + ": bad CAF header (" + why + ")");
  };
  if (read(0, 8, h) < 8 || !is(h, "caff"))
    return;
  // libsndfile wants a 'desc' chunk of at least 32 bytes first (and refuses
  // the rest itself).
  if (read(8, 12, h) < 12 || !is(h, "desc"))
    return;
  std::int64_t size = get_be64(h + 4);
  if (size < 32)
    return;
  if (size - 32 > INT_MAX)
    bad("desc chunk: " + std::to_string(size) + " bytes; at most " +
        std::to_string(std::int64_t{32} + INT_MAX));
  std::int64_t at = libsndfile_skip(52, size - 32);
  // libsndfile stops after a chunk once it has read or passed the last 8
  // bytes of the length it is told (a file's; a pipe's is huge).
  std::int64_t furthest = std::max<std::int64_t>(52, at);
  bool last = false;
  for (std::int64_t chunks = 0;;) {
    if (in.reach >= 0 && at > seen + in.reach)
      return; // the stream's reads find nothing there: libsndfile's walk ends
    const std::int64_t got = read(at, 16, h);
    if (got < 4 || get_be32(h) == 0)
      return; // a marker of 0 (or none): libsndfile stops
    const bool data = is(h, "data");
    // (Checked on a file too, where libsndfile stops at its end, so that a
    // file and a stream of the same bytes go the same way.)
    if (data && got < 16)
      bad("data chunk at byte " + std::to_string(at) + ": the input ends at byte " +
          std::to_string(at + got) + ", inside its 16 bytes of header (size, edit count)");
    if (got < 12 || last)
      return; // libsndfile reads a size of 0, and then no marker
    size = get_be64(h + 4);
    if (size < 0)
      return; // libsndfile stops at a negative size
    const std::string what = tag(h) + " chunk at byte " + std::to_string(at);
    const std::int64_t body = at + 12;
    // libsndfile allocates these whole (and on a stream, bounds them by
    // nothing): they must be there.
    const bool whole = is(h, "info") || is(h, "pakt");
    unsigned char byte = 0;
    if (whole && size > 0 && (size > INT64_MAX - body || read(body + size - 1, 1, &byte) < 1))
      bad(what + ": " + std::to_string(size) + " bytes, past the end of the " +
          (in.reach < 0 ? "file (" + std::to_string(in.length) + " bytes)" : "input"));
    if (size > in.length)
      return; // libsndfile stops at such a size
    if (++chunks > kCafMaxChunks)
      bad("more than " + std::to_string(kCafMaxChunks) + " chunks");
    std::int64_t next = 0;
    if (data) {
      if (size < 4)
        bad(what + ": size " + std::to_string(size) +
            "; at least 4 (its edit count), or -1 for an unknown length");
      // The samples' length, which libsndfile cuts to a file's end.
      std::int64_t samples = size - 4;
      if (size > in.length - (body + 4) + 10)
        samples = in.length - (body + 4) - 8;
      next = libsndfile_skip(body + 4, samples);
    } else if (whole) {
      if (size < (is(h, "info") ? 4 : 24) || size > in.length - body)
        return; // libsndfile refuses it
      next = is(h, "info") ? body + size : libsndfile_skip(body + 24, size - 24);
    } else if (is(h, "chan") && size >= 12) {
      next = libsndfile_skip(body + 12, size - 12);
    } else {
      next = libsndfile_skip(body, size);
    }
    if (!data && size >= 0xffffff00)
      return; // libsndfile stops after such a chunk
    furthest = std::max({furthest, at + got, next});
    last = furthest >= in.length - 8;
    at = next;
  }
}

void check_caf_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return; // sf_open says what is wrong
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_it{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return;
  CafInput in;
  in.length = st.st_size;
  in.read = [fd](std::int64_t at, unsigned char* dst, std::int64_t n) {
    std::int64_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd, dst + done, static_cast<std::size_t>(n - done), at + done);
      if (r > 0)
        done += r;
      else if (r == 0 || errno != EINTR)
        break;
    }
    return done;
  };
  check_caf_header(path, in);
}

bool is_caf_stream(ByteSource& stream) {
  const std::vector<unsigned char>& head = stream.peek(4);
  return head.size() >= 4 && std::memcmp(head.data(), "caff", 4) == 0;
}

void check_caf_stream(const std::string& name, ByteSource& stream) {
  CafInput in;
  in.length = stream.io()->get_filelen(stream.user());
  in.reach = ByteSource::kHeaderSlack;
  in.read = [&stream](std::int64_t at, unsigned char* dst, std::int64_t n) -> std::int64_t {
    const std::vector<unsigned char>& head = stream.peek(at + n);
    const auto have = static_cast<std::int64_t>(head.size());
    if (have <= at)
      return 0;
    const std::int64_t k = std::min(n, have - at);
    std::memcpy(dst, head.data() + at, static_cast<std::size_t>(k));
    return k;
  };
  check_caf_header(name, in);
}

namespace {

// The position asks libsndfile may make while it opens a stream: at most 3
// a chunk, for as many chunks as check_caf_header lets through.
constexpr std::int64_t kMaxHeaderTells = 4 * kCafMaxChunks;

} // namespace

StreamHeaderWalk::StreamHeaderWalk(ByteSource& stream) : stream_(stream) {
  static constexpr auto self = [](void* u) { return static_cast<StreamHeaderWalk*>(u); };
  io_.get_filelen = [](void* u) -> sf_count_t {
    ByteSource& s = self(u)->stream_;
    return s.io()->get_filelen(s.user());
  };
  io_.seek = [](sf_count_t offset, int whence, void* u) -> sf_count_t {
    ByteSource& s = self(u)->stream_;
    return s.io()->seek(offset, whence, s.user());
  };
  io_.read = [](void* dst, sf_count_t n, void* u) -> sf_count_t {
    ByteSource& s = self(u)->stream_;
    return s.io()->read(dst, n, s.user());
  };
  io_.write = [](const void* src, sf_count_t n, void* u) -> sf_count_t {
    ByteSource& s = self(u)->stream_;
    return s.io()->write(src, n, s.user());
  };
  io_.tell = [](void* u) -> sf_count_t {
    StreamHeaderWalk& w = *self(u);
    ByteSource& s = w.stream_;
    if (w.counting_ && ++w.tells_ > kMaxHeaderTells)
      return s.io()->get_filelen(s.user());
    return s.io()->tell(s.user());
  };
}

void StreamHeaderWalk::opened(const std::string& name, const std::string& what) {
  counting_ = false;
  if (tells_ > kMaxHeaderTells)
    throw io_error(name + ": bad " + what + " (its chunk sizes lead libsndfile round in a loop: " +
                   "over " + std::to_string(kMaxHeaderTells) + " steps)");
}

} // namespace sigstream
