#pragma once
// Streams for the pipeline tests of both backends (SPEC §6): a FIFO fed from
// a thread in seeded random write sizes, and the file-vs-stream comparison
// that "a stream changes no bit" asks for.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/config.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "test_support.hpp"

namespace sigstream::test {

inline std::vector<unsigned char> slurp_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A WAV's RIFF and data sizes set to 0xFFFFFFFF, as `ffmpeg -f wav -` writes.
inline void mark_unknown_length(std::vector<unsigned char>& wav) {
  for (int i = 4; i < 8; ++i)
    wav[static_cast<std::size_t>(i)] = 0xFF;
  for (std::size_t at = 12; at + 8 <= wav.size();) {
    const std::uint32_t size = wav[at + 4] | wav[at + 5] << 8 | wav[at + 6] << 16 |
                               static_cast<std::uint32_t>(wav[at + 7]) << 24;
    if (std::string(wav.begin() + static_cast<std::ptrdiff_t>(at),
                    wav.begin() + static_cast<std::ptrdiff_t>(at) + 4) == "data") {
      for (std::size_t i = at + 4; i < at + 8; ++i)
        wav[i] = 0xFF;
      return;
    }
    at += 8 + size + (size & 1);
  }
}

// A FIFO at `path` that a thread fills with `bytes` in writes of 1..max_write
// bytes (seeded), then closes. Joined on destruction.
class FifoFeeder {
public:
  FifoFeeder(std::string path, std::vector<unsigned char> bytes, std::uint32_t seed, int max_write)
      : path_(std::move(path)) {
    if (::mkfifo(path_.c_str(), 0600) != 0)
      throw std::runtime_error("mkfifo " + path_);
    thread_ = std::thread([this, bytes = std::move(bytes), seed, max_write] {
      const int fd = ::open(path_.c_str(), O_WRONLY);
      if (fd < 0)
        return;
      std::mt19937 rng(seed);
      std::uniform_int_distribution<int> size(1, max_write);
      for (std::size_t at = 0; at < bytes.size();) {
        const auto n =
            std::min<std::size_t>(static_cast<std::size_t>(size(rng)), bytes.size() - at);
        const ssize_t w = ::write(fd, bytes.data() + at, n);
        if (w <= 0)
          break;
        at += static_cast<std::size_t>(w);
      }
      ::close(fd);
    });
  }
  ~FifoFeeder() {
    if (thread_.joinable())
      thread_.join();
  }
  FifoFeeder(const FifoFeeder&) = delete;
  FifoFeeder& operator=(const FifoFeeder&) = delete;

private:
  std::string path_;
  std::thread thread_;
};

struct StreamCase {
  std::string name;
  std::vector<StageSpec> stages;
  std::int64_t frames = 0;
  int channels = 2;
  std::int64_t chunk_frames = 0;
  int max_write = 4096;
};

// Cases over every mode and both methods, odd lengths and chunk sizes.
inline std::vector<StreamCase> stream_cases() {
  std::vector<StreamCase> out;
  std::uint32_t seed = 100;
  for (FirMode mode : {FirMode::causal, FirMode::same, FirMode::full}) {
    for (FirMethod method : {FirMethod::direct, FirMethod::fft}) {
      for (std::int64_t chunk : {std::int64_t{997}, std::int64_t{4096}, std::int64_t{30011}}) {
        StreamCase c;
        c.name = std::string(to_string(mode)) + "_" + std::string(to_string(method)) + "_" +
                 std::to_string(chunk);
        const int k = mode == FirMode::full ? 129 : 63;
        c.stages = {fir_stage("f", random_taps_unit_energy(k, ++seed), mode, method),
                    gain_stage("g", 0.7), metrics_stage("m"),
                    fir_stage("f2", random_taps_unit_energy(11, ++seed), FirMode::same, method)};
        c.frames = 30011;
        c.channels = chunk == 4096 ? 3 : 2;
        c.chunk_frames = chunk;
        c.max_write = chunk == 997 ? 7 : 9000;
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

// Runs `c` on `backend` from a WAV file and from the same bytes (sizes
// unknown) through a FIFO, and returns both outputs' bytes.
inline std::pair<std::vector<unsigned char>, std::vector<unsigned char>>
file_and_stream_outputs(const StreamCase& c, BackendKind backend, std::uint32_t seed) {
  TempDir dir;
  const std::string in = dir.file("in.wav");
  write_audio(in, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 48000, c.channels,
              random_samples(static_cast<std::size_t>(c.frames * c.channels), seed, 0.9f, 16));
  Config cfg;
  cfg.origin = "test";
  cfg.stages = c.stages;
  cfg.execution.backend = backend;
  cfg.execution.chunk_frames = c.chunk_frames;
  cfg.execution.streams = 3;
  cfg.source.file = in;
  cfg.sink.file = dir.file("file.wav");
  run_pipeline(cfg, {});
  std::vector<unsigned char> bytes = slurp_bytes(in);
  mark_unknown_length(bytes);
  {
    FifoFeeder feed(dir.file("in.fifo"), std::move(bytes), seed, c.max_write);
    cfg.source.file = dir.file("in.fifo");
    cfg.sink.file = dir.file("stream.wav");
    run_pipeline(cfg, {});
  }
  return {slurp_bytes(dir.file("file.wav")), slurp_bytes(dir.file("stream.wav"))};
}

} // namespace sigstream::test
