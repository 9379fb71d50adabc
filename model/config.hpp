#pragma once
// The configuration (SPEC §2) as validated plain structs: what the config
// reader (pipeline/config.hpp) fills and every layer above reads. A stage's
// kind's own fields are its spec type in stages/<kind>/spec.hpp, held as
// KindData. Relative paths are kept as written (relative to the working
// directory, like paths on the command line).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/formats.hpp"
#include "core/kind_data.hpp"
#include "model/stage_type.hpp"

namespace sigstream {

struct ToneSpec {
  double freq_hz = 0.0;
  double amplitude = 1.0;
  double phase_deg = 0.0;
  std::optional<int> channel; // 0-based; none = every channel
};

struct NoiseSpec {
  NoiseKind kind = NoiseKind::gaussian;
  double amplitude = 0.0; // gaussian: standard deviation; uniform: half-width
  std::uint64_t seed = 1;
};

struct SynthSpec {
  double sample_rate = 48000.0;
  std::int64_t frames = 0; // resolved from duration_s when that was given
  int channels = 1;
  std::vector<ToneSpec> tones;
  std::optional<NoiseSpec> noise;
};

// How to read headerless PCM (a `.raw`/`.pcm` file, or a raw stream).
struct RawSpec {
  double sample_rate = 0.0;
  int channels = 0;
  RawEncoding encoding = RawEncoding::s16le;
};

struct SourceSpec {
  std::optional<std::string> file; // exactly one of file / synth; "-" = standard input
  std::optional<SynthSpec> synth;
  std::optional<RawSpec> raw; // with file: the file is headerless PCM
};

// A stage of the chain. Its kind's own fields are the kind's spec type, in
// stages/<kind>/spec.hpp (FirSpec, GainSpec, ResampleSpec, MetricsSpec, ...),
// filled by the kind's reader (stages/<kind>/schema.cpp) and read back by
// type: `spec.as<FirSpec>()`.
struct StageSpec {
  StageType type;   // the kind (stages/<kind>/spec.hpp), by name
  std::string name; // defaults to "<type><index>", e.g. "fir0", "gain1"
  KindData params;  // the kind's spec
  int line = 0;     // 1-based YAML position of the stage, for messages
  // The `filter` flag that made it ("--mix", "--taps-file room.txt"), for
  // messages in the flags' words; "" for a config's stage.
  std::string flag;

  template <class T> [[nodiscard]] const T& as() const { return params.get<T>(); }
  template <class T> [[nodiscard]] T& as() { return params.get<T>(); }
};

struct SinkSpec {
  std::optional<std::string> file; // no sink file: statistics only; "-" = standard output
  SampleFormat format = SampleFormat::same;
  std::optional<SinkType> type; // the container; required for "-", else from the extension
  // MP3, Vorbis and Opus: 0 (smallest) .. 1 (best), libsndfile's compression
  // level min(1 - quality, 0.99); none: libsndfile's default.
  std::optional<double> quality;
};

struct StatsSpec {
  std::optional<std::string> json;
  std::optional<std::string> csv;
};

struct ExecutionSpec {
  BackendKind backend = BackendKind::automatic;
  std::int64_t chunk_frames = 1048576;
  int streams = 4;
  int threads = 0;                  // CPU worker threads; 0 = one per hardware thread
  std::vector<int> devices;         // empty = default (device 0 for run, all for batch)
  std::optional<double> latency_ms; // live mode (SPEC §6): bound on the added latency
  bool busy_poll = false;           // live mode: spin instead of sleeping while waiting for I/O
  bool redundant = false; // live mode: two threads compute each block, the first writes it
};

struct BatchSpec {
  std::vector<std::string> inputs;
  std::string out_dir = "out/batch";
  bool keep_going = true;
};

struct Config {
  int version = 1;
  SourceSpec source;
  std::vector<StageSpec> stages;
  SinkSpec sink;
  StatsSpec stats;
  ExecutionSpec execution;
  BatchSpec batch;
  std::string origin; // the config file's path (or "<demo>"), for messages
};

// What the config is for: `sigstream run` needs a source; `sigstream batch`
// supplies one per input file, so there `source:` may be left out.
enum class ConfigUse { run, batch };

} // namespace sigstream
