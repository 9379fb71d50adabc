#pragma once
// What every fuzz target holds its code to (issue P10): any input ends in a
// result or a sigstream::Error (what the CLI turns into a message and an exit
// code). Any other exception (std::bad_alloc from an unbounded size, a
// std::out_of_range from an unchecked index) is a finding: it aborts, so
// libFuzzer keeps the input; ASan and UBSan report the rest.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "pipeline/io/atomic_file.hpp"

namespace sigstream::fuzz {

// No input goes to FFmpeg here (a child process per input would be the whole
// of the fuzzer's time): what libsndfile does not read is an error.
inline const bool kNoFfmpeg = [] { return ::setenv("SIGSTREAM_FFMPEG", "none", 1) == 0; }();

template <class F> void only_errors(F&& body) {
  try {
    body();
  } catch (const Error&) {
    // A clear error for a bad input: what we want.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception other than sigstream::Error escaped: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: a non-std exception escaped\n");
    std::abort();
  }
}

[[nodiscard]] inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file holding `bytes`, in memory (memfd), with a path the library can
// open: "/proc/self/fd/N". Closed by the destructor.
class MemoryFile {
public:
  explicit MemoryFile(std::string_view bytes) : fd_(memfd_create("sigstream-fuzz", 0)) {
    if (fd_ < 0)
      std::abort();
    write_all(fd_, bytes,
              "fuzz input (memfd)"); // throws outside only_errors: a harness failure aborts
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { ::close(fd_); }
  [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
  int fd_;
};

// A pipe holding `bytes` (at most a pipe's 64 KiB; the rest is dropped) with
// its write end closed: a finished stream, read through "/proc/self/fd/N".
class FinishedPipe {
public:
  static constexpr std::size_t kMax = 65536;
  explicit FinishedPipe(std::string_view bytes) {
    int fds[2];
    if (::pipe(fds) != 0)
      std::abort();
    read_fd_ = fds[0];
    write_all(fds[1], bytes.substr(0, kMax), "fuzz input (pipe)");
    ::close(fds[1]);
  }
  FinishedPipe(const FinishedPipe&) = delete;
  FinishedPipe& operator=(const FinishedPipe&) = delete;
  ~FinishedPipe() { ::close(read_fd_); }
  [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(read_fd_); }

private:
  int read_fd_ = -1;
};

} // namespace sigstream::fuzz
