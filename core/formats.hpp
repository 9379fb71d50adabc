#pragma once
// Enums every layer shares: sample formats, backends, raw encodings, output
// containers, synthetic noise. Not about stages: sources and sinks (io),
// the config, the engine and the CLI all use them.
#include <optional>
#include <string_view>

namespace sigstream {

enum class SampleFormat { same, pcm16, pcm24, pcm32, float32, float64 };
enum class BackendKind { automatic, cpu, cuda };
enum class NoiseKind { gaussian, uniform };
// Raw PCM sample encodings (SPEC §6), as `--encoding` and `raw.encoding` spell them.
enum class RawEncoding {
  s8,
  u8,
  s16le,
  s16be,
  s24le,
  s24be,
  s32le,
  s32be,
  f32le,
  f32be,
  f64le,
  f64be
};
// Containers an output stream ('-') can be written as (`--type`, `sink.type`).
enum class SinkType { wav, raw, au, flac, caf };

std::string_view to_string(SampleFormat f);
std::string_view to_string(BackendKind b);
std::string_view to_string(RawEncoding e);
std::string_view to_string(SinkType t);

// The value whose to_string is `name`, or nullopt.
[[nodiscard]] std::optional<RawEncoding> raw_encoding_named(std::string_view name) noexcept;
[[nodiscard]] std::optional<SinkType> sink_type_named(std::string_view name) noexcept;

} // namespace sigstream
