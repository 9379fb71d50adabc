#pragma once
// The audio output: container from the file extension (or sink.type),
// sample format from the config (`same` keeps the source's), written through
// an AtomicFile so a failed or interrupted run leaves nothing behind; or, for
// "-", to standard output as a stream (SPEC §6): each block goes out as soon
// as it is written, headers carry unknown sizes.
#include <memory>
#include <optional>
#include <string>

#include "core/formats.hpp"
#include "core/sample_block.hpp"
#include "pipeline/io/atomic_file.hpp"

struct sf_private_tag;

namespace sigstream {

struct SinkFormat {
  int sndfile_format = 0; // SF_FORMAT_* major | subtype
  int bits = 0;           // PCM bits to quantize to, 0 = float samples
  std::string name;       // "wav pcm16"
  std::string note;       // set when `same` had to pick another subtype
  std::optional<double>
      compression_level; // lossy codecs: SFC_SET_COMPRESSION_LEVEL (0 best .. 1 smallest)
  // An output FFmpeg encodes (.m4a/.mp4: AAC, SPEC §14): its muxer ("ipod",
  // "mp4") and bit rate (kb/s, 0 = FFmpeg's default); sndfile_format is then
  // what goes to it through a pipe (24-bit WAV).
  std::string ffmpeg_muxer;
  int ffmpeg_kbps = 0;
};

// Chooses the output format. `source_format` is the source's SF_FORMAT_* code
// (0 for synth); `type` names the container (required for "-"; else the
// extension does). Throws Error(config) for an unknown extension, "-" without
// a type, or a format the container cannot hold, naming both and what would work.
// `quality` (0..1, sink.quality) applies to MP3, Vorbis and Opus only:
// Error(config) for another encoding.
SinkFormat choose_sink_format(const std::string& path, SampleFormat requested, int source_format,
                              std::optional<SinkType> type = std::nullopt,
                              std::optional<double> quality = std::nullopt);

// Whether the chosen format compresses (FLAC, Ogg, MP3, ALAC, what FFmpeg
// encodes): its writing costs the host an encoder's work, not a copy.
[[nodiscard]] bool compresses(const SinkFormat& format);

// Throws Error(config) when the chosen container cannot hold `channels`
// channels (the output's, after a mix): "sink.file out.flac: a flac file
// holds at most 8 channels ..." (found before any work).
void check_sink_channels(const std::string& path, const SinkFormat& format, int channels);

// Whether `path` names standard input/output ("-").
[[nodiscard]] inline bool is_std_stream(const std::string& path) noexcept {
  return path == "-";
}

class ByteSink;
class FfmpegChild;

class AudioSink {
public:
  AudioSink(const std::string& path, const SinkFormat& format, double sample_rate, int channels);
  ~AudioSink();
  AudioSink(const AudioSink&) = delete;
  AudioSink& operator=(const AudioSink&) = delete;

  // Appends block.frames frames (block.type must match the format: i16 for
  // <= 16 bits, i32 for 24/32 bits, f32 for float). On standard output they
  // are sent at once; Error(output_closed) when the reader has gone.
  void write(const HostBlock& block);
  // Finishes the file (its header written; no more writes) without moving it
  // into place. Throws Error(io). commit() calls it when not called before.
  void finish();
  // Finishes the file and moves it into place (standard output: finishes the stream).
  void commit();
  // The identity of the file being written (nullopt for standard output, or once committed).
  [[nodiscard]] std::optional<FileIdentity> identity() const {
    return file_ ? file_->identity() : std::nullopt;
  }
  [[nodiscard]] std::int64_t frames_written() const noexcept { return frames_; }

private:
  [[nodiscard]] std::string name() const;
  [[noreturn]] void encoder_failed();
  std::optional<AtomicFile> file_;
  std::unique_ptr<FfmpegChild> encoder_; // .m4a: FFmpeg writes file_ from what stream_ sends it
  std::unique_ptr<ByteSink> stream_;
  sf_private_tag* sndfile_ = nullptr;
  std::int64_t frames_ = 0;
  bool raw_pcm16_ = false;
  bool finished_ = false; // sndfile_is_native_pcm16: bytes written as they are
};

} // namespace sigstream
