#pragma once
// Where samples come from: an audio file (libsndfile) or the synthetic
// multi-tone generator. Sources are read sequentially, in the source's own
// sample type (SourceInfo::sample_type), so 16-bit files stay 16-bit.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/sample_block.hpp"
#include "model/config.hpp"
#include "model/plan.hpp"

namespace sigstream {

class Source {
public:
  virtual ~Source() = default;
  [[nodiscard]] virtual const SourceInfo& info() const noexcept = 0;
  [[nodiscard]] virtual std::string path() const = 0;        // file path, or "synth"
  [[nodiscard]] virtual std::string format_name() const = 0; // "wav pcm16", "synth float"
  [[nodiscard]] virtual int sndfile_format() const noexcept {
    return 0;
  } // SF_FORMAT_*, 0 for synth
  // A pipe, FIFO or terminal (frames arrive as they come), not a file.
  [[nodiscard]] virtual bool is_stream() const noexcept { return false; }
  // Makes a read that waits for input throw (from any thread): the run has
  // failed elsewhere, e.g. its output pipe was closed.
  virtual void cancel() noexcept {}
  // Whether a read of `frames` frames would find them (or the end) without
  // waiting for more input to arrive; always for files and the synth. Safe
  // from any thread while another reads: live mode's redundant lanes take
  // the reader's turn only then, so that neither holds it while it waits.
  [[nodiscard]] virtual bool ready_now(std::int64_t frames) const noexcept {
    static_cast<void>(frames);
    return true;
  }
  // Reads the next `n` frames into block frames [at, at + n) and returns how
  // many it read. Fewer than `n` only where a source of unknown length
  // (info().frames == kUnknownFrames: a stream) has ended; a source of known
  // length that ends early throws Error(io) (a truncated file), as do read
  // errors and a raw stream ending inside a frame.
  virtual std::int64_t read(HostBlock& block, std::int64_t at, std::int64_t n) = 0;
};

// Opens the source of a config. Throws Error(io) for missing, unreadable,
// non-audio or empty files. "-" is standard input; it, FIFOs and other
// non-seekable files are read as streams (SPEC §6); `raw` describes
// headerless PCM (required for .raw/.pcm files: Error(config) without it).
std::unique_ptr<Source> open_source(const SourceSpec& spec);
std::unique_ptr<Source> open_audio_file(const std::string& path,
                                        const std::optional<RawSpec>& raw = std::nullopt);
std::unique_ptr<Source> make_synth_source(const SynthSpec& spec);

// `source` itself when its length is known; else a source that has read up
// to `frames` frames ahead and knows the length if the stream ended within
// them (Error(io) for an empty stream). Memory: `frames` frames.
std::unique_ptr<Source> prefetch_stream(std::unique_ptr<Source> source, std::int64_t frames);

// Describes a libsndfile format code: "wav pcm16", "flac pcm24", "ogg vorbis".
std::string sndfile_format_name(int format);

// What a file's header says where libsndfile reads it, even where the file is
// damaged past it (a truncated WAV, which open_audio_file refuses): for a
// failed file's report. frames: what libsndfile finds the file holds.
// nullopt where libsndfile cannot open it.
struct AudioHeader {
  double sample_rate = 0.0;
  int channels = 0;
  std::int64_t frames = 0;
  std::string format; // sndfile_format_name
};
std::optional<AudioHeader> read_audio_header(const std::string& path);

// Whether a file of this libsndfile format stores its samples exactly as this
// machine's int16 (16-bit PCM in a little-endian container such as WAV, on a
// little-endian host): then its data bytes are read and written as they are
// (sf_read_raw/sf_write_raw), saving libsndfile's conversion copy.
[[nodiscard]] bool sndfile_is_native_pcm16(int format) noexcept;

} // namespace sigstream
