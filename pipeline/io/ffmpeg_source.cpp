#include "pipeline/io/ffmpeg_source.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"

extern char** environ;

namespace sigstream {

namespace {

static_assert(std::endian::native == std::endian::little, "f32le samples are read as they are");

constexpr int kPollMs = 100; // how soon a signal or cancel() is seen while waiting

std::string install_hint(const std::string& path, const std::string& program) {
  return path + ": not a format libsndfile reads; install ffmpeg (apt-get install ffmpeg) to " +
         "read it" + (program == "ffmpeg" ? "" : " (SIGSTREAM_FFMPEG=" + program + " was not found)");
}

// An unlinked temporary file (the child's standard error: a file never fills
// up and blocks it, as a pipe nobody reads would).
int anonymous_file() {
  const char* dir = std::getenv("TMPDIR");
  const std::string d = dir != nullptr && *dir != '\0' ? dir : "/tmp";
  int fd = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0)
    return fd;
  std::string name = d + "/sigstream-ffmpeg-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0)
    throw io_error("cannot make a temporary file in " + d + " for ffmpeg's messages: " +
                   std::strerror(errno));
  ::unlink(name.c_str());
  return fd;
}

// The `ffmpeg` child: its standard output a pipe we read, its standard error
// an anonymous file, its standard input /dev/null. Stopped and reaped when
// this goes.
class FfmpegChild {
public:
  FfmpegChild(const std::string& program, const std::vector<std::string>& args,
              const std::string& path)
      : err_(anonymous_file()) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      ::close(err_);
      throw io_error(path + ": cannot make a pipe for ffmpeg: " + std::strerror(errno));
    }
    out_ = fds[0];
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_, STDERR_FILENO);
    // The child's signals as a fresh process's (ours catch SIGINT and SIGTERM).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    const int rc = ::posix_spawnp(&pid_, program.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(fds[1]);
    if (rc != 0) {
      pid_ = -1;
      ::close(out_);
      ::close(err_);
      if (rc == ENOENT || rc == EACCES || rc == ENOTDIR)
        throw io_error(install_hint(path, program));
      throw io_error(path + ": cannot run " + program + ": " + std::strerror(rc));
    }
    slot_ = register_child(pid_);
  }
  FfmpegChild(const FfmpegChild&) = delete;
  FfmpegChild& operator=(const FfmpegChild&) = delete;
  ~FfmpegChild() {
    stop();
    ::close(err_);
  }

  [[nodiscard]] int out() const noexcept { return out_; }

  // Its end: the exit status (waitpid's), once.
  int wait() {
    if (out_ >= 0) {
      ::close(out_);
      out_ = -1;
    }
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    unregister_child(slot_);
    pid_ = -1;
    return status;
  }

  // What it wrote to its standard error.
  [[nodiscard]] std::string messages() const {
    std::string text;
    char buf[4096];
    off_t at = 0;
    ssize_t n = 0;
    while ((n = ::pread(err_, buf, sizeof buf, at)) > 0 && text.size() < (1u << 20)) {
      text.append(buf, static_cast<std::size_t>(n));
      at += n;
    }
    return text;
  }

private:
  // Closes our end (a child blocked writing gets EPIPE), asks it to stop,
  // and reaps it; one that does not stop within 2 s is killed.
  void stop() noexcept {
    if (out_ >= 0) {
      ::close(out_);
      out_ = -1;
    }
    if (pid_ <= 0)
      return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (true) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || (r < 0 && errno != EINTR))
        break;
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    unregister_child(slot_);
    pid_ = -1;
  }

  pid_t pid_ = -1;
  int out_ = -1;
  int err_ = -1;
  int slot_ = -1;
};

// FFmpeg's log lines, each "[level] text" (-loglevel level+info), some with
// the component first ("[aac @ 0x55d...] [error] ...").
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (!line.empty())
      out.push_back(line);
  }
  return out;
}

// Its errors, joined, without the level tags; "" when it gave none.
std::string reason_of(const std::string& text) {
  std::string why;
  for (std::string line : lines_of(text)) {
    std::size_t tag = line.find("[error] ");
    if (tag == std::string::npos)
      tag = line.find("[fatal] ");
    if (tag == std::string::npos)
      continue;
    std::string component;
    if (line.rfind('[', 0) == 0 && tag > 0) // "[aac @ 0x...] " before the level
      component = line.substr(1, line.find_first_of(" ]") - 1) + ": ";
    line = component + line.substr(tag + 8);
    if (!why.empty())
      why += "; ";
    why += line;
    if (why.size() > 600) {
      why += " ...";
      break;
    }
  }
  return why;
}

// The input's first audio stream's codec, from its description
// ("Stream #0:0[0x1](und): Audio: aac (LC) (mp4a / ...), 48000 Hz, ...").
std::string codec_of(const std::string& text) {
  for (const std::string& line : lines_of(text)) {
    if (line.find("Output #") != std::string::npos)
      break;
    const std::size_t a = line.find(": Audio: ");
    if (a == std::string::npos || line.find("Stream #") == std::string::npos)
      continue;
    const std::size_t from = a + 9;
    const std::size_t to = line.find_first_of(" ,", from);
    return line.substr(from, to == std::string::npos ? std::string::npos : to - from);
  }
  return {};
}

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
      : path_(std::move(path)), program_(ffmpeg_program()),
        child_(program_,
               {"-nostdin", "-hide_banner", "-nostats", "-loglevel", "level+info", "-i", path_,
                "-map", "0:a:0", "-vn", "-sn", "-dn", "-c:a", "pcm_f32le", "-f", "wav", "-"},
               path_) {
    read_header();
    const std::string codec = codec_of(child_.messages());
    format_ = (codec.empty() ? std::string("audio") : codec) + " via ffmpeg";
  }

  [[nodiscard]] const SourceInfo& info() const noexcept override { return info_; }
  [[nodiscard]] std::string path() const override { return path_; }
  [[nodiscard]] std::string format_name() const override { return format_; }
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
    const std::string why = reason_of(messages);
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
    const std::string what =
        WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                          : "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    const std::string why = reason_of(child_.messages());
    throw io_error(path_ + ": ffmpeg cannot decode it (" + what + (why.empty() ? "" : ": " + why) +
                   ")" + (position_ > 0 ? " after frame " + std::to_string(position_) : ""));
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
  std::string program_;
  FfmpegChild child_;
  SourceInfo info_;
  std::string format_;
  std::int64_t position_ = 0;
  bool ended_ = false;
  std::atomic<bool> cancelled_{false};
};

} // namespace

std::string ffmpeg_program() {
  const char* p = std::getenv("SIGSTREAM_FFMPEG");
  return p != nullptr && *p != '\0' ? std::string(p) : std::string("ffmpeg");
}

std::unique_ptr<Source> open_ffmpeg_source(const std::string& path) {
  if (ffmpeg_program() == "none")
    throw io_error(path + ": not a format libsndfile reads (SIGSTREAM_FFMPEG=none: FFmpeg is not "
                          "asked)");
  return std::make_unique<FfmpegSource>(path);
}

} // namespace sigstream
