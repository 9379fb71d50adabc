// CAF headers out of libsndfile's bounds (pipeline/io/caf_guard.hpp) are an
// io error naming the file, on a file and on a stream alike, before
// libsndfile sees them; CAF files libsndfile writes read as before.
#include <gtest/gtest.h>
#include <sndfile.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/io/byte_stream.hpp"
#include "pipeline/io/caf_guard.hpp"
#include "pipeline/io/source.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

using Bytes = std::vector<unsigned char>;

void put_be(Bytes& b, std::uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i)
    b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put_tag(Bytes& b, const char* id) {
  b.insert(b.end(), id, id + 4);
}
void put_chunk(Bytes& b, const char* id, std::int64_t size) {
  put_tag(b, id);
  put_be(b, static_cast<std::uint64_t>(size), 8);
}

// "caff" v1 and a desc chunk: lpcm, 16-bit big-endian, 1 channel, 48 kHz.
Bytes caf_head() {
  Bytes b;
  put_tag(b, "caff");
  put_be(b, 0x00010000, 4);
  put_chunk(b, "desc", 32);
  double rate = 48000.0;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &rate, 8);
  put_be(b, bits, 8);
  put_tag(b, "lpcm");
  for (std::uint32_t v : {0u, 2u, 1u, 1u, 16u})
    put_be(b, v, 4);
  return b;
}

// fuzz/regressions/audio/caf-data-size-cut-off without fuzz_audio's first
// three bytes (a stream, no raw options): a 'data' chunk whose size the file
// ends inside. On a stream libsndfile walked back onto it for ever,
// recording a chunk each time, until its table passed 3 GB.
Bytes fuzz_input() {
  const unsigned char b[] = {0x63, 0x61, 0x66, 0x66, 0x00, 0x01, 0x00, 0x00, 0x64, 0x65, 0x73, 0x63,
                             0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x40, 0xbf, 0x00, 0x12,
                             0x00, 0x00, 0x00, 0x00, 0x6c, 0x70, 0x63, 0x6d, 0x00, 0x00, 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
                             0x00, 0x00, 0x11, 0x00, 0x64, 0x61, 0x74, 0x61, 0xff, 0x20, 0xf0};
  return {std::begin(b), std::end(b)};
}

void write_bytes(const std::string& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The io error opening `path` gives, or "" when it opens.
std::string open_error(const std::string& path) {
  try {
    const auto src = open_audio_file(path, std::nullopt);
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
    return e.what();
  }
}

// A pipe holding `bytes` (under 64 KiB) with its write end closed: a
// finished stream, read through "/proc/self/fd/N" (as fuzz_audio reads one).
class FinishedPipe {
public:
  explicit FinishedPipe(const Bytes& bytes) {
    int fds[2];
    if (::pipe(fds) != 0)
      throw std::runtime_error("pipe");
    read_fd_ = fds[0];
    const ssize_t w = ::write(fds[1], bytes.data(), bytes.size());
    ::close(fds[1]);
    if (w != static_cast<ssize_t>(bytes.size()))
      throw std::runtime_error("pipe write");
  }
  FinishedPipe(const FinishedPipe&) = delete;
  FinishedPipe& operator=(const FinishedPipe&) = delete;
  ~FinishedPipe() { ::close(read_fd_); }
  [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(read_fd_); }

private:
  int read_fd_ = -1;
};

// The same bytes as a file and as a stream: both refused, with `expect`.
void expect_refused(const Bytes& bytes, const std::string& expect) {
  test::TempDir dir;
  const std::string file = dir.file("bad.caf");
  write_bytes(file, bytes);
  const std::string on_file = open_error(file);
  EXPECT_EQ(on_file.rfind(file + ": bad CAF header (", 0), 0u) << on_file;
  EXPECT_NE(on_file.find(expect), std::string::npos) << on_file;
  const FinishedPipe pipe(bytes);
  const std::string on_stream = open_error(pipe.path());
  EXPECT_EQ(on_stream.rfind(pipe.path() + ": bad CAF header (", 0), 0u) << on_stream;
  EXPECT_NE(on_stream.find(expect), std::string::npos) << on_stream;
}

TEST(CafGuard, DataSizeCutOffByTheEndIsRefused) {
  const Bytes b = fuzz_input();
  test::TempDir dir;
  const std::string file = dir.file("x.caf");
  write_bytes(file, b);
  EXPECT_EQ(open_error(file), file + ": bad CAF header (data chunk at byte 52: the input ends at "
                                     "byte 59, inside its 16 bytes of header (size, edit count))");
  expect_refused(b, "data chunk at byte 52: the input ends at byte 59");
}

TEST(CafGuard, ASecondDataChunkCutOffIsRefused) {
  Bytes b = caf_head();
  put_chunk(b, "data", 4);
  put_be(b, 0, 4); // edit count; no samples
  put_tag(b, "data");
  b.insert(b.end(), {0xff, 0x20, 0xf0});
  expect_refused(b, "data chunk at byte 68: the input ends at byte 75");
}

TEST(CafGuard, DataSizeBelowItsEditCountIsRefused) {
  Bytes b = caf_head();
  put_chunk(b, "data", 2);
  put_be(b, 0, 4);
  for (int i = 0; i < 100; ++i)
    put_be(b, static_cast<std::uint64_t>(i), 2);
  expect_refused(b, "data chunk at byte 52: size 2; at least 4");
}

// On a stream, refused with `expect`; as a file, libsndfile refuses it
// itself (its sizes pass the file's length, where it stops): an io error too.
void expect_stream_refused(const Bytes& bytes, const std::string& expect) {
  const FinishedPipe pipe(bytes);
  const std::string on_stream = open_error(pipe.path());
  EXPECT_EQ(on_stream, pipe.path() + ": bad CAF header (" + expect + ")");
  test::TempDir dir;
  const std::string file = dir.file("bad.caf");
  write_bytes(file, bytes);
  EXPECT_NE(open_error(file), "");
}

TEST(CafGuard, DataSizeWhoseIntSkipGoesNowhereIsFollowed) {
  // libsndfile skips a chunk by an int: 0x0000ffffffff0000 bytes of samples
  // make -65536, which goes nowhere, and it reads the next chunk right after
  // the edit count, where the input ends inside a 'data' chunk's size
  // (fuzz/regressions/audio/caf-stream-data-size-int-skip-back).
  Bytes b = caf_head();
  put_chunk(b, "data", 0x0000ffffffff0004);
  put_be(b, 0, 4);
  put_tag(b, "data");
  b.insert(b.end(), {0xff, 0x20, 0xf0});
  expect_stream_refused(b, "data chunk at byte 68: the input ends at byte 75, inside its 16 "
                           "bytes of header (size, edit count)");
}

TEST(CafGuard, DataSizeWhoseIntSkipComesBackIsRefused) {
  // 2^32 - 16 bytes of samples skip -16: back onto the same chunk.
  Bytes b = caf_head();
  put_chunk(b, "data", (std::int64_t{1} << 32) - 12);
  put_be(b, 0, 4);
  b.resize(b.size() + 600, 1);
  expect_stream_refused(b, "more than 65536 chunks");
}

TEST(CafGuard, ALoopPastTheGuardEndsAtTheBoundOnSteps) {
  // An info chunk over 50 KB is one libsndfile does not read (its header
  // buffer stops at 100 KB): it reads on inside it, where a 'data' chunk
  // skips back onto itself. The guard follows the chunks as written; the
  // source's bound on libsndfile's steps ends the loop.
  Bytes b = caf_head();
  put_chunk(b, "info", 52000);
  const std::size_t body = b.size();
  put_be(b, 0, 4);
  put_chunk(b, "data", (std::int64_t{1} << 32) - 12);
  put_be(b, 0, 4);
  b.resize(body + 52000);
  put_chunk(b, "data", 4 + 200);
  b.resize(b.size() + 204, 1);
  expect_stream_refused(b, "its chunk sizes lead libsndfile round in a loop: over 262144 steps");
}

TEST(CafGuard, InfoChunkPastTheEndIsRefused) {
  // libsndfile allocates an info chunk whole: on a stream, 3.5 GB here.
  Bytes b = caf_head();
  put_chunk(b, "info", 3500000000);
  put_be(b, 1, 4);
  for (char c : std::string("title\0x\0", 8))
    b.push_back(static_cast<unsigned char>(c));
  put_chunk(b, "data", 4 + 200);
  b.resize(b.size() + 204);
  expect_refused(b, "info chunk at byte 52: 3500000000 bytes, past the end of the");
}

TEST(CafGuard, DescSizeBeyondWhatLibsndfileSkipsIsRefused) {
  Bytes b = caf_head();
  for (int i = 0; i < 8; ++i) // desc size: 2^32 + 36
    b[12 + static_cast<std::size_t>(i)] = i == 3 ? 1 : i == 7 ? 36 : 0;
  b.resize(b.size() + 4);
  put_chunk(b, "data", 4 + 20);
  b.resize(b.size() + 24);
  expect_refused(b, "desc chunk: 4294967332 bytes; at most 2147483679");
}

TEST(CafGuard, ChunksBeyondTheBoundAreRefused) {
  Bytes b = caf_head();
  for (std::int64_t i = 0; i <= kCafMaxChunks; ++i)
    put_chunk(b, "free", 0);
  put_chunk(b, "data", 4 + 20);
  b.resize(b.size() + 24);
  CafInput in;
  in.length = static_cast<std::int64_t>(b.size());
  in.read = [&b](std::int64_t at, unsigned char* dst, std::int64_t n) -> std::int64_t {
    const auto have = static_cast<std::int64_t>(b.size());
    const std::int64_t k = std::max<std::int64_t>(0, std::min(n, have - at));
    std::memcpy(dst, b.data() + at, static_cast<std::size_t>(k));
    return k;
  };
  try {
    check_caf_header("many.caf", in);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_EQ(std::string(e.what()), "many.caf: bad CAF header (more than 65536 chunks)");
  }
  b.resize(caf_head().size()); // a few are fine
  for (int i = 0; i < 10; ++i)
    put_chunk(b, "free", 0);
  put_chunk(b, "data", 4 + 20);
  b.resize(b.size() + 24);
  in.length = static_cast<std::int64_t>(b.size());
  EXPECT_NO_THROW(check_caf_header("few.caf", in));
}

// Every frame of a source, as 16-bit samples.
std::vector<short> read_all(Source& src) {
  const SourceInfo& info = src.info();
  EXPECT_EQ(info.sample_type, SampleType::i16);
  HostBlock block = make_host_block(info.sample_type, info.channels, 1000);
  std::vector<short> out;
  for (;;) {
    const std::int64_t got = src.read(block, 0, 1000);
    const short* s = block.as<short>();
    out.insert(out.end(), s, s + got * info.channels);
    if (got < 1000)
      return out;
  }
}

TEST(CafGuard, CafWrittenByLibsndfileReadsTheSame) {
  // 3 channels, an odd frame count, 16-bit PCM, written by libsndfile itself.
  test::TempDir dir;
  const std::string file = dir.file("real.caf");
  constexpr int kChannels = 3;
  constexpr sf_count_t kFrames = 4801;
  std::vector<short> samples(static_cast<std::size_t>(kFrames * kChannels));
  for (std::size_t i = 0; i < samples.size(); ++i)
    samples[i] = static_cast<short>((i * 7919 + 13) % 65536 - 32768);
  SF_INFO w{};
  w.format = SF_FORMAT_CAF | SF_FORMAT_PCM_16;
  w.channels = kChannels;
  w.samplerate = 44100;
  SNDFILE* f = sf_open(file.c_str(), SFM_WRITE, &w);
  ASSERT_NE(f, nullptr) << sf_strerror(nullptr);
  ASSERT_EQ(sf_writef_short(f, samples.data(), kFrames), kFrames);
  sf_close(f);

  const auto src = open_audio_file(file, std::nullopt);
  EXPECT_EQ(src->info().frames, kFrames);
  EXPECT_EQ(src->info().channels, kChannels);
  EXPECT_EQ(src->info().sample_rate, 44100);
  EXPECT_EQ(src->format_name(), "caf pcm16");
  EXPECT_EQ(read_all(*src), samples);

  // On a stream: as written, and with its data size -1 ("unknown", as CAF
  // on a pipe is written).
  Bytes bytes = test::slurp_bytes(file);
  for (const bool unknown : {false, true}) {
    Bytes b = bytes;
    if (unknown)
      patch_unknown_sizes(SF_FORMAT_CAF, b);
    const std::string fifo = dir.file(unknown ? "unknown.fifo" : "known.fifo");
    test::FifoFeeder feed(fifo, b, 5, 4096);
    const auto s = open_audio_file(fifo, std::nullopt);
    EXPECT_EQ(s->info().frames, unknown ? kUnknownFrames : kFrames);
    EXPECT_EQ(s->info().channels, kChannels);
    EXPECT_EQ(read_all(*s), samples) << "unknown size: " << unknown;
  }
}

TEST(CafGuard, AWavStreamWhoseChunkWalkGoesRoundEndsAtTheBoundOnSteps) {
  // Not only CAF: a WAV 'fact' chunk of size 0xfffffff7 sends libsndfile's
  // walk of a stream's chunks back, round and round, its table of them
  // growing past 3 GB (fuzz_audio: fuzz/regressions/audio/
  // wav-stream-fact-size-skip-back). The bound on libsndfile's steps, on
  // every stream, ends it: an io error, no OOM.
  const Bytes b = {0x52, 0x49, 0x46, 0x46, 0xf8, 0x04, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66,
                   0x6d, 0x74, 0x20, 0x10, 0x00, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x40, 0x1f,
                   0x00, 0x00, 0x00, 0x7d, 0x00, 0x00, 0x04, 0x00, 0x20, 0x00, 0x66, 0x61, 0x63,
                   0x74, 0xf7, 0xff, 0xff, 0xff, 0x04, 0x00, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00,
                   0x50, 0x41, 0x44, 0x20, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                   0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x66, 0x61,
                   0x63, 0x74, 0x04, 0x00, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00, 0x50, 0x41, 0x44,
                   0x20, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                   0x00, 0x00, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x44, 0x20, 0x10,
                   0x00, 0x3f, 0xe0, 0x3d, 0x75, 0xb3};
  const FinishedPipe pipe(b);
  const std::string on_stream = open_error(pipe.path());
  EXPECT_NE(on_stream.find("round in a loop"), std::string::npos) << on_stream;
  EXPECT_EQ(on_stream.rfind(pipe.path() + ": bad header (", 0), 0u) << on_stream;
}

} // namespace
} // namespace sigstream
