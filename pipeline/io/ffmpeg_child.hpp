#pragma once
// The `ffmpeg` program as a child process (SPEC §14): FFmpeg decodes the
// inputs libsndfile does not read (ffmpeg_source.hpp) and encodes the
// outputs it does not write (.m4a: audio_sink.hpp). sigstream links none of
// FFmpeg's libraries (their Debian builds are GPL): it runs
// `$SIGSTREAM_FFMPEG` where that is set (and then only that; "none": never),
// else `ffmpeg` on PATH.
//
// The child is stopped (SIGTERM; SIGKILL after 2 s) and reaped when its
// owner goes, on every path; a second SIGINT/SIGTERM kills it before the
// process exits (core/cleanup.hpp). Its standard error goes to an unlinked
// temporary file (never a pipe nobody reads, on which it could block), and
// its errors become part of sigstream's messages.
#include <string>
#include <utility>
#include <vector>

namespace sigstream {

// $SIGSTREAM_FFMPEG, else "ffmpeg".
[[nodiscard]] std::string ffmpeg_program();

class FfmpegChild {
public:
  // What the child's standard input and output are: a pipe to or from us,
  // or /dev/null. `fd3`: a descriptor of ours it gets as its fd 3 (-1: none).
  struct Wiring {
    bool we_read_stdout = false;
    bool we_write_stdin = false;
    int fd3 = -1;
  };
  // Runs ffmpeg_program() with `args`. Throws Error(io) naming `path`: the
  // install hint where the program is missing or "none" (to read it, or to
  // write it where we write its standard input).
  FfmpegChild(const std::vector<std::string>& args, const std::string& path, Wiring wiring);
  FfmpegChild(const FfmpegChild&) = delete;
  FfmpegChild& operator=(const FfmpegChild&) = delete;
  ~FfmpegChild();

  // Our ends of its standard output and input (-1 where not a pipe, or closed).
  [[nodiscard]] int out() const noexcept { return out_; }
  [[nodiscard]] int in() const noexcept { return in_; }
  // Closes our end of its standard input (its end of the data).
  void close_in() noexcept;
  // Hands our end of its standard input (non-blocking) to the caller, who
  // closes it.
  [[nodiscard]] int take_in() noexcept { return std::exchange(in_, -1); }
  // Waits for its end (our pipe ends closed first) and returns waitpid's
  // status (the same on later calls). Throws Error(io) where the status
  // cannot be had (SIGCHLD ignored: the child reaped unseen).
  int wait();
  // What it wrote to its standard error.
  [[nodiscard]] std::string messages() const;

private:
  void stop() noexcept;

  std::string program_;
  int pid_ = -1;
  int out_ = -1, in_ = -1, err_ = -1;
  int slot_ = -1;
  int status_ = 0; // wait()'s, for a later call
};

// FFmpeg's errors in `messages` (written with -loglevel level+...), joined
// and without their level tags; "" when it gave none.
[[nodiscard]] std::string ffmpeg_errors(const std::string& messages);
// The codec of the input's first audio stream, from its description ("aac").
[[nodiscard]] std::string ffmpeg_input_codec(const std::string& messages);
// "exit status 1: <errors>" or "signal 9" for a waitpid status.
[[nodiscard]] std::string ffmpeg_failure(int status, const std::string& messages);

} // namespace sigstream
