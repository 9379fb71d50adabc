#include "core/formats.hpp"

// The names are those the YAML schema and the CLI spell (SPEC §1, §2, §6), so
// to_string output can be pasted back into a config or a command line.

namespace sigstream {

std::string_view to_string(SampleFormat f) {
  switch (f) {
    case SampleFormat::same:
      return "same";
    case SampleFormat::pcm16:
      return "pcm16";
    case SampleFormat::pcm24:
      return "pcm24";
    case SampleFormat::pcm32:
      return "pcm32";
    case SampleFormat::float32:
      return "float";
    case SampleFormat::float64:
      return "double";
  }
  return "unknown";
}

std::string_view to_string(BackendKind b) {
  switch (b) {
    case BackendKind::automatic:
      return "auto";
    case BackendKind::cpu:
      return "cpu";
    case BackendKind::cuda:
      return "cuda";
  }
  return "unknown";
}

std::string_view to_string(RawEncoding e) {
  switch (e) {
    case RawEncoding::s8:
      return "s8";
    case RawEncoding::u8:
      return "u8";
    case RawEncoding::s16le:
      return "s16le";
    case RawEncoding::s16be:
      return "s16be";
    case RawEncoding::s24le:
      return "s24le";
    case RawEncoding::s24be:
      return "s24be";
    case RawEncoding::s32le:
      return "s32le";
    case RawEncoding::s32be:
      return "s32be";
    case RawEncoding::f32le:
      return "f32le";
    case RawEncoding::f32be:
      return "f32be";
    case RawEncoding::f64le:
      return "f64le";
    case RawEncoding::f64be:
      return "f64be";
  }
  return "unknown";
}

std::string_view to_string(SinkType t) {
  switch (t) {
    case SinkType::wav:
      return "wav";
    case SinkType::raw:
      return "raw";
    case SinkType::au:
      return "au";
    case SinkType::flac:
      return "flac";
    case SinkType::caf:
      return "caf";
  }
  return "unknown";
}

std::optional<RawEncoding> raw_encoding_named(std::string_view name) noexcept {
  for (int i = 0; i <= static_cast<int>(RawEncoding::f64be); ++i)
    if (to_string(static_cast<RawEncoding>(i)) == name)
      return static_cast<RawEncoding>(i);
  return std::nullopt;
}

std::optional<SinkType> sink_type_named(std::string_view name) noexcept {
  for (int i = 0; i <= static_cast<int>(SinkType::caf); ++i)
    if (to_string(static_cast<SinkType>(i)) == name)
      return static_cast<SinkType>(i);
  return std::nullopt;
}

} // namespace sigstream
