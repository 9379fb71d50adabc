#include "pipeline/io/ffmpeg_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "core/cleanup.hpp"
#include "core/error.hpp"

extern char** environ;

namespace sigstream {

namespace {

std::string install_hint(const std::string& path, const std::string& program, bool output) {
  const std::string verb = output ? "writes" : "reads";
  if (program == "none")
    return path + ": not a format libsndfile " + verb +
           " (SIGSTREAM_FFMPEG=none: FFmpeg is not asked)";
  return path + ": not a format libsndfile " + verb +
         "; install ffmpeg (apt-get install ffmpeg) to " + (output ? "write" : "read") + " it" +
         (program == "ffmpeg" ? "" : " (SIGSTREAM_FFMPEG=" + program + " was not found)");
}

// An unlinked temporary file (the child's standard error).
int anonymous_file() {
  const char* dir = std::getenv("TMPDIR");
  const std::string d = dir != nullptr && *dir != '\0' ? dir : "/tmp";
  int fd = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0)
    return fd;
  std::string name = d + "/sigstream-ffmpeg-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0)
    throw io_error("cannot make a temporary file in " + d +
                   " for ffmpeg's messages: " + std::strerror(errno));
  ::unlink(name.c_str());
  return fd;
}

void close_fd(int& fd) noexcept {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

// FFmpeg's log lines.
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

} // namespace

std::string ffmpeg_program() {
  const char* p = std::getenv("SIGSTREAM_FFMPEG");
  return p != nullptr && *p != '\0' ? std::string(p) : std::string("ffmpeg");
}

FfmpegChild::FfmpegChild(const std::vector<std::string>& args, const std::string& path,
                         Wiring wiring)
    : program_(ffmpeg_program()) {
  if (program_ == "none")
    throw io_error(install_hint(path, program_, wiring.we_write_stdin));
  err_ = anonymous_file();
  int out_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1};
  const auto fail = [&](const std::string& what) {
    for (int* fd : {&out_pipe[0], &out_pipe[1], &in_pipe[0], &in_pipe[1], &err_})
      close_fd(*fd);
    throw io_error(path + ": " + what);
  };
  if (wiring.we_read_stdout && ::pipe2(out_pipe, O_CLOEXEC) != 0)
    fail(std::string("cannot make a pipe for ffmpeg: ") + std::strerror(errno));
  if (wiring.we_write_stdin && ::pipe2(in_pipe, O_CLOEXEC) != 0)
    fail(std::string("cannot make a pipe for ffmpeg: ") + std::strerror(errno));
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program_.c_str()));
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (wiring.we_write_stdin)
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (wiring.we_read_stdout)
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_, STDERR_FILENO);
  if (wiring.fd3 >= 0)
    posix_spawn_file_actions_adddup2(&actions, wiring.fd3, 3);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Nothing else of ours (libsndfile opens its files without O_CLOEXEC;
  // another worker's outputs).
  posix_spawn_file_actions_addclosefrom_np(&actions, wiring.fd3 >= 0 ? 4 : 3);
#endif
  // The child's signals as a fresh process's (ours catch SIGINT and SIGTERM,
  // and ignore SIGPIPE).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (const int s : {SIGINT, SIGTERM, SIGPIPE})
    sigaddset(&defaults, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, program_.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(out_pipe[1]);
  close_fd(in_pipe[0]);
  out_ = out_pipe[0];
  in_ = in_pipe[1];
  if (rc != 0) {
    if (rc == ENOENT || rc == EACCES || rc == ENOTDIR)
      fail(install_hint(path, program_, wiring.we_write_stdin).substr(path.size() + 2));
    fail("cannot run " + program_ + ": " + std::strerror(rc));
  }
  pid_ = pid;
  slot_ = register_child(pid_);
  // Our writes wait in poll() (ByteSink), never in write(): a blocked write
  // of a chunk into a full pipe would hold the run past a signal that
  // another thread took.
  if (in_ >= 0)
    static_cast<void>(::fcntl(in_, F_SETFL, ::fcntl(in_, F_GETFL) | O_NONBLOCK));
}

FfmpegChild::~FfmpegChild() {
  stop();
  close_fd(err_);
}

void FfmpegChild::close_in() noexcept {
  close_fd(in_);
}

int FfmpegChild::wait() {
  close_fd(out_);
  close_fd(in_);
  if (pid_ <= 0)
    return status_;
  int status = 0;
  pid_t r = -1;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  const int err = errno;
  unregister_child(slot_);
  pid_ = -1;
  // (ECHILD: SIGCHLD ignored by whoever started us, the child reaped
  // unseen; its success cannot be known.)
  if (r < 0)
    throw io_error(program_ + ": cannot learn how it ended: " + std::strerror(err));
  status_ = status;
  return status_;
}

std::string FfmpegChild::messages() const {
  std::string text;
  char buf[4096];
  off_t at = 0;
  ssize_t n = 0;
  while ((n = ::pread(err_, buf, sizeof buf, at)) > 0 && text.size() < (1U << 20)) {
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  return text;
}

// Closes our pipe ends (a child blocked on one gets EOF or EPIPE), asks it
// to stop, and reaps it; one that does not stop within 2 s is killed.
void FfmpegChild::stop() noexcept {
  close_fd(out_);
  close_fd(in_);
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

std::string ffmpeg_errors(const std::string& messages) {
  std::string why;
  for (std::string line : lines_of(messages)) {
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

std::string ffmpeg_input_codec(const std::string& messages) {
  for (const std::string& line : lines_of(messages)) {
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

std::string ffmpeg_failure(int status, const std::string& messages) {
  const std::string what =
      WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                        : "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  const std::string why = ffmpeg_errors(messages);
  return why.empty() ? what : what + ": " + why;
}

} // namespace sigstream
