#include "pipeline/io/byte_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/cleanup.hpp"
#include "core/error.hpp"

namespace sigstream {

namespace {

// What a pipe reports as its length to libsndfile: far beyond any header's
// size, so no header is clamped to it (a WAV data size of 0xFFFFFFFF then
// reads as "until the stream ends").
constexpr std::int64_t kPipeLength = std::int64_t{1} << 60;
// The most a header may take (what is retained for libsndfile's seeks).
constexpr std::int64_t kHeaderBytes = std::int64_t{16} << 20;
// How often a blocked read or write looks at the interruption flag.
constexpr int kPollMs = 50;

std::uint32_t get_le32(const unsigned char* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}
std::uint32_t get_be32(const unsigned char* p) {
  return std::uint32_t{p[3]} | std::uint32_t{p[2]} << 8 | std::uint32_t{p[1]} << 16 |
         std::uint32_t{p[0]} << 24;
}
std::uint64_t get_be64(const unsigned char* p) {
  return std::uint64_t{get_be32(p)} << 32 | get_be32(p + 4);
}

// Offset of the size field of the first chunk named `id` (RIFF chunks are
// 4-byte LE sizes after 12 bytes of RIFF header; CAF chunks are 8-byte BE
// sizes after 8 bytes of file header), or -1.
std::int64_t riff_chunk_size_at(const std::vector<unsigned char>& h, const char* id) {
  std::size_t at = 12;
  while (at + 8 <= h.size()) {
    if (std::memcmp(h.data() + at, id, 4) == 0)
      return static_cast<std::int64_t>(at + 4);
    const std::uint32_t size = get_le32(h.data() + at + 4);
    at += 8 + size + (size & 1);
  }
  return -1;
}
std::int64_t caf_chunk_size_at(const std::vector<unsigned char>& h, const char* id) {
  std::size_t at = 8;
  while (at + 12 <= h.size()) {
    if (std::memcmp(h.data() + at, id, 4) == 0)
      return static_cast<std::int64_t>(at + 4);
    const std::uint64_t size = get_be64(h.data() + at + 4);
    if (size > h.size())
      return -1;
    at += 12 + size;
  }
  return -1;
}

// libsndfile (1.2) refuses a CAF data chunk of size -1 ("unknown", what
// FFmpeg and SoX write on a pipe) as malformed. So, by hand, such a size is
// given to it as a huge one instead (read until the stream ends). Returns
// false while the header has not arrived far enough to tell.
bool caf_unknown_size_to_huge(std::vector<unsigned char>& h) {
  if (h.size() < 8)
    return false;
  if (std::memcmp(h.data(), "caff", 4) != 0)
    return true;
  std::size_t at = 8;
  while (at + 12 <= h.size()) {
    const std::uint64_t size = get_be64(h.data() + at + 4);
    if (std::memcmp(h.data() + at, "data", 4) == 0) {
      if (size == ~std::uint64_t{0}) {
        const std::uint64_t huge = std::uint64_t{1} << 59;
        for (int i = 0; i < 8; ++i)
          h[at + 4 + static_cast<std::size_t>(i)] =
              static_cast<unsigned char>(huge >> (56 - 8 * i));
      }
      return true;
    }
    if (size > (std::uint64_t{1} << 40))
      return true;
    at += 12 + size;
  }
  return false;
}

bool is_riff(const std::vector<unsigned char>& h) {
  return h.size() >= 12 && std::memcmp(h.data(), "RIFF", 4) == 0 &&
         std::memcmp(h.data() + 8, "WAVE", 4) == 0;
}

thread_local bool t_busy_poll = false; // see BusyPollScope

// Waits until `fd` is ready for `events`, polling the interruption flag and
// `cancel` (set when the run has failed elsewhere, e.g. its output pipe closed).
void wait_ready(int fd, short events, const std::atomic<bool>& cancel) {
  for (;;) {
    throw_if_interrupted();
    if (cancel.load(std::memory_order_relaxed))
      throw Error(ErrorKind::interrupted, "the run was stopped");
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, t_busy_poll ? 0 : kPollMs);
    if (rc > 0)
      return;
    if (rc < 0 && errno != EINTR)
      return; // let the read/write report it
  }
}

// A pipe's buffer is 64 KiB by default: a producer and sigstream then take
// turns every 64 KiB. Ask for 1 MiB (the unprivileged limit); a refusal only
// costs speed.
void widen_pipe(int fd) {
#ifdef F_SETPIPE_SZ
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
    static_cast<void>(::fcntl(fd, F_SETPIPE_SZ, 1 << 20));
#else
  static_cast<void>(fd);
#endif
}

} // namespace

// ---------------------------------------------------------------------------

BusyPollScope::BusyPollScope(bool on) noexcept : was_(t_busy_poll) {
  t_busy_poll = on || was_;
}
BusyPollScope::~BusyPollScope() {
  t_busy_poll = was_;
}

ByteSource::ByteSource(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    file_length_ = static_cast<std::int64_t>(st.st_size) - (at > 0 ? at : 0);
  }
  widen_pipe(fd_);
  io_.get_filelen = [](void* u) -> sf_count_t {
    const auto* s = static_cast<ByteSource*>(u);
    return s->file_length_ >= 0     ? s->file_length_
           : s->stated_length_ >= 0 ? s->stated_length_
                                    : kPipeLength;
  };
  io_.seek = [](sf_count_t offset, int whence, void* u) -> sf_count_t {
    return static_cast<ByteSource*>(u)->seek(offset, whence);
  };
  io_.read = [](void* dst, sf_count_t n, void* u) -> sf_count_t {
    return static_cast<ByteSource*>(u)->read(dst, n);
  };
  io_.write = [](const void*, sf_count_t, void*) -> sf_count_t { return 0; };
  io_.tell = [](void* u) -> sf_count_t { return static_cast<ByteSource*>(u)->pos_; };
}

std::int64_t ByteSource::read_fd(unsigned char* dst, std::int64_t n) {
  std::int64_t got = 0;
  while (got < n && !eof_) {
    if (file_length_ < 0)
      wait_ready(fd_, POLLIN, cancel_);
    const ssize_t r = ::read(fd_, dst + got, static_cast<std::size_t>(n - got));
    if (r > 0) {
      got += r;
    } else if (r == 0) {
      eof_ = true;
    } else if (errno != EINTR && errno != EAGAIN) {
      throw io_error(name_ + ": read failed: " + std::strerror(errno));
    }
  }
  consumed_ += got;
  return got;
}

std::int64_t ByteSource::fill_to(std::int64_t end) {
  // libsndfile looks past a WAV data chunk of unknown size for more chunks
  // (at 4 GiB): reading that far would swallow the stream. Header reads are
  // served from the first kHeaderBytes only; beyond, the stream "ends".
  end = std::min(end, kHeaderBytes);
  while (base_ + static_cast<std::int64_t>(buf_.size()) < end && !eof_) {
    const std::size_t old = buf_.size();
    const std::int64_t want =
        std::min<std::int64_t>(end - base_ - static_cast<std::int64_t>(old), 65536);
    buf_.resize(old + static_cast<std::size_t>(want));
    const std::int64_t got = read_fd(buf_.data() + old, want);
    buf_.resize(old + static_cast<std::size_t>(got));
  }
  if (!header_fixed_ && base_ == 0)
    header_fixed_ = caf_unknown_size_to_huge(buf_) || eof_;
  return base_ + static_cast<std::int64_t>(buf_.size());
}

const std::vector<unsigned char>& ByteSource::peek(std::int64_t n) {
  if (retaining_ && base_ == 0)
    fill_to(n);
  return buf_;
}

std::int64_t ByteSource::read(void* dst, std::int64_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  std::int64_t done = 0;
  try {
    // From the retained bytes first. While the header is parsed, a read far
    // past what has come (libsndfile looking for chunks after a WAV data
    // chunk of unknown size, 4 GiB on) finds nothing rather than waiting for
    // (and keeping) the stream up to there.
    if (retaining_ &&
        pos_ > base_ + static_cast<std::int64_t>(buf_.size()) + ByteSource::kHeaderSlack)
      return 0;
    const std::int64_t have_end =
        retaining_ ? fill_to(pos_ + n) : base_ + static_cast<std::int64_t>(buf_.size());
    if (pos_ >= base_ && pos_ < have_end) {
      const std::int64_t k = std::min(n, have_end - pos_);
      std::memcpy(out, buf_.data() + (pos_ - base_), static_cast<std::size_t>(k));
      pos_ += k;
      done = k;
    }
    if (done < n && !retaining_) {
      // Skip what a forward seek passed over, then read straight into `dst`.
      while (consumed_ < pos_ && !eof_) {
        unsigned char skip[4096];
        read_fd(skip, std::min<std::int64_t>(sizeof skip, pos_ - consumed_));
      }
      if (consumed_ == pos_) {
        const std::int64_t got = read_fd(out + done, n - done);
        pos_ += got;
        done += got;
      }
    }
  } catch (...) {
    // libsndfile cannot carry an exception: the source rethrows it (see
    // rethrow_error) after libsndfile's short read.
    error_ = std::current_exception();
  }
  note_pending();
  return done;
}

void ByteSource::note_pending() noexcept {
  const std::int64_t held =
      std::max<std::int64_t>(0, base_ + static_cast<std::int64_t>(buf_.size()) - pos_);
  buffered_.store(eof_ || error_ != nullptr ? -1 : held, std::memory_order_release);
}

bool ByteSource::ready_now(std::int64_t bytes) const noexcept {
  if (file_length_ >= 0)
    return true; // a file: a read does not wait
  const std::int64_t need = std::min<std::int64_t>(bytes, 16384);
  const std::int64_t held = buffered_.load(std::memory_order_acquire);
  if (held < 0 || held >= need)
    return true;
  pollfd p{fd_, POLLIN, 0};
  const int rc = ::poll(&p, 1, 0);
  if (rc < 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0)
    return true; // the end, or an error to report
  if (rc == 0)
    return false;
  int avail = 0;
  if (::ioctl(fd_, FIONREAD, &avail) != 0)
    return true; // no byte count here: let the read tell
  // Readable with nothing in it: the end (a socket or terminal says so this way).
  return avail == 0 || held + avail >= need;
}

void ByteSource::rethrow_error() {
  if (error_)
    std::rethrow_exception(std::exchange(error_, nullptr));
}

std::int64_t ByteSource::seek(std::int64_t offset, int whence) {
  std::int64_t target = -1;
  if (whence == SEEK_SET)
    target = offset;
  else if (whence == SEEK_CUR)
    target = pos_ + offset;
  else if (whence == SEEK_END && file_length_ >= 0)
    target = file_length_ + offset;
  if (target < 0)
    return -1;
  // Backward seeks only within the retained bytes; forward ones always.
  if (target < base_ || (!retaining_ && target < consumed_ && target < pos_))
    return -1;
  pos_ = target;
  return pos_;
}

void ByteSource::release_header() noexcept {
  retaining_ = false;
  // Keep what was read ahead of libsndfile's position; drop the rest.
  const std::int64_t keep_from = std::max(pos_, base_);
  const std::int64_t end = base_ + static_cast<std::int64_t>(buf_.size());
  if (keep_from >= end) {
    base_ = end;
    buf_.clear();
    buf_.shrink_to_fit();
    note_pending();
    return;
  }
  buf_.erase(buf_.begin(), buf_.begin() + (keep_from - base_));
  base_ = keep_from;
  note_pending();
}

void ByteSource::rebase(std::int64_t offset) {
  const std::int64_t end = base_ + static_cast<std::int64_t>(buf_.size());
  if (offset < base_ || offset > end)
    throw internal_error("byte stream: rebase to " + std::to_string(offset) +
                         " outside the retained bytes");
  buf_.erase(buf_.begin(), buf_.begin() + (offset - base_));
  base_ = 0;
  consumed_ -= offset;
  pos_ = 0;
  if (file_length_ >= 0)
    file_length_ -= offset;
  retaining_ = true;
  header_fixed_ = true;
  note_pending();
}

std::int64_t ByteSource::drain() {
  std::int64_t extra =
      std::max<std::int64_t>(0, base_ + static_cast<std::int64_t>(buf_.size()) - pos_);
  unsigned char tmp[4096];
  while (!eof_)
    extra += read_fd(tmp, sizeof tmp);
  return extra;
}

// ---------------------------------------------------------------------------

ByteSink::ByteSink(int fd, std::string name, int major)
    : fd_(fd), name_(std::move(name)), major_(major) {
  widen_pipe(fd_);
  io_.get_filelen = [](void* u) -> sf_count_t {
    const auto* s = static_cast<ByteSink*>(u);
    return s->sent_ + static_cast<sf_count_t>(s->held_.size());
  };
  io_.seek = [](sf_count_t offset, int whence, void* u) -> sf_count_t {
    return static_cast<ByteSink*>(u)->seek(offset, whence);
  };
  io_.read = [](void*, sf_count_t, void*) -> sf_count_t { return 0; };
  io_.write = [](const void* src, sf_count_t n, void* u) -> sf_count_t {
    return static_cast<ByteSink*>(u)->write(src, n);
  };
  io_.tell = [](void* u) -> sf_count_t { return static_cast<ByteSink*>(u)->pos_; };
}

std::int64_t ByteSink::seek(std::int64_t offset, int whence) {
  const std::int64_t end = sent_ + static_cast<std::int64_t>(held_.size());
  std::int64_t target = whence == SEEK_SET   ? offset
                        : whence == SEEK_CUR ? pos_ + offset
                                             : end + offset;
  if (target < 0)
    return -1;
  pos_ = target;
  return pos_;
}

std::int64_t ByteSink::write(const void* src, std::int64_t n) {
  const auto* p = static_cast<const unsigned char*>(src);
  const std::int64_t total = n;
  // Bytes before what was sent cannot be rewritten on a pipe: dropped.
  if (pos_ < sent_) {
    const std::int64_t skip = std::min(n, sent_ - pos_);
    p += skip;
    n -= skip;
    pos_ += skip;
  }
  if (n == 0)
    return total;
  const std::int64_t end = sent_ + static_cast<std::int64_t>(held_.size());
  try {
    if (holding_ || pos_ < end) {
      const auto at = static_cast<std::size_t>(pos_ - sent_);
      if (held_.size() < at + static_cast<std::size_t>(n))
        held_.resize(at + static_cast<std::size_t>(n));
      std::memcpy(held_.data() + at, p, static_cast<std::size_t>(n));
    } else {
      if (pos_ > end)
        held_.assign(static_cast<std::size_t>(pos_ - end), 0); // a gap: zeros
      if (!held_.empty()) {
        send(held_.data(), static_cast<std::int64_t>(held_.size()));
        held_.clear();
      }
      send(p, n);
    }
  } catch (...) {
    error_ = std::current_exception();
    return 0;
  }
  pos_ += n;
  return total;
}

void ByteSink::send(const unsigned char* p, std::int64_t n) {
  while (n > 0) {
    wait_ready(fd_, POLLOUT, cancel_);
    const ssize_t w = ::write(fd_, p, static_cast<std::size_t>(n));
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      if (errno == EPIPE)
        throw Error(ErrorKind::output_closed, name_ + ": the reader closed the pipe");
      throw io_error(name_ + ": write failed: " + std::strerror(errno));
    }
    p += w;
    n -= w;
    sent_ += w;
  }
}

void ByteSink::release() {
  rethrow_error();
  if (!holding_)
    return;
  patch_unknown_sizes(major_, held_);
  holding_ = false;
  std::vector<unsigned char> out;
  out.swap(held_);
  send(out.data(), static_cast<std::int64_t>(out.size()));
}

void ByteSink::rethrow_error() {
  if (error_)
    std::rethrow_exception(std::exchange(error_, nullptr));
}

// ---------------------------------------------------------------------------

void patch_unknown_sizes(int major, std::vector<unsigned char>& h) {
  auto put = [&](std::int64_t at, int bytes) {
    if (at >= 0 && at + bytes <= static_cast<std::int64_t>(h.size()))
      std::memset(h.data() + at, 0xFF, static_cast<std::size_t>(bytes));
  };
  switch (major) {
    case SF_FORMAT_WAV:
    case SF_FORMAT_WAVEX:
      if (!is_riff(h))
        return;
      put(4, 4);
      put(riff_chunk_size_at(h, "data"), 4);
      return;
    case SF_FORMAT_AU:
      if (h.size() >= 12 && std::memcmp(h.data(), ".snd", 4) == 0)
        put(8, 4);
      return;
    case SF_FORMAT_CAF:
      if (h.size() >= 8 && std::memcmp(h.data(), "caff", 4) == 0)
        put(caf_chunk_size_at(h, "data"), 8);
      return;
    default:
      return;
  }
}

std::int64_t wav_data_offset(const std::vector<unsigned char>& h) {
  if (!is_riff(h))
    return -1;
  const std::int64_t at = riff_chunk_size_at(h, "data");
  return at < 0 ? -1 : at + 4;
}

bool header_length_unknown(int major, const std::vector<unsigned char>& h) {
  switch (major) {
    case SF_FORMAT_WAV:
    case SF_FORMAT_WAVEX: {
      if (!is_riff(h))
        return false;
      const std::int64_t at = riff_chunk_size_at(h, "data");
      if (at < 0 || at + 4 > static_cast<std::int64_t>(h.size()))
        return false;
      const std::uint32_t size = get_le32(h.data() + at);
      return size == 0 || size == 0xFFFFFFFFu;
    }
    case SF_FORMAT_AU:
      return h.size() >= 12 && std::memcmp(h.data(), ".snd", 4) == 0 &&
             get_be32(h.data() + 8) == 0xFFFFFFFFu;
    case SF_FORMAT_CAF: {
      const std::int64_t at = caf_chunk_size_at(h, "data");
      return at >= 0 && at + 8 <= static_cast<std::int64_t>(h.size()) &&
             get_be64(h.data() + at) == ~std::uint64_t{0};
    }
    default:
      return false;
  }
}

} // namespace sigstream
