#pragma once
// The audio output: container from the file extension, sample format from the
// config (`same` keeps the source's), written through an AtomicFile so a failed
// or interrupted run leaves nothing behind.
#include <memory>
#include <string>

#include "pipeline/io/atomic_file.hpp"
#include "pipeline/sample_block.hpp"
#include "stages/types.hpp"

struct sf_private_tag;

namespace sigstream {

struct SinkFormat {
  int sndfile_format = 0;  // SF_FORMAT_* major | subtype
  int bits = 0;            // PCM bits to quantize to, 0 = float samples
  std::string name;        // "wav pcm16"
  std::string note;        // set when `same` had to pick another subtype
};

// Chooses the output format. `source_format` is the source's SF_FORMAT_* code
// (0 for synth). Throws Error(config) for an unknown extension or a format
// the container cannot hold, naming both and what would work.
SinkFormat choose_sink_format(const std::string& path, SampleFormat requested, int source_format);

class AudioSink {
 public:
  AudioSink(const std::string& path, const SinkFormat& format, double sample_rate, int channels);
  ~AudioSink();
  AudioSink(const AudioSink&) = delete;
  AudioSink& operator=(const AudioSink&) = delete;

  // Appends block.frames frames (block.type must match the format: i16 for
  // <= 16 bits, i32 for 24/32 bits, f32 for float).
  void write(const HostBlock& block);
  // Finishes the file and moves it into place.
  void commit();
  [[nodiscard]] std::int64_t frames_written() const noexcept { return frames_; }

 private:
  AtomicFile file_;
  sf_private_tag* sndfile_ = nullptr;
  std::int64_t frames_ = 0;
  bool raw_pcm16_ = false;  // sndfile_is_native_pcm16: bytes written as they are
};

}  // namespace sigstream
