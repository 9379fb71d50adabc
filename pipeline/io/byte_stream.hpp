#pragma once
// Byte streams that libsndfile reads and writes through its virtual I/O, so
// that standard input/output, FIFOs and other non-seekable files carry every
// container libsndfile handles sequentially (SPEC §6).
//
// ByteSource reads forward from a descriptor. libsndfile seeks while it
// parses a header, so every byte read stays retained until release_header()
// (called once the file is open); after that, reads go straight through and
// only forward seeks work. While the header is parsed, a read far past what
// has arrived finds nothing instead of waiting (libsndfile looks 4 GiB ahead
// for chunks after a WAV data chunk of unknown size). Waiting for input
// polls, so that SIGINT/SIGTERM, or cancel() from another thread, end a run
// whose producer has stalled.
//
// ByteSink writes forward to a descriptor. It holds what libsndfile writes
// until release() and then sends it; writes that land before what was sent
// (libsndfile rewriting a header with the final sizes when it closes) are
// dropped, since a pipe cannot be rewound. release() first marks the sizes in
// the header as unknown, as FFmpeg does on a pipe (see patch_unknown_sizes).
#include <sndfile.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace sigstream {

// While one is alive, the streams' waits on this thread spin (poll with a
// zero timeout, again and again) instead of sleeping in the kernel: live
// mode's execution.busy_poll. A thread that sleeps between blocks can take
// milliseconds to run again on a virtual machine (its virtual CPU halts, and
// the host may give the physical one away); one that spins keeps it. Scopes
// nest: an inner BusyPollScope(false) leaves an outer one's spinning on.
class BusyPollScope {
public:
  explicit BusyPollScope(bool on) noexcept;
  ~BusyPollScope();
  BusyPollScope(const BusyPollScope&) = delete;
  BusyPollScope& operator=(const BusyPollScope&) = delete;

private:
  bool was_;
};

class ByteSource {
public:
  // How far past the bytes that have come a header read may start (one
  // further on is answered with nothing).
  static constexpr std::int64_t kHeaderSlack = 65536;

  // `fd` is not closed by the stream. `name` is used in messages ("-" = stdin).
  ByteSource(int fd, std::string name);
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  [[nodiscard]] SF_VIRTUAL_IO* io() noexcept { return &io_; }
  [[nodiscard]] void* user() noexcept { return this; }
  // Stop retaining bytes for backward seeks (the header has been parsed).
  void release_header() noexcept;
  // The first `n` bytes of the stream (fewer where it ends sooner), waiting
  // for them: for telling a container by its magic before libsndfile opens it.
  [[nodiscard]] const std::vector<unsigned char>& peek(std::int64_t n);
  // The length libsndfile is told for a stream (its default: a huge one, so
  // that it trusts the header's sizes): a header's own total size, where a
  // container's reader needs one (Wave64).
  void set_stated_length(std::int64_t bytes) noexcept { stated_length_ = bytes; }
  // The bytes retained so far from offset 0 (the header, before release_header()).
  [[nodiscard]] const std::vector<unsigned char>& retained() const noexcept { return buf_; }
  // Makes byte `offset` (retained) position 0 and retains again from there:
  // for reopening the samples of a WAV of unknown length as raw PCM.
  void rebase(std::int64_t offset);
  // Reads to the end of the stream and returns how many bytes lay past the
  // current position (a raw stream's partial last frame).
  std::int64_t drain();
  // Regular files have a length; pipes do not (length() then reports a huge
  // value, so that libsndfile trusts the header's sizes).
  [[nodiscard]] bool has_length() const noexcept { return file_length_ >= 0; }
  [[nodiscard]] std::int64_t length() const noexcept { return file_length_; }
  [[nodiscard]] std::int64_t position() const noexcept { return pos_; }
  // libsndfile sees a failed read as a short one; the error itself (a read
  // error, an interruption) is kept and rethrown here.
  void rethrow_error();
  // Makes a read that waits for input give up (from any thread).
  void cancel() noexcept { cancel_ = true; }
  // Whether a read of `bytes` would find them (or the end, or an error to
  // report) without waiting for more to arrive: the retained bytes past the
  // position and what the descriptor holds (FIONREAD). At most 16 KiB are
  // asked for, so that a block larger than the pipe can hold still starts.
  // Safe from any thread while another reads (live mode's redundant lanes
  // take the reader's turn only then).
  [[nodiscard]] bool ready_now(std::int64_t bytes) const noexcept;

private:
  std::int64_t fill_to(std::int64_t end);                   // retains bytes up to `end` (or EOF)
  std::int64_t read_fd(unsigned char* dst, std::int64_t n); // blocking, polls for signals
  std::int64_t read(void* dst, std::int64_t n);
  std::int64_t seek(std::int64_t offset, int whence);

  int fd_;
  std::string name_;
  std::int64_t file_length_ = -1;
  std::int64_t stated_length_ = -1; // see set_stated_length
  std::vector<unsigned char> buf_;  // bytes [base_, base_ + buf_.size())
  std::int64_t base_ = 0;
  std::int64_t pos_ = 0;      // libsndfile's position
  std::int64_t consumed_ = 0; // bytes taken from the descriptor
  bool retaining_ = true;
  bool eof_ = false;
  bool header_fixed_ = false; // see caf_unknown_size_to_huge in the .cpp
  std::atomic<bool> cancel_{false};
  // Retained bytes past the position, -1 at the end or after an error (see
  // ready_now); set by the reading thread.
  std::atomic<std::int64_t> buffered_{-1};
  std::exception_ptr error_;
  SF_VIRTUAL_IO io_{};

  void note_pending() noexcept;
};

class ByteSink {
public:
  // `major` is the SF_FORMAT_* container (for patch_unknown_sizes).
  ByteSink(int fd, std::string name, int major);
  ByteSink(const ByteSink&) = delete;
  ByteSink& operator=(const ByteSink&) = delete;

  [[nodiscard]] SF_VIRTUAL_IO* io() noexcept { return &io_; }
  [[nodiscard]] void* user() noexcept { return this; }
  // Sends the held header (sizes marked unknown) and everything after it;
  // later writes go out at once. Throws Error(io), or Error(output_closed)
  // when the reader has closed the pipe.
  void release();
  // A failed write seen by libsndfile as a short one: rethrows its error.
  void rethrow_error();
  void cancel() noexcept { cancel_ = true; }

private:
  std::int64_t write(const void* src, std::int64_t n);
  std::int64_t seek(std::int64_t offset, int whence);
  void send(const unsigned char* p, std::int64_t n);

  int fd_;
  std::string name_;
  int major_;
  std::vector<unsigned char> held_; // bytes [sent_, sent_ + held_.size())
  std::int64_t sent_ = 0;
  std::int64_t pos_ = 0;
  bool holding_ = true;
  std::atomic<bool> cancel_{false};
  std::exception_ptr error_;
  SF_VIRTUAL_IO io_{};
};

// Marks the sizes in a header libsndfile wrote for a file of unknown length:
// WAV RIFF and data sizes 0xFFFFFFFF (as `ffmpeg -f wav -` writes), AU data
// size 0xFFFFFFFF (the AU "unknown size"), CAF data size -1 (CAF's "unknown").
// libsndfile has no way to write these itself, so the few fields are set by
// hand here. Other containers (raw; FLAC, whose encoder leaves the total
// sample count 0, "unknown") are left as they are.
void patch_unknown_sizes(int major, std::vector<unsigned char>& header);

// Where a WAV header's sample data begins (after the "data" chunk's size),
// or -1 when the bytes hold no RIFF/WAVE data chunk header.
[[nodiscard]] std::int64_t wav_data_offset(const std::vector<unsigned char>& header);

// Whether the header's length of the audio data is a placeholder for
// "unknown" (WAV data size 0 or 0xFFFFFFFF, AU 0xFFFFFFFF, CAF -1). Read by
// hand because libsndfile turns a WAV placeholder into a plausible frame count
// (0xFFFFFFFF bytes) without saying it was one.
[[nodiscard]] bool header_length_unknown(int major, const std::vector<unsigned char>& header);

} // namespace sigstream
