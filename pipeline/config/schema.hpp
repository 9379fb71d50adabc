#pragma once
// The vocabulary in which config sections and stage kinds declare their YAML
// keys (DESIGN §1a): each key once, with its type, default, range and
// description. Validation, defaults, unknown-key suggestions and
// config_reference() are all driven by these declarations, so the
// documentation cannot drift from what the loader accepts. No yaml-cpp here:
// a stage kind's header can name its schema without pulling the parser in.
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "core/formats.hpp"

namespace sigstream::config {

enum class Type { integer, uint64, number, boolean, string, choice, section, custom };

struct Key {
  // The names a choice key accepts, in the order messages list them.
  using Choices = std::span<const std::string_view> (*)();

  std::string_view name;
  Type type = Type::string;
  std::string_view description;
  // Applied when the key is absent (parsed like a YAML value, by the same code
  // that reads user values); "" = no default.
  std::string_view default_text;
  std::optional<double> min;
  std::optional<double> max;
  bool min_open = false; // "> min" rather than ">= min"
  Choices choices = nullptr;
  // For custom/string keys: how messages and the reference spell the type.
  std::string_view type_text;
  bool is_required = false;
  // The default is computed by the loader (e.g. stage names); default_text is
  // documentation only.
  bool computed_default = false;

  constexpr Key(std::string_view n, Type t, std::string_view d = {})
      : name(n), type(t), description(d) {}
  // Builders, so that each table row reads as one declaration.
  [[nodiscard]] constexpr Key defaults(std::string_view text) const {
    Key k = *this;
    k.default_text = text;
    return k;
  }
  [[nodiscard]] constexpr Key computed(std::string_view text) const {
    Key k = defaults(text);
    k.computed_default = true;
    return k;
  }
  [[nodiscard]] constexpr Key at_least(double v) const {
    Key k = *this;
    k.min = v;
    return k;
  }
  [[nodiscard]] constexpr Key above(double v) const {
    Key k = at_least(v);
    k.min_open = true;
    return k;
  }
  [[nodiscard]] constexpr Key at_most(double v) const {
    Key k = *this;
    k.max = v;
    return k;
  }
  [[nodiscard]] constexpr Key one_of(Choices c) const {
    Key k = *this;
    k.choices = c;
    return k;
  }
  [[nodiscard]] constexpr Key spelled(std::string_view text) const {
    Key k = *this;
    k.type_text = text;
    return k;
  }
  [[nodiscard]] constexpr Key required() const {
    Key k = *this;
    k.is_required = true;
    return k;
  }
};

// The bound that says "fits an int"; the reference does not print it.
inline constexpr double kMaxInt = std::numeric_limits<int>::max();

// One table of config_reference(): the keys under `path`.
struct Section {
  std::string_view path;  // as the reference prints it
  std::string_view title; // "" = none
  std::span<const Key> keys;
};

// ---------------------------------------------------------------------------
// Enums: the spellings come from their to_string(), so the config, the CLI
// and the statistics all spell a value the same way. The stage kinds' own
// enums (FirMode, WindowKind, ...) declare their values in
// stages/schema_enums.hpp; stage types' names come from stages/registry.hpp.

inline std::string_view noise_kind_name(NoiseKind k) {
  return k == NoiseKind::gaussian ? "gaussian" : "uniform";
}

template <class E> struct EnumValues;
template <> struct EnumValues<SampleFormat> {
  static constexpr std::array values{SampleFormat::same,    SampleFormat::pcm16,
                                     SampleFormat::pcm24,   SampleFormat::pcm32,
                                     SampleFormat::float32, SampleFormat::float64};
};
template <> struct EnumValues<BackendKind> {
  static constexpr std::array values{BackendKind::automatic, BackendKind::cpu, BackendKind::cuda};
};
template <> struct EnumValues<RawEncoding> {
  static constexpr std::array values{RawEncoding::s8,    RawEncoding::u8,    RawEncoding::s16le,
                                     RawEncoding::s16be, RawEncoding::s24le, RawEncoding::s24be,
                                     RawEncoding::s32le, RawEncoding::s32be, RawEncoding::f32le,
                                     RawEncoding::f32be, RawEncoding::f64le, RawEncoding::f64be};
};
template <> struct EnumValues<SinkType> {
  static constexpr std::array values{SinkType::wav, SinkType::raw, SinkType::au, SinkType::flac,
                                     SinkType::caf};
};
template <> struct EnumValues<NoiseKind> {
  static constexpr std::array values{NoiseKind::gaussian, NoiseKind::uniform};
};

// The names of E's values, in EnumValues<E> order (a Key::Choices).
template <class E> std::span<const std::string_view> enum_names() {
  static const auto names = [] {
    constexpr auto& values = EnumValues<E>::values;
    std::array<std::string_view, values.size()> out{};
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<E, NoiseKind>) {
        out[i] = noise_kind_name(values[i]);
      } else {
        out[i] = to_string(values[i]);
      }
    }
    return out;
  }();
  return names;
}

} // namespace sigstream::config
