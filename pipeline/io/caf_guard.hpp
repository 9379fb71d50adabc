#pragma once
// The bounds on a CAF header that libsndfile's CAF reader (1.2) does not
// keep, checked before it opens a file or a stream (found by fuzz_audio:
// fuzz/regressions/audio/caf-*).
//
// After 'desc', libsndfile walks the chunks, recording each in a table (96
// bytes a chunk) and allocating some whole, until a marker of 0, a size it
// refuses or, on a file, the file's last 8 bytes stop it. On a stream it is
// told a huge length (2^60), so only the markers and sizes stop it there.
// Its skips over a chunk pass through an int: one of 2 GiB or more goes
// back, or (back past the start) nowhere, and the walk reads on from there.
//  - a 'data' chunk whose 8-byte size the input ends inside reads as size 0;
//    a size below 4 (the edit count every 'data' chunk starts with), or one
//    whose skip the int turns negative, sends the walk back, e.g. onto the
//    same chunk, for ever, and the table grows until memory runs out;
//  - an 'info' or 'pakt' chunk is allocated at its stated size, which on a
//    stream nothing bounds;
//  - every chunk walked costs a table entry.
// check_caf_header walks the chunks as libsndfile does (its int skips
// included) and refuses those; a walk that still goes round (where the two
// walks could part) ends at the source's bound on libsndfile's steps
// (audio_source.cpp, for streams).
#include <sndfile.h>

#include <cstdint>
#include <functional>
#include <string>

namespace sigstream {

class ByteSource; // pipeline/io/byte_stream.hpp

struct CafInput {
  // Copies the input's bytes [offset, offset + n) to `dst`, returning how
  // many there were (fewer where the input ends).
  std::function<std::int64_t(std::int64_t offset, unsigned char* dst, std::int64_t n)> read;
  // The input's length as libsndfile is told it (its get_filelen).
  std::int64_t length = 0;
  // A stream: a chunk that starts more than this past the bytes read so far
  // is never reached (ByteSource answers a header read that far ahead with
  // nothing: kHeaderSlack in byte_stream.cpp). -1: a file, read anywhere.
  std::int64_t reach = -1;
};

// More chunks than any real CAF holds; libsndfile's table of them is 6 MiB then.
constexpr std::int64_t kCafMaxChunks = 65536;

// Throws Error(io) "NAME: bad CAF header (...)" when the input is a CAF (it
// starts with "caff") whose chunks break those bounds; else does nothing
// (what libsndfile refuses itself is left to it).
void check_caf_header(const std::string& name, const CafInput& input);

// The same for a file, read where it lies (a file that does not open is
// left to libsndfile to report).
void check_caf_file(const std::string& path);

// The same for a stream, through bytes peeked (retained for libsndfile),
// not consumed.
[[nodiscard]] bool is_caf_stream(ByteSource& stream);
void check_caf_stream(const std::string& name, ByteSource& stream);

// libsndfile's I/O on a stream, counting its position asks while it opens:
// its readers (CAF, WAV, ...) ask at least once for each chunk they record,
// so after more asks than a real header takes (more than the chunks
// check_caf_header lets through) it is told it is at the end, which ends a
// walk that goes round. On a stream nothing else stops one: it is told a
// huge length (a WAV 'fact' chunk of size 0xfffffff7 sends its walk back,
// found by fuzz_audio: fuzz/regressions/audio/wav-stream-fact-size-skip-back).
// Open with io() and user(), which libsndfile then keeps using (so this
// lives as long as the SNDFILE); opened() once sf_open_virtual returns.
class StreamHeaderWalk {
public:
  explicit StreamHeaderWalk(ByteSource& stream);
  StreamHeaderWalk(const StreamHeaderWalk&) = delete;
  StreamHeaderWalk& operator=(const StreamHeaderWalk&) = delete;
  [[nodiscard]] SF_VIRTUAL_IO* io() noexcept { return &io_; }
  [[nodiscard]] void* user() noexcept { return this; }
  // Stops counting (the audio's reads ask too); throws Error(io) "NAME: bad
  // WHAT (...)" (WHAT: "header", "CAF header") when the walk was stopped.
  void opened(const std::string& name, const std::string& what = "header");

private:
  ByteSource& stream_;
  SF_VIRTUAL_IO io_{};
  std::int64_t tells_ = 0;
  bool counting_ = true;
};

} // namespace sigstream
