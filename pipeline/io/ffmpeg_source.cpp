#include "pipeline/io/ffmpeg_source.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "pipeline/io/ffmpeg_child.hpp"

namespace sigstream {

namespace {

static_assert(std::endian::native == std::endian::little, "f32le samples are read as they are");

constexpr int kPollMs = 100; // how soon a signal or cancel() is seen while waiting

std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::uint16_t le16(const unsigned char* p) {
  return static_cast<std::uint16_t>(p[0] | p[1] << 8);
}

class FfmpegSource final : public Source {
public:
  explicit FfmpegSource(std::string path)
      : path_(std::move(path)), child_({"-nostdin", "-hide_banner", "-nostats", "-loglevel",
                                        "level+info", "-i", "file:" + path_, "-map", "0:a:0", "-vn",
                                        "-sn", "-dn", "-c:a", "pcm_f32le", "-f", "wav", "-"},
                                       path_, FfmpegChild::Wiring{.we_read_stdout = true}) {
    start();
  }

  // A stream: FFmpeg reads `pipe:0`, fed by feed() with `head` and then `fd`.
  FfmpegSource(std::string path, int fd, std::vector<unsigned char> head)
      : path_(std::move(path)), source_fd_{fd},
        child_({"-hide_banner", "-nostats", "-loglevel", "level+info", "-i", "pipe:0", "-map",
                "0:a:0", "-vn", "-sn", "-dn", "-c:a", "pcm_f32le", "-f", "wav", "-"},
               path_, FfmpegChild::Wiring{.we_read_stdout = true, .we_write_stdin = true}) {
    feed_fd_ = child_.take_in();
    feeder_ = std::thread([this, head = std::move(head)] { feed(head); });
    try {
      start();
    } catch (...) {
      stop_feeding();
      throw;
    }
    info_.open_ended = true;
  }

  ~FfmpegSource() override { stop_feeding(); }
  FfmpegSource(const FfmpegSource&) = delete;
  FfmpegSource& operator=(const FfmpegSource&) = delete;

  [[nodiscard]] const SourceInfo& info() const noexcept override { return info_; }
  [[nodiscard]] std::string path() const override { return path_; }
  [[nodiscard]] std::string format_name() const override { return format_; }
  // Standard input or a FIFO (frames come as they come: live mode paces them).
  [[nodiscard]] bool is_stream() const noexcept override { return info_.open_ended; }
  void cancel() noexcept override { cancelled_ = true; }

  std::int64_t read(HostBlock& block, std::int64_t at, std::int64_t n) override {
    const std::int64_t frame_bytes = 4 * static_cast<std::int64_t>(info_.channels);
    auto* dst = reinterpret_cast<unsigned char*>(block.data.get()) + at * frame_bytes;
    const std::int64_t want = n * frame_bytes;
    std::int64_t got = 0;
    while (got < want && !ended_) {
      const std::int64_t k = read_some(dst + got, want - got);
      if (k == 0)
        finish();
      got += k;
    }
    const std::int64_t frames = got / frame_bytes;
    if (ended_ && got % frame_bytes != 0)
      throw io_error(path_ + ": ffmpeg's output ends inside frame " +
                     std::to_string(position_ + frames));
    position_ += frames;
    return frames;
  }

private:
  void start() {
    read_header();
    const std::string codec = ffmpeg_input_codec(child_.messages());
    format_ = (codec.empty() ? std::string("audio") : codec) + " via ffmpeg";
  }

  // The stream to FFmpeg: `head`, then what the source descriptor gives,
  // until its end, FFmpeg's (EPIPE), or stop_feeding(). Waits in poll() so
  // that stop_ is seen within kPollMs; closes FFmpeg's input at the end.
  void feed(const std::vector<unsigned char>& head) noexcept {
    std::vector<unsigned char> buf(std::size_t{1} << 16);
    const unsigned char* p = head.data();
    std::size_t left = head.size();
    bool ended = false;
    while (!stop_.load()) {
      if (left == 0) {
        if (ended)
          break;
        pollfd in{source_fd_.fd, POLLIN, 0};
        if (::poll(&in, 1, kPollMs) <= 0)
          continue;
        const ssize_t n = ::read(source_fd_.fd, buf.data(), buf.size());
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
          continue;
        if (n <= 0) {
          ended = true; // its end (or an error: FFmpeg sees the data end there)
          continue;
        }
        p = buf.data();
        left = static_cast<std::size_t>(n);
      }
      pollfd out{feed_fd_, POLLOUT, 0};
      if (::poll(&out, 1, kPollMs) <= 0)
        continue;
      const ssize_t w = ::write(feed_fd_, p, left);
      if (w < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (w < 0)
        break; // EPIPE: FFmpeg has gone
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    ::close(feed_fd_);
  }

  void stop_feeding() noexcept {
    stop_ = true;
    if (feeder_.joinable())
      feeder_.join();
  }

  // Up to n bytes from the child, waiting for some (0: it has ended).
  std::int64_t read_some(unsigned char* p, std::int64_t n) {
    while (true) {
      throw_if_interrupted();
      if (cancelled_)
        throw io_error(path_ + ": reading stopped (the run failed elsewhere)");
      pollfd pf{child_.out(), POLLIN, 0};
      const int rc = ::poll(&pf, 1, kPollMs);
      if (rc < 0 && errno != EINTR)
        throw io_error(path_ + ": waiting for ffmpeg: " + std::strerror(errno));
      if (rc <= 0)
        continue;
      const ssize_t k = ::read(child_.out(), p, static_cast<std::size_t>(n));
      if (k < 0) {
        if (errno == EINTR || errno == EAGAIN)
          continue;
        throw io_error(path_ + ": reading ffmpeg's output: " + std::strerror(errno));
      }
      return k;
    }
  }

  // Exactly n bytes, or throws naming FFmpeg's reason.
  void read_exact(unsigned char* p, std::int64_t n) {
    for (std::int64_t got = 0; got < n;) {
      const std::int64_t k = read_some(p + got, n - got);
      if (k == 0) {
        finish();
        throw io_error(path_ + ": ffmpeg gave no audio" + because(child_.messages()));
      }
      got += k;
    }
  }

  [[nodiscard]] static std::string because(const std::string& messages) {
    const std::string why = ffmpeg_errors(messages);
    return why.empty() ? std::string() : " (ffmpeg: " + why + ")";
  }

  // Its output has ended: reaped, and a failure said with its reason.
  void finish() {
    if (ended_)
      return;
    ended_ = true;
    const int status = child_.wait();
    throw_if_interrupted();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      return;
    // Nothing decoded: what libsndfile did not know, FFmpeg did not either.
    if (position_ == 0 && WIFEXITED(status))
      throw io_error(path_ + ": not an audio file that libsndfile or ffmpeg reads (ffmpeg: " +
                     ffmpeg_failure(status, child_.messages()) + ")");
    throw io_error(path_ + ": ffmpeg cannot decode it (" +
                   ffmpeg_failure(status, child_.messages()) + ")" +
                   (position_ > 0 ? " after frame " + std::to_string(position_) : ""));
  }

  // The WAV header FFmpeg writes to a pipe: RIFF/WAVE, "fmt " (float, 32
  // bits; WAVE_FORMAT_EXTENSIBLE from 3 channels), perhaps "LIST", then
  // "data" of an unstated size, the samples to the end.
  void read_header() {
    unsigned char h[12];
    read_exact(h, 12);
    if (std::memcmp(h, "RIFF", 4) != 0 || std::memcmp(h + 8, "WAVE", 4) != 0)
      throw io_error(path_ + ": ffmpeg's output is not the WAV it was asked for");
    bool have_fmt = false;
    while (true) {
      unsigned char c[8];
      read_exact(c, 8);
      const std::uint32_t size = le32(c + 4);
      if (std::memcmp(c, "data", 4) == 0)
        break;
      if (std::memcmp(c, "fmt ", 4) == 0) {
        if (size < 16 || size > 4096)
          throw io_error(path_ + ": ffmpeg's WAV header has a bad format chunk");
        std::vector<unsigned char> f(size + (size & 1u));
        read_exact(f.data(), static_cast<std::int64_t>(f.size()));
        const std::uint16_t tag = le16(f.data());
        info_.channels = le16(f.data() + 2);
        info_.sample_rate = le32(f.data() + 4);
        const std::uint16_t bits = le16(f.data() + 14);
        const bool is_float = tag == 3 || (tag == 0xFFFE && size >= 26 && le16(f.data() + 24) == 3);
        if (!is_float || bits != 32)
          throw io_error(path_ + ": ffmpeg's WAV holds other than 32-bit float samples");
        have_fmt = true;
        continue;
      }
      // Another chunk (LIST metadata): skipped.
      std::vector<unsigned char> skip(static_cast<std::size_t>(size) + (size & 1u));
      read_exact(skip.data(), static_cast<std::int64_t>(skip.size()));
    }
    if (!have_fmt || info_.channels < 1 || info_.sample_rate <= 0)
      throw io_error(path_ + ": ffmpeg's WAV header gives no rate or channels");
    info_.frames = kUnknownFrames; // what FFmpeg decodes: known at the end
    info_.sample_type = SampleType::f32;
    info_.bits = 0;
    info_.open_ended = false; // a file: a second pass runs FFmpeg again
  }

  std::string path_;
  struct OwnedFd {
    int fd = -1;
    ~OwnedFd() {
      if (fd >= 0)
        ::close(fd);
    }
  };
  OwnedFd source_fd_; // a stream's descriptor, which feed() reads
  FfmpegChild child_;
  int feed_fd_ = -1; // our end of FFmpeg's input (feed() closes it)
  std::atomic<bool> stop_{false};
  std::thread feeder_;
  SourceInfo info_;
  std::string format_;
  std::int64_t position_ = 0;
  bool ended_ = false;
  std::atomic<bool> cancelled_{false};
};

} // namespace

std::unique_ptr<Source> open_ffmpeg_source(const std::string& path) {
  return std::make_unique<FfmpegSource>(path);
}

std::unique_ptr<Source> open_ffmpeg_stream(const std::string& path, int fd,
                                           std::vector<unsigned char> head) {
  return std::make_unique<FfmpegSource>(path, fd, std::move(head));
}

} // namespace sigstream
