// YAML -> validated Config (SPEC §2): the key tables, the generic walker
// (positions, did-you-mean, --set) and each section's reader. It stays one
// file for now because the walker and every table share the anonymous
// helpers; issue P6 splits it along the stages' own schemas (DESIGN §1a).
#include "pipeline/config.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>

#include "core/error.hpp"
#include "stages/design.hpp"

// The schema lives in the key tables below (DESIGN §6): each key is declared once
// with its type, default, range and description. Validation, defaults, unknown-key
// suggestions and config_reference() are all driven by those tables, so the
// documentation cannot drift from what the loader accepts.

namespace sigstream {
namespace {

// ---------------------------------------------------------------------------
// Text helpers

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Shortest text that reads back as the same double.
std::string format_number(double v) {
  std::array<char, 64> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return {buf.data(), res.ptr};
}

std::string join(std::span<const std::string_view> items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

// Damerau-Levenshtein distance (optimal string alignment), ignoring case, so that
// transpositions like "casual" -> "causal" count as one edit.
std::size_t edit_distance(std::string_view a_in, std::string_view b_in) {
  const std::string a = lower(a_in);
  const std::string b = lower(b_in);
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

// The closest candidate, if it is close enough to be a plausible typo. A candidate
// that would need every character replaced is no suggestion at all.
std::optional<std::string_view> closest(std::string_view word,
                                        std::span<const std::string_view> candidates) {
  std::optional<std::string_view> best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_distance) {
      best_distance = dist;
      best = c;
    }
  }
  if (!best) return std::nullopt;
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  if (best_distance > limit || best_distance >= std::max(word.size(), best->size())) {
    return std::nullopt;
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  const auto best = closest(word, candidates);
  return best ? "; did you mean '" + std::string(*best) + "'?" : std::string();
}

// ---------------------------------------------------------------------------
// Enums: the spellings come from to_string() in stages/types.cpp, so the config,
// the CLI and the statistics all spell a value the same way.

std::string_view noise_kind_name(NoiseKind k) {
  return k == NoiseKind::gaussian ? "gaussian" : "uniform";
}

template <class E>
struct EnumValues;
template <>
struct EnumValues<FirMode> {
  static constexpr std::array values{FirMode::causal, FirMode::same, FirMode::full};
};
template <>
struct EnumValues<FirMethod> {
  static constexpr std::array values{FirMethod::automatic, FirMethod::direct, FirMethod::fft};
};
template <>
struct EnumValues<FilterKind> {
  static constexpr std::array values{FilterKind::lowpass, FilterKind::highpass,
                                     FilterKind::bandpass, FilterKind::bandstop};
};
template <>
struct EnumValues<WindowKind> {
  static constexpr std::array values{WindowKind::hamming, WindowKind::hann, WindowKind::blackman,
                                     WindowKind::rectangular, WindowKind::kaiser};
};
template <>
struct EnumValues<StageType> {
  static constexpr std::array values{StageType::fir, StageType::gain, StageType::metrics};
};
template <>
struct EnumValues<SampleFormat> {
  static constexpr std::array values{SampleFormat::same,    SampleFormat::pcm16,
                                     SampleFormat::pcm24,   SampleFormat::pcm32,
                                     SampleFormat::float32, SampleFormat::float64};
};
template <>
struct EnumValues<BackendKind> {
  static constexpr std::array values{BackendKind::automatic, BackendKind::cpu, BackendKind::cuda};
};
template <>
struct EnumValues<RawEncoding> {
  static constexpr std::array values{RawEncoding::s8,    RawEncoding::u8,    RawEncoding::s16le,
                                     RawEncoding::s16be, RawEncoding::s24le, RawEncoding::s24be,
                                     RawEncoding::s32le, RawEncoding::s32be, RawEncoding::f32le,
                                     RawEncoding::f32be, RawEncoding::f64le, RawEncoding::f64be};
};
template <>
struct EnumValues<SinkType> {
  static constexpr std::array values{SinkType::wav, SinkType::raw, SinkType::au, SinkType::flac,
                                     SinkType::caf};
};
template <>
struct EnumValues<NoiseKind> {
  static constexpr std::array values{NoiseKind::gaussian, NoiseKind::uniform};
};

template <class E>
std::span<const std::string_view> enum_names() {
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

// ---------------------------------------------------------------------------
// The key tables

enum class Type { integer, uint64, number, boolean, string, choice, section, custom };

struct Key {
  using Choices = std::span<const std::string_view> (*)();

  std::string_view name;
  Type type = Type::string;
  std::string_view description;
  // Applied when the key is absent (parsed like a YAML value, by the same code
  // that reads user values); "" = no default.
  std::string_view default_text;
  std::optional<double> min;
  std::optional<double> max;
  bool min_open = false;  // "> min" rather than ">= min"
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

constexpr double kMaxInt = std::numeric_limits<int>::max();

constexpr Key kRootKeys[] = {
    Key("version", Type::integer, "Schema version; this sigstream reads version 1.")
        .at_least(1).at_most(1).required(),
    Key("source", Type::section, "Where the signal comes from: exactly one of file / synth.")
        .spelled("a mapping with file or synth").required(),
    Key("stages", Type::custom, "The processing chain, applied in order (may be empty).")
        .spelled("a list of stages"),
    Key("sink", Type::section, "The output audio file; leave it out for a statistics-only run."),
    Key("stats", Type::section, "Statistics files."),
    Key("execution", Type::section, "How and where the work runs."),
    Key("batch", Type::section, "Inputs and outputs of `sigstream batch`."),
};

constexpr Key kSourceKeys[] = {
    Key("file", Type::string,
        "Input audio file (any format libsndfile reads); '-' = standard input, read as a stream.")
        .spelled("a file path"),
    Key("synth", Type::section, "A synthetic multi-tone signal."),
    Key("raw", Type::section, "With file: headerless PCM (needed for .raw/.pcm files and raw streams)."),
};

constexpr Key kRawKeys[] = {
    Key("sample_rate", Type::number, "Sample rate in Hz (a whole number).").above(0).at_most(kMaxInt).required(),
    Key("channels", Type::integer, "Number of channels (interleaved).").at_least(1).at_most(1024).required(),
    Key("encoding", Type::choice, "Sample encoding.").one_of(&enum_names<RawEncoding>).required(),
};

constexpr Key kSynthKeys[] = {
    Key("sample_rate", Type::number, "Sample rate in Hz (a whole number).")
        .defaults("48000").above(0),
    Key("duration_s", Type::number, "Length in seconds; exactly one of duration_s / frames.")
        .above(0),
    Key("frames", Type::integer, "Length in frames; exactly one of duration_s / frames.")
        .at_least(1),
    Key("channels", Type::integer, "Number of channels.").defaults("1").at_least(1).at_most(64),
    Key("tones", Type::custom, "Sine tones, summed; on every channel unless a tone names one.")
        .spelled("a list of tones"),
    Key("noise", Type::section, "Additive seeded noise."),
};

constexpr Key kToneKeys[] = {
    Key("freq_hz", Type::number, "Frequency in Hz.").at_least(0).required(),
    Key("amplitude", Type::number, "Peak amplitude (full scale = 1).").defaults("1"),
    Key("phase_deg", Type::number, "Phase at frame 0, in degrees.").defaults("0"),
    Key("channel", Type::integer, "0-based channel (< channels); absent = every channel.")
        .at_least(0).at_most(kMaxInt),
};

constexpr Key kNoiseKeys[] = {
    Key("kind", Type::choice, "Noise distribution.")
        .one_of(&enum_names<NoiseKind>).defaults("gaussian"),
    Key("amplitude", Type::number, "gaussian: standard deviation; uniform: half-width.")
        .defaults("0").at_least(0),
    Key("seed", Type::uint64, "Random seed (same seed, same noise).").defaults("1"),
};

constexpr Key kStageKeys[] = {
    Key("type", Type::choice, "What the stage does.").one_of(&enum_names<StageType>).required(),
    Key("name", Type::string, "Unique name, used in statistics; 'output' is reserved.")
        .computed("<type><index>")
        .spelled("a name of letters, digits, '_', '-' or '.'"),
};

constexpr Key kFirKeys[] = {
    Key("design", Type::section,
        "Windowed-sinc design; exactly one of design / taps / taps_file."),
    Key("taps", Type::custom, "Inline coefficients h[0], h[1], ...")
        .spelled("a non-empty list of finite numbers"),
    Key("taps_file", Type::string, "File of coefficients, one per line, '#' comments.")
        .spelled("a file path"),
    Key("mode", Type::choice, "Output alignment: causal (lfilter), same (delay compensated), full.")
        .one_of(&enum_names<FirMode>).defaults("causal"),
    Key("method", Type::choice, "Convolution algorithm; auto picks by filter length.")
        .one_of(&enum_names<FirMethod>).defaults("auto"),
};

constexpr Key kDesignKeys[] = {
    Key("kind", Type::custom, "Filter type.").one_of(&enum_names<FilterKind>).required(),
    Key("cutoff_hz", Type::custom, "Cutoff in Hz, 0 < f < sample_rate/2.")
        .spelled("a number, or [lo, hi] for bandpass/bandstop").required(),
    Key("taps", Type::integer, "Number of taps (odd for highpass and bandstop).")
        .defaults("255").at_least(1).at_most(kMaxInt),
    Key("window", Type::custom,
        "Window; kaiser takes a beta: 'kaiser:8.6', or kaiser with beta: 8.6.")
        .one_of(&enum_names<WindowKind>).defaults("hamming"),
    Key("beta", Type::number, "Kaiser beta, with window: kaiser.").at_least(0),
};

constexpr Key kGainKeys[] = {
    Key("db", Type::number, "Gain in dB, 10^(db/20); exactly one of db / linear."),
    Key("linear", Type::number, "Linear gain factor; exactly one of db / linear."),
};

constexpr Key kSinkKeys[] = {
    Key("file", Type::string, "Output file; the container comes from the extension.")
        .spelled("a file path"),
    Key("format", Type::choice, "Sample format; same = that of the input (float for synth).")
        .one_of(&enum_names<SampleFormat>).defaults("same"),
    Key("type", Type::choice, "Container, required for file '-' (standard output); else from the extension.")
        .one_of(&enum_names<SinkType>),
};

constexpr Key kStatsKeys[] = {
    Key("json", Type::string, "Statistics JSON (schema 1).").spelled("a file path"),
    Key("csv", Type::string, "Per-chunk, per-channel metrics CSV.").spelled("a file path"),
};

constexpr Key kExecutionKeys[] = {
    Key("backend", Type::choice, "auto uses CUDA when a device exists, else the CPU.")
        .one_of(&enum_names<BackendKind>).defaults("auto"),
    Key("chunk_frames", Type::integer, "Frames per chunk; bounds memory, never changes results.")
        .defaults("1048576").at_least(1),
    Key("streams", Type::integer, "CUDA streams (chunks in flight).")
        .defaults("4").at_least(1).at_most(kMaxInt),
    Key("threads", Type::integer, "CPU worker threads; 0 = one per hardware thread.")
        .defaults("0").at_least(0).at_most(kMaxInt),
    Key("device", Type::custom, "CUDA device(s); a list spreads batch work over GPUs.")
        .spelled("an integer >= 0, or a list of them"),
    Key("latency_ms", Type::number, "Live mode: bound on the added latency of each chunk, in ms.")
        .above(0).at_most(10000),
};

constexpr Key kBatchKeys[] = {
    Key("inputs", Type::custom, "Input files or globs; CLI inputs are added.")
        .spelled("a string or a list of strings"),
    Key("out_dir", Type::string, "Output folder: input stem + sink extension.")
        .defaults("out/batch").spelled("a folder path"),
    Key("keep_going", Type::boolean, "Go on with the other files when one fails.")
        .defaults("true"),
};

// Element types of lists, for messages.
constexpr Key kTapValue = Key("tap", Type::number);
constexpr Key kCutoffValue = Key("cutoff_hz", Type::number);
constexpr Key kDeviceValue = Key("device", Type::integer).at_least(0).at_most(kMaxInt);
constexpr Key kInputValue = Key("input", Type::string).spelled("a path or glob");

struct Section {
  std::string_view path;   // as the reference prints it
  std::string_view title;  // "" = none
  std::span<const Key> keys;
};

constexpr Section kSections[] = {
    {"", "top level", kRootKeys},
    {"source", "", kSourceKeys},
    {"source.raw", "", kRawKeys},
    {"source.synth", "", kSynthKeys},
    {"source.synth.tones[]", "", kToneKeys},
    {"source.synth.noise", "", kNoiseKeys},
    {"stages[]", "every stage", kStageKeys},
    {"stages[]", "type: fir", kFirKeys},
    {"stages[].design", "type: fir", kDesignKeys},
    {"stages[]", "type: gain", kGainKeys},
    {"sink", "", kSinkKeys},
    {"stats", "", kStatsKeys},
    {"execution", "", kExecutionKeys},
    {"batch", "", kBatchKeys},
};

std::string range_phrase(const Key& k) {
  if (k.min && k.max && *k.min == *k.max) return " equal to " + format_number(*k.min);
  // Bounds that only say "fits an int" are not worth printing.
  const bool show_max = k.max && *k.max < kMaxInt;
  if (k.min && show_max) {
    return " from " + format_number(*k.min) + " to " + format_number(*k.max);
  }
  if (k.min) return (k.min_open ? " > " : " >= ") + format_number(*k.min);
  if (show_max) return " <= " + format_number(*k.max);
  return {};
}

// "what was expected", as messages print it.
std::string expected(const Key& k) {
  switch (k.type) {
    case Type::integer:
      return "an integer" + range_phrase(k);
    case Type::uint64:
      return "an integer from 0 to 18446744073709551615";
    case Type::number:
      return "a finite number" + range_phrase(k);
    case Type::boolean:
      return "true or false";
    case Type::string:
      return k.type_text.empty() ? std::string("a string") : std::string(k.type_text);
    case Type::section:
      return k.type_text.empty() ? std::string("a mapping") : std::string(k.type_text);
    case Type::choice:
    case Type::custom:
      if (!k.type_text.empty()) return std::string(k.type_text);
      if (k.choices) return "one of " + join(k.choices(), " | ");
      return "a value";
  }
  return "a value";
}

std::vector<std::string_view> names_of(std::span<const Key* const> keys) {
  std::vector<std::string_view> out;
  for (const Key* k : keys) out.push_back(k->name);
  return out;
}

// ---------------------------------------------------------------------------
// Key paths and problem collection

class Path {
 public:
  Path() = default;
  explicit Path(std::vector<std::string> parts) : parts_(std::move(parts)) {}
  [[nodiscard]] Path operator/(std::string_view key) const {
    Path p = *this;
    p.parts_.emplace_back(key);
    return p;
  }
  [[nodiscard]] Path operator/(std::size_t index) const { return *this / std::to_string(index); }
  [[nodiscard]] std::string str() const {
    std::string out;
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      if (i) out += '.';
      out += parts_[i];
    }
    return out;
  }
  [[nodiscard]] bool starts_with(const Path& prefix) const {
    return prefix.parts_.size() <= parts_.size() &&
           std::equal(prefix.parts_.begin(), prefix.parts_.end(), parts_.begin());
  }
  [[nodiscard]] bool empty() const { return parts_.empty(); }

 private:
  std::vector<std::string> parts_;
};

struct AppliedOverride {
  Path path;
  std::string text;  // "KEY=VALUE" as given
};

class Context {
 public:
  explicit Context(std::string origin) : origin_(std::move(origin)) {}

  void add_override(Path path, std::string text) {
    overrides_.push_back({std::move(path), std::move(text)});
  }

  // A problem at `path`, located at node `at` (a value, a key or the enclosing map).
  void error(const YAML::Node& at, const Path& path, const std::string& what) {
    if (const AppliedOverride* o = covering_override(at, path)) {
      add_unplaced(path, what + " (from --set " + o->text + ")");
      return;
    }
    error_at(at.IsDefined() ? at.Mark() : YAML::Mark::null_mark(), path, what);
  }

  // A problem at a position in the file (no --set attribution).
  void error_at(const YAML::Mark& mark, const Path& path, const std::string& what) {
    if (mark.is_null()) {
      add_unplaced(path, what);
      return;
    }
    std::string text = origin_ + ":" + std::to_string(mark.line + 1) + ":" +
                       std::to_string(mark.column + 1) + ": ";
    if (!path.empty()) text += path.str() + ": ";
    problems_.push_back({1, mark.line, mark.column, problems_.size(), text + what});
  }

  // A problem with an override itself (malformed, bad path): no YAML position.
  void override_error(const std::string& override_text, const std::string& what) {
    problems_.push_back({2, 0, 0, problems_.size(),
                         origin_ + ": --set " + override_text + ": " + what});
  }

  [[nodiscard]] bool ok() const { return problems_.empty(); }

  void throw_if_any() {
    if (problems_.empty()) return;
    // Unplaced (0) first, then by position in the file, then override problems;
    // within one position, in the order found.
    std::sort(problems_.begin(), problems_.end(), [](const Problem& a, const Problem& b) {
      return std::tie(a.group, a.line, a.column, a.seq) <
             std::tie(b.group, b.line, b.column, b.seq);
    });
    std::string message;
    std::vector<std::string_view> seen;
    for (const Problem& p : problems_) {
      if (std::find(seen.begin(), seen.end(), p.text) != seen.end()) continue;
      seen.push_back(p.text);
      if (!message.empty()) message += '\n';
      message += p.text;
    }
    throw config_error(message);
  }

 private:
  struct Problem {
    int group;
    int line;
    int column;
    std::size_t seq;
    std::string text;
  };

  void add_unplaced(const Path& path, const std::string& what) {
    std::string text = origin_ + ": ";
    if (!path.empty()) text += path.str() + ": ";
    problems_.push_back({0, 0, 0, problems_.size(), text + what});
  }

  // The override a problem comes from: one that set this path or an enclosing
  // one (the latest wins, like the override itself), or, for nodes that the
  // overrides created (no position), one that set something inside it.
  const AppliedOverride* covering_override(const YAML::Node& at, const Path& path) const {
    for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
      if (path.starts_with(it->path)) return &*it;
    }
    if (!at.IsDefined() || at.Mark().is_null()) {
      for (auto it = overrides_.rbegin(); it != overrides_.rend(); ++it) {
        if (it->path.starts_with(path)) return &*it;
      }
    }
    return nullptr;
  }

  std::string origin_;
  std::vector<AppliedOverride> overrides_;
  std::vector<Problem> problems_;
};

// ---------------------------------------------------------------------------
// Scalars

std::string describe(const YAML::Node& v) {
  switch (v.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "an empty value";
    case YAML::NodeType::Scalar:
      break;
  }
  std::string s = v.Scalar();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return (v.Tag() == "!" ? "the quoted string '" : "'") + s + "'";
}

// Plain scalars only: a quoted "4" is a string in YAML, and silently reading it
// as a number would hide a mistake.
bool is_plain(const YAML::Node& v) { return v.Tag() != "!" && v.Tag() != "tag:yaml.org,2002:str"; }

// YAML 1.1 allows '_' between digits (1_048_576); from_chars does not.
std::string without_digit_separators(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool between_digits = s[i] == '_' && i > 0 && i + 1 < s.size() &&
                                std::isxdigit(static_cast<unsigned char>(s[i - 1])) &&
                                std::isxdigit(static_cast<unsigned char>(s[i + 1]));
    if (!between_digits) out += s[i];
  }
  return out;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

enum class ParseStatus { ok, invalid, out_of_range };

// Decimal or 0x hexadecimal, optional sign.
template <class T>
ParseStatus parse_integer_text(std::string_view text, T& out) {
  std::string s = without_digit_separators(text);
  bool negative = false;
  std::size_t i = 0;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    i = 1;
  }
  int base = 10;
  if (s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    base = 16;
    i += 2;
  }
  if (i >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i]))) {
    return ParseStatus::invalid;
  }
  std::string digits = (negative ? "-" : "") + s.substr(i);
  const char* end = digits.data() + digits.size();
  const auto res = std::from_chars(digits.data(), end, out, base);
  if (res.ec == std::errc::result_out_of_range) return ParseStatus::out_of_range;
  if (res.ec != std::errc() || res.ptr != end) return ParseStatus::invalid;
  return ParseStatus::ok;
}

// YAML core-schema floats, including .inf/.nan (caller decides about finiteness).
ParseStatus parse_number_text(std::string_view text, double& out) {
  const std::string l = lower(text);
  if (l == ".inf" || l == "+.inf") {
    out = std::numeric_limits<double>::infinity();
    return ParseStatus::ok;
  }
  if (l == "-.inf") {
    out = -std::numeric_limits<double>::infinity();
    return ParseStatus::ok;
  }
  if (l == ".nan") {
    out = std::numeric_limits<double>::quiet_NaN();
    return ParseStatus::ok;
  }
  std::int64_t as_int = 0;
  if (parse_integer_text(text, as_int) == ParseStatus::ok) {
    out = static_cast<double>(as_int);
    return ParseStatus::ok;
  }
  std::string s = without_digit_separators(text);
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  // from_chars also reads "inf", "nan" and friends, which YAML spells differently.
  const bool has_digit = std::any_of(s.begin(), s.end(), is_digit);
  const bool letters_ok = std::all_of(s.begin(), s.end(), [](char c) {
    return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  });
  if (s.empty() || !has_digit || !letters_ok) return ParseStatus::invalid;
  const char* end = s.data() + s.size();
  const auto res = std::from_chars(s.data(), end, out, std::chars_format::general);
  if (res.ec == std::errc::result_out_of_range) return ParseStatus::out_of_range;
  if (res.ec != std::errc() || res.ptr != end) return ParseStatus::invalid;
  return ParseStatus::ok;
}

bool in_range(const Key& k, double v) {
  if (k.min && (k.min_open ? !(v > *k.min) : !(v >= *k.min))) return false;
  if (k.max && !(v <= *k.max)) return false;
  return true;
}

// Checks that `v` is a plain scalar fit for a number/bool key; reports otherwise.
bool plain_scalar(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                  std::string_view what) {
  if (v.IsScalar() && is_plain(v)) return true;
  std::string msg = describe(v) + " is not " + std::string(what) + " (expected " + expected(k);
  if (v.IsScalar()) msg += "; write it without quotes";
  cx.error(v, p, msg + ")");
  return false;
}

std::optional<std::int64_t> read_integer(Context& cx, const YAML::Node& v, const Path& p,
                                         const Key& k) {
  if (!plain_scalar(cx, v, p, k, "an integer")) return std::nullopt;
  std::int64_t out = 0;
  switch (parse_integer_text(v.Scalar(), out)) {
    case ParseStatus::ok:
      break;
    case ParseStatus::out_of_range:
      cx.error(v, p, describe(v) + " is too large (expected " + expected(k) + ")");
      return std::nullopt;
    case ParseStatus::invalid:
      cx.error(v, p, describe(v) + " is not an integer (expected " + expected(k) + ")");
      return std::nullopt;
  }
  if (!in_range(k, static_cast<double>(out))) {
    cx.error(v, p, v.Scalar() + " is out of range (expected " + expected(k) + ")");
    return std::nullopt;
  }
  return out;
}

std::optional<std::uint64_t> read_uint64(Context& cx, const YAML::Node& v, const Path& p,
                                         const Key& k) {
  if (!plain_scalar(cx, v, p, k, "an integer")) return std::nullopt;
  std::uint64_t out = 0;
  if (parse_integer_text(v.Scalar(), out) != ParseStatus::ok) {
    cx.error(v, p, describe(v) + " is not a valid " + std::string(k.name) + " (expected " +
                       expected(k) + ")");
    return std::nullopt;
  }
  return out;
}

std::optional<double> read_number(Context& cx, const YAML::Node& v, const Path& p,
                                  const Key& k) {
  if (!plain_scalar(cx, v, p, k, "a number")) return std::nullopt;
  double out = 0.0;
  const ParseStatus status = parse_number_text(v.Scalar(), out);
  if (status == ParseStatus::invalid) {
    cx.error(v, p, describe(v) + " is not a number (expected " + expected(k) + ")");
    return std::nullopt;
  }
  if (status == ParseStatus::out_of_range || !std::isfinite(out)) {
    cx.error(v, p, describe(v) + " is not a finite number (expected " + expected(k) + ")");
    return std::nullopt;
  }
  if (!in_range(k, out)) {
    cx.error(v, p, v.Scalar() + " is out of range (expected " + expected(k) + ")");
    return std::nullopt;
  }
  return out;
}

std::optional<bool> read_bool(Context& cx, const YAML::Node& v, const Path& p, const Key& k) {
  if (!plain_scalar(cx, v, p, k, "true or false")) return std::nullopt;
  const std::string s = lower(v.Scalar());
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  cx.error(v, p, describe(v) + " is not true or false (expected " + expected(k) + ")");
  return std::nullopt;
}

std::optional<std::string> read_string(Context& cx, const YAML::Node& v, const Path& p,
                                       const Key& k) {
  if (!v.IsScalar()) {
    cx.error(v, p, describe(v) + " is not a string (expected " + expected(k) + ")");
    return std::nullopt;
  }
  if (v.Scalar().empty()) {
    cx.error(v, p, "the string is empty (expected " + expected(k) + ")");
    return std::nullopt;
  }
  return v.Scalar();
}

// Reports a name that is not among `choices`, with a suggestion.
void bad_choice(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                std::span<const std::string_view> choices) {
  std::string msg = describe(v) + " is not a valid " + std::string(k.name);
  if (v.IsScalar()) msg += did_you_mean(v.Scalar(), choices);
  cx.error(v, p, msg + " (expected one of " + join(choices, " | ") + ")");
}

template <class E>
std::optional<E> read_choice(Context& cx, const YAML::Node& v, const Path& p, const Key& k) {
  const auto names = enum_names<E>();
  if (v.IsScalar()) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (v.Scalar() == names[i]) return EnumValues<E>::values[i];
    }
  }
  bad_choice(cx, v, p, k, names);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Mappings

std::vector<const Key*> keys_of(std::initializer_list<std::span<const Key>> tables) {
  std::vector<const Key*> out;
  for (const auto& t : tables) {
    for (const Key& k : t) out.push_back(&k);
  }
  return out;
}

// Explains a key that is not allowed here but means something elsewhere
// ("" = none: a plain unknown key).
using ForeignKeyHint = std::function<std::string(std::string_view)>;

// One YAML mapping checked against its key table: unknown keys, duplicate keys and
// missing required keys are reported on construction; typed getters apply the
// table's type, range and default. A YAML null value counts as absent (so
// `--set sink.file=~` removes a sink).
class MapReader {
 public:
  MapReader(Context& cx, const YAML::Node& node, Path path, std::vector<const Key*> keys,
            const ForeignKeyHint& hint = {})
      : cx_(cx), node_(node), path_(std::move(path)), keys_(std::move(keys)) {
    if (!node_.IsDefined() || node_.IsNull()) return;
    if (!node_.IsMap()) {
      const auto names = names_of(keys_);
      cx_.error(node_, path_,
                describe(node_) + " is not a mapping (expected a mapping with keys " +
                    join(names, ", ") + ")");
      ok_ = false;
      return;
    }
    std::vector<std::string> misspelt;  // required names that unknown keys resemble
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) {
        cx_.error(key, path_, describe(key) + " is not a key name (expected a plain name)");
        continue;
      }
      const std::string& name = key.Scalar();
      if (const Entry* first = find_any(name)) {
        cx_.error(key, path_ / name,
                  "duplicate key, first given at line " +
                      std::to_string(first->key.Mark().line + 1) + " (expected each key once)");
        continue;
      }
      const auto decl = std::find_if(keys_.begin(), keys_.end(),
                                     [&](const Key* k) { return k->name == name; });
      entries_.push_back({name, key, it->second, decl == keys_.end() ? nullptr : *decl});
      if (decl != keys_.end()) continue;
      const auto names = names_of(keys_);
      std::string why = hint ? hint(name) : std::string();
      if (why.empty()) {
        why = "unknown key" + did_you_mean(name, names);
        if (const auto best = closest(name, names)) misspelt.emplace_back(*best);
      }
      cx_.error(key, path_ / name, why + " (expected one of " + join(names, ", ") + ")");
    }
    for (const Key* k : keys_) {
      // A required key that an unknown key looks like a typo of is already
      // reported there ("did you mean"); a second line would only mislead.
      if (std::find(misspelt.begin(), misspelt.end(), k->name) != misspelt.end()) continue;
      if (k->is_required && !has(k->name)) {
        const Entry* e = find(k->name);
        cx_.error(e ? e->key : node_, path_ / k->name,
                  "missing required key (expected " + expected(*k) + ")");
      }
    }
  }

  // False when the node was not a mapping (already reported).
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const YAML::Node& node() const { return node_; }
  [[nodiscard]] const Path& path() const { return path_; }
  [[nodiscard]] Path path(std::string_view name) const { return path_ / name; }

  [[nodiscard]] bool has(std::string_view name) const {
    const Entry* e = find(name);
    return e && !e->value.IsNull();
  }
  // The value of a present key (check has() first).
  [[nodiscard]] YAML::Node value(std::string_view name) const { return find(name)->value; }
  // Where to point at for a problem with this key: its key if present, else the map.
  [[nodiscard]] YAML::Node key_node(std::string_view name) const {
    const Entry* e = find(name);
    return e ? e->key : node_;
  }
  // Where to point at for a problem with this key's value.
  [[nodiscard]] YAML::Node value_node(std::string_view name) const {
    return has(name) ? value(name) : key_node(name);
  }

  void error(std::string_view name, const std::string& what) {
    cx_.error(value_node(name), path(name), what);
  }

  std::optional<std::int64_t> integer(std::string_view name) {
    return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
      return read_integer(cx_, v, p, k);
    });
  }
  // For keys stored in an int: the table's max keeps the value in range.
  std::optional<int> int32(std::string_view name) {
    const auto v = integer(name);
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  }
  std::optional<std::uint64_t> uint64(std::string_view name) {
    return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
      return read_uint64(cx_, v, p, k);
    });
  }
  std::optional<double> number(std::string_view name) {
    return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
      return read_number(cx_, v, p, k);
    });
  }
  std::optional<bool> boolean(std::string_view name) {
    return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
      return read_bool(cx_, v, p, k);
    });
  }
  std::optional<std::string> string(std::string_view name) {
    return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
      return read_string(cx_, v, p, k);
    });
  }
  template <class E>
  std::optional<E> choice(std::string_view name) {
    return get(name, [&](const YAML::Node& v, const Path& p, const Key& k) {
      return read_choice<E>(cx_, v, p, k);
    });
  }

  // The text a custom key is read from: the user's value, or the table default.
  [[nodiscard]] std::optional<YAML::Node> value_or_default(std::string_view name) const {
    if (has(name)) return value(name);
    const Key& k = decl(name);
    if (k.default_text.empty() || k.computed_default) return std::nullopt;
    return YAML::Load(std::string(k.default_text));
  }

  [[nodiscard]] const Key& decl(std::string_view name) const {
    for (const Key* k : keys_) {
      if (k->name == name) return *k;
    }
    throw internal_error("config key '" + std::string(name) + "' is not declared in " +
                         path_.str());
  }

 private:
  struct Entry {
    std::string name;
    YAML::Node key;
    YAML::Node value;
    const Key* decl;
  };

  [[nodiscard]] const Entry* find_any(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
  [[nodiscard]] const Entry* find(std::string_view name) const {
    const Entry* e = find_any(name);
    return e && e->decl ? e : nullptr;
  }

  template <class Read>
  std::invoke_result_t<Read, const YAML::Node&, const Path&, const Key&> get(std::string_view name,
                                                                           Read read) {
    const Key& k = decl(name);
    if (has(name)) return read(value(name), path(name), k);
    if (k.default_text.empty() || k.computed_default) return std::nullopt;
    // Defaults go through the same reader as user values, so a table default
    // means exactly what the same text in a config would.
    return read(YAML::Load(std::string(k.default_text)), path(name), k);
  }

  Context& cx_;
  YAML::Node node_;
  Path path_;
  std::vector<const Key*> keys_;
  std::vector<Entry> entries_;
  bool ok_ = true;
};

// Reports when more than one of `names` is present (at the later one) or, when
// `required`, none is. Returns how many are present.
int exactly_one_of(Context& cx, const MapReader& r, std::initializer_list<std::string_view> names) {
  std::vector<std::string_view> present;
  for (std::string_view n : names) {
    if (r.has(n)) present.push_back(n);
  }
  std::vector<std::string_view> all(names);
  const std::string alternatives = join(all, " / ");
  if (present.empty()) {
    const std::string none = all.size() == 2 ? "neither " + std::string(all[0]) + " nor " +
                                                   std::string(all[1])
                                             : "none of " + join(all, ", ");
    cx.error(r.node(), r.path(),
             none + " is given (expected exactly one of " + alternatives + ")");
  }
  if (present.size() > 1) {
    // Point at the key that comes last in the file: the first one was fine
    // until the second appeared.
    // Keys that --set added have no position and count as last.
    const auto order = [&](std::string_view n) {
      const YAML::Mark m = r.key_node(n).Mark();
      constexpr int kEnd = std::numeric_limits<int>::max();
      return m.is_null() ? std::pair(kEnd, kEnd) : std::pair(m.line, m.column);
    };
    std::string_view later = present[0];
    for (std::string_view n : present) {
      if (order(n) > order(later)) later = n;
    }
    cx.error(r.key_node(later), r.path(later),
             join(present, " and ") + " are both given (expected exactly one of " +
                 alternatives + ")");
  }
  return static_cast<int>(present.size());
}

// ---------------------------------------------------------------------------
// Sections

NoiseSpec parse_noise(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kNoiseKeys}));
  NoiseSpec n;
  if (auto v = r.choice<NoiseKind>("kind")) n.kind = *v;
  if (auto v = r.number("amplitude")) n.amplitude = *v;
  if (auto v = r.uint64("seed")) n.seed = *v;
  return n;
}

std::vector<ToneSpec> parse_tones(Context& cx, const YAML::Node& node, const Path& path,
                                  std::optional<int> channels) {
  std::vector<ToneSpec> tones;
  if (!node.IsSequence()) {
    cx.error(node, path,
             describe(node) + " is not a list (expected a list of tones, e.g. "
                              "[{freq_hz: 440, amplitude: 0.5}])");
    return tones;
  }
  std::size_t i = 0;
  for (const YAML::Node& item : node) {
    const Path p = path / i++;
    MapReader r(cx, item, p, keys_of({kToneKeys}));
    ToneSpec t;
    if (item.IsNull()) {
      cx.error(item, p, "empty tone (expected a mapping with freq_hz)");
      continue;
    }
    if (!r.ok()) continue;
    if (auto v = r.number("freq_hz")) t.freq_hz = *v;
    if (auto v = r.number("amplitude")) t.amplitude = *v;
    if (auto v = r.number("phase_deg")) t.phase_deg = *v;
    if (auto v = r.int32("channel")) {
      if (channels && *v >= *channels) {
        r.error("channel", "channel " + std::to_string(*v) + " does not exist (expected 0 to " +
                               std::to_string(*channels - 1) + ": the synth has " +
                               std::to_string(*channels) + " channel" +
                               (*channels == 1 ? "" : "s") + ", counted from 0)");
      } else {
        t.channel = *v;
      }
    }
    tones.push_back(t);
  }
  return tones;
}

// The synth spec, and its sample rate when valid (for Nyquist checks).
SynthSpec parse_synth(Context& cx, const YAML::Node& node, const Path& path,
                      std::optional<double>& valid_rate) {
  MapReader r(cx, node, path, keys_of({kSynthKeys}));
  SynthSpec s;
  if (!r.ok()) return s;
  if (auto v = r.number("sample_rate")) {
    s.sample_rate = *v;
    // Audio files store integer rates, and a sink may well write this signal.
    if (*v != std::floor(*v) || *v > kMaxInt) {
      r.error("sample_rate", r.value_node("sample_rate").Scalar() +
                                 " Hz is not a whole number of Hz (expected an integer rate, "
                                 "as audio files store it)");
    } else {
      valid_rate = *v;
    }
  }
  const auto channels = r.int32("channels");
  if (channels) s.channels = *channels;
  const int lengths = exactly_one_of(cx, r, {"duration_s", "frames"});
  if (lengths == 1 && r.has("frames")) {
    if (auto v = r.integer("frames")) s.frames = *v;
  } else if (lengths == 1) {
    const auto duration = r.number("duration_s");
    if (duration && valid_rate) {
      const double frames = *duration * *valid_rate;
      if (!(frames < 4.0e18)) {
        r.error("duration_s", r.value("duration_s").Scalar() +
                                  " s is too long (expected fewer than 4e18 frames)");
      } else if (std::llround(frames) < 1) {
        r.error("duration_s", r.value("duration_s").Scalar() + " s at " +
                                  format_number(*valid_rate) +
                                  " Hz is less than one frame (expected duration_s * "
                                  "sample_rate >= 0.5)");
      } else {
        s.frames = std::llround(frames);
      }
    }
  } else {
    // Both given: still check each, so that every problem is reported at once.
    if (r.has("frames")) (void)r.integer("frames");
    if (r.has("duration_s")) (void)r.number("duration_s");
  }
  if (r.has("tones")) s.tones = parse_tones(cx, r.value("tones"), r.path("tones"), channels);
  if (r.has("noise")) s.noise = parse_noise(cx, r.value("noise"), r.path("noise"));
  return s;
}

SourceSpec parse_source(Context& cx, const YAML::Node& node, const Path& path,
                        std::optional<double>& synth_rate) {
  MapReader r(cx, node, path, keys_of({kSourceKeys}));
  SourceSpec s;
  if (!r.ok()) return s;
  const int count = exactly_one_of(cx, r, {"file", "synth"});
  if (r.has("file")) s.file = r.string("file");
  if (r.has("raw")) {
    if (r.has("synth"))
      cx.error(r.key_node("raw"), r.path("raw"), "raw describes a file source (expected it with file, not synth)");
    MapReader raw(cx, r.value("raw"), r.path("raw"), keys_of({kRawKeys}));
    RawSpec spec;
    const auto rate = raw.number("sample_rate");
    const auto channels = raw.int32("channels");
    const auto encoding = raw.choice<RawEncoding>("encoding");
    if (rate && *rate != std::floor(*rate))
      raw.error("sample_rate", format_number(*rate) + " is not a whole number of Hz (expected e.g. 48000)");
    if (raw.ok() && rate && channels && encoding) {
      spec.sample_rate = *rate;
      spec.channels = *channels;
      spec.encoding = *encoding;
      s.raw = spec;
    }
  }
  std::optional<double> rate;
  if (r.has("synth")) s.synth = parse_synth(cx, r.value("synth"), r.path("synth"), rate);
  // Cutoffs are checked against the synth rate only when the synth is the source.
  if (count == 1) synth_rate = rate;
  return s;
}

FilterKind parse_kind(Context& cx, const MapReader& r, bool& valid) {
  valid = false;
  const YAML::Node v = r.value("kind");
  const Key& k = r.decl("kind");
  if (v.IsScalar()) {
    try {
      const FilterKind kind = parse_filter_kind(v.Scalar());
      valid = true;
      return kind;
    } catch (const Error&) {
      // Reported below with position and suggestion.
    }
  }
  bad_choice(cx, v, r.path("kind"), k, enum_names<FilterKind>());
  return FilterKind::lowpass;
}

WindowSpec parse_window_setting(Context& cx, MapReader& r) {
  const std::optional<double> beta = r.number("beta");
  const auto value = r.value_or_default("window");
  const YAML::Node& v = *value;  // window has a default, so a value is always there
  const Path p = r.path("window");
  const Key& k = r.decl("window");
  if (!v.IsScalar()) {
    cx.error(v, p, describe(v) + " is not a window name (expected one of " +
                       join(enum_names<WindowKind>(), " | ") + ")");
    return {};
  }
  const std::string& text = v.Scalar();
  const std::string_view kaiser = to_string(WindowKind::kaiser);
  const bool is_kaiser = text == kaiser || text.starts_with(std::string(kaiser) + ":");
  const bool inline_beta = text.find(':') != std::string::npos;
  if (!is_kaiser && r.has("beta")) {
    r.error("beta", "beta applies only to the kaiser window (expected window: kaiser, or no beta)");
  }
  if (is_kaiser && inline_beta && r.has("beta")) {
    r.error("beta", "beta is given twice, in window '" + text +
                        "' and here (expected one of 'kaiser:BETA' / beta)");
  }
  if (is_kaiser && !inline_beta && !r.has("beta")) {
    cx.error(v, p,
             "the kaiser window needs a beta (expected 'kaiser:BETA', e.g. 'kaiser:8.6', or "
             "beta: 8.6 next to window: kaiser)");
    return {};
  }
  try {
    WindowSpec w = parse_window(text);
    if (is_kaiser && !inline_beta && beta) w.beta = *beta;
    return w;
  } catch (const Error& e) {
    const std::string name = text.substr(0, text.find(':'));
    const auto names = enum_names<WindowKind>();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      bad_choice(cx, v, p, k, names);
    } else {
      // A known window with a bad parameter: design.cpp says what is wrong.
      cx.error(v, p, e.what());
    }
  }
  return {};
}

// cutoff_hz: one number for lowpass/highpass, [lo, hi] for band kinds; each in
// (0, Nyquist) when the sample rate is known (synth source).
std::vector<double> parse_cutoff(Context& cx, const YAML::Node& v, const Path& p, const Key& k,
                                 std::optional<FilterKind> kind, std::optional<double> rate) {
  const bool band = kind && (*kind == FilterKind::bandpass || *kind == FilterKind::bandstop);
  const std::string kind_name = kind ? std::string(to_string(*kind)) : std::string();
  std::vector<std::pair<YAML::Node, Path>> items;
  if (v.IsSequence()) {
    if (kind && !band) {
      cx.error(v, p, "a " + kind_name + " filter takes one cutoff, got " + describe(v) +
                         " (expected a number in Hz)");
      return {};
    }
    if (v.size() != 2) {
      cx.error(v, p, "got " + std::to_string(v.size()) +
                         " band edges (expected [lo, hi]: two numbers in Hz)");
      return {};
    }
    items = {{v[0], p / 0}, {v[1], p / 1}};
  } else if (v.IsScalar()) {
    if (band) {
      cx.error(v, p, "a " + kind_name + " filter needs two band edges, got " + describe(v) +
                         " (expected [lo, hi] in Hz)");
      return {};
    }
    items = {{v, p}};
  } else {
    cx.error(v, p, describe(v) + " is not a cutoff (expected " + expected(k) + ")");
    return {};
  }
  std::vector<double> out;
  bool good = true;
  for (const auto& [node, path] : items) {
    const auto f = read_number(cx, node, path, kCutoffValue);
    if (!f) {
      good = false;
      continue;
    }
    if (*f <= 0.0) {
      cx.error(node, path, "cutoff " + node.Scalar() +
                               " Hz is not above 0 (expected a frequency > 0 Hz)");
      good = false;
    } else if (rate && *f >= *rate / 2) {
      cx.error(node, path,
               "cutoff " + node.Scalar() + " Hz is not below the Nyquist frequency " +
                   format_number(*rate / 2) + " Hz of the " + format_number(*rate) +
                   " Hz synth source (expected a frequency < " + format_number(*rate / 2) +
                   " Hz)");
      good = false;
    }
    out.push_back(f.value_or(0.0));
  }
  if (good && out.size() == 2 && !(out[0] < out[1])) {
    cx.error(v, p, "band edges " + v[0].Scalar() + " and " + v[1].Scalar() +
                       " are not increasing (expected [lo, hi] with lo < hi)");
  }
  return out;
}

DesignSpec parse_design(Context& cx, const YAML::Node& node, const Path& path,
                        std::optional<double> rate) {
  MapReader r(cx, node, path, keys_of({kDesignKeys}));
  DesignSpec d;
  if (!r.ok()) return d;
  std::optional<FilterKind> kind;
  if (r.has("kind")) {
    bool valid = false;
    const FilterKind k = parse_kind(cx, r, valid);
    if (valid) kind = d.kind = k;
  }
  const auto taps = r.int32("taps");
  if (taps) d.taps = *taps;
  d.window = parse_window_setting(cx, r);
  if (r.has("cutoff_hz")) {
    d.cutoff_hz = parse_cutoff(cx, r.value("cutoff_hz"), r.path("cutoff_hz"), r.decl("cutoff_hz"),
                               kind, rate);
  }
  if (taps && kind && (*kind == FilterKind::highpass || *kind == FilterKind::bandstop) &&
      *taps % 2 == 0) {
    r.error("taps", "a " + std::string(to_string(*kind)) + " filter needs an odd number of taps, "
                        "got " + std::to_string(*taps) +
                        " (expected an odd integer, e.g. " + std::to_string(*taps + 1) +
                        ": an even-length linear-phase filter has a zero at Nyquist)");
  }
  return d;
}

std::vector<double> parse_inline_taps(Context& cx, const YAML::Node& v, const Path& p,
                                      const Key& k) {
  std::vector<double> taps;
  if (!v.IsSequence()) {
    cx.error(v, p, describe(v) + " is not a list (expected " + expected(k) +
                       "; a designed filter's tap count goes under design: taps)");
    return taps;
  }
  if (v.size() == 0) {
    cx.error(v, p, "the taps list is empty (expected " + expected(k) + ")");
    return taps;
  }
  taps.reserve(v.size());
  std::size_t i = 0;
  for (const YAML::Node& t : v) {
    if (auto x = read_number(cx, t, p / i, kTapValue)) taps.push_back(*x);
    ++i;
  }
  return taps;
}

// Stage keys that belong to another stage type get a message that says so.
std::string stage_key_hint(StageType type, std::string_view name) {
  const std::pair<StageType, std::span<const Key>> tables[] = {{StageType::fir, kFirKeys},
                                                               {StageType::gain, kGainKeys}};
  for (const auto& [other, keys] : tables) {
    if (other == type) continue;
    for (const Key& k : keys) {
      if (k.name == name) {
        return "'" + std::string(name) + "' does not apply to a " +
               std::string(to_string(type)) + " stage, it is a " +
               std::string(to_string(other)) + " setting";
      }
    }
  }
  return {};
}

bool valid_stage_name(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// `named`: the stage has a valid name of its own; `typed`: a valid type (so that
// its default name means something).
StageSpec parse_stage(Context& cx, const YAML::Node& node, const Path& path,
                      std::optional<double> rate, bool& named, bool& typed) {
  StageSpec s;
  named = false;
  typed = false;
  if (!node.IsMap()) {
    cx.error(node, path, describe(node) + " is not a stage (expected a mapping with type: " +
                             join(enum_names<StageType>(), " | ") + ")");
    return s;
  }
  if (!node.Mark().is_null()) s.line = node.Mark().line + 1;
  // The type decides which other keys are allowed, so peek at it first; the
  // MapReader below reports a bad or missing type.
  std::optional<StageType> type;
  if (const YAML::Node t = node["type"]; t && t.IsScalar()) {
    const auto names = enum_names<StageType>();
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (t.Scalar() == names[i]) type = EnumValues<StageType>::values[i];
    }
  }
  std::vector<const Key*> keys;
  if (!type) {
    keys = keys_of({kStageKeys, kFirKeys, kGainKeys});
  } else if (*type == StageType::fir) {
    keys = keys_of({kStageKeys, kFirKeys});
  } else if (*type == StageType::gain) {
    keys = keys_of({kStageKeys, kGainKeys});
  } else {
    keys = keys_of({kStageKeys});
  }
  ForeignKeyHint hint;
  if (type) hint = [t = *type](std::string_view name) { return stage_key_hint(t, name); };
  MapReader r(cx, node, path, std::move(keys), hint);
  if (auto t = r.choice<StageType>("type")) {
    s.type = *t;
    typed = true;
  }
  if (auto n = r.string("name")) {
    if (!valid_stage_name(*n)) {
      r.error("name", "'" + *n + "' is not a valid stage name (expected " +
                          expected(r.decl("name")) + ")");
    } else {
      s.name = *n;
      named = true;
    }
  }
  if (!type) return s;
  if (*type == StageType::fir) {
    FirSpec& f = s.fir;
    exactly_one_of(cx, r, {"design", "taps", "taps_file"});
    if (r.has("design")) f.design = parse_design(cx, r.value("design"), r.path("design"), rate);
    if (r.has("taps")) {
      f.taps = parse_inline_taps(cx, r.value("taps"), r.path("taps"), r.decl("taps"));
    }
    if (r.has("taps_file")) f.taps_file = r.string("taps_file");
    if (auto v = r.choice<FirMode>("mode")) f.mode = *v;
    if (auto v = r.choice<FirMethod>("method")) f.method = *v;
  } else if (*type == StageType::gain) {
    exactly_one_of(cx, r, {"db", "linear"});
    if (r.has("db")) {
      if (auto db = r.number("db")) {
        if (const auto g = gain_from_db(*db)) s.gain_linear = *g;
        else
          r.error("db", r.value("db").Scalar() +
                            " dB is beyond float32 range (expected a gain below 770 dB)");
      }
    }
    if (r.has("linear")) {
      if (auto g = r.number("linear")) s.gain_linear = *g;
    }
  }
  return s;
}

std::vector<StageSpec> parse_stages(Context& cx, const YAML::Node& node, const Path& path,
                                    std::optional<double> rate) {
  std::vector<StageSpec> stages;
  if (!node.IsSequence()) {
    cx.error(node, path, describe(node) + " is not a list (expected a list of stages, each "
                                          "a mapping with a type)");
    return stages;
  }
  struct Owner {
    std::size_t index;
    bool named;
  };
  std::map<std::string, Owner, std::less<>> owners;
  std::size_t i = 0;
  for (const YAML::Node& item : node) {
    const Path p = path / i;
    bool named = false;
    bool typed = false;
    StageSpec s = parse_stage(cx, item, p, rate, named, typed);
    if (!named) s.name = std::string(to_string(s.type)) + std::to_string(i);
    // A stage whose own name was invalid has been reported already.
    const bool name_given = item.IsMap() && item["name"] && !item["name"].IsNull();
    if (named || (typed && !name_given)) {
      const YAML::Node where = named ? YAML::Node(item["name"]) : item;
      if (s.name == "output") {
        cx.error(where, p / "name",
                 "'output' is reserved for the final metrics block (expected another name)");
      } else if (const auto it = owners.find(s.name); it != owners.end()) {
        const std::string first = "stages." + std::to_string(it->second.index);
        cx.error(where, p / "name",
                 named ? "duplicate stage name '" + s.name + "' (first used by " + first +
                             "; expected a unique name)"
                       : "the default name '" + s.name + "' is already used by " + first +
                             " (expected a unique name: give this stage a name)");
      } else {
        owners.emplace(s.name, Owner{i, named});
      }
    }
    stages.push_back(std::move(s));
    ++i;
  }
  return stages;
}

SinkSpec parse_sink(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kSinkKeys}));
  SinkSpec s;
  if (r.has("file")) s.file = r.string("file");
  if (auto v = r.choice<SampleFormat>("format")) s.format = *v;
  if (auto v = r.choice<SinkType>("type")) s.type = *v;
  if (s.file && *s.file == "-" && !s.type)
    cx.error(r.key_node("file"), r.path("file"),
             "'-' is standard output and needs its container (expected sink.type: wav, raw, au, flac or caf)");
  return s;
}

StatsSpec parse_stats(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kStatsKeys}));
  StatsSpec s;
  if (r.has("json")) s.json = r.string("json");
  if (r.has("csv")) s.csv = r.string("csv");
  return s;
}

std::vector<int> parse_devices(Context& cx, const YAML::Node& v, const Path& p) {
  std::vector<int> out;
  if (v.IsScalar()) {
    if (auto d = read_integer(cx, v, p, kDeviceValue)) out.push_back(static_cast<int>(*d));
    return out;
  }
  if (!v.IsSequence()) {
    cx.error(v, p, describe(v) + " is not a device (expected an integer >= 0, or a list of them)");
    return out;
  }
  std::size_t i = 0;
  for (const YAML::Node& item : v) {
    const Path ip = p / i++;
    const auto d = read_integer(cx, item, ip, kDeviceValue);
    if (!d) continue;
    if (std::find(out.begin(), out.end(), *d) != out.end()) {
      cx.error(item, ip, "device " + std::to_string(*d) +
                             " is listed twice (expected each device once)");
      continue;
    }
    out.push_back(static_cast<int>(*d));
  }
  return out;
}

ExecutionSpec parse_execution(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kExecutionKeys}));
  ExecutionSpec e;
  if (auto v = r.choice<BackendKind>("backend")) e.backend = *v;
  if (auto v = r.integer("chunk_frames")) e.chunk_frames = *v;
  if (auto v = r.int32("streams")) e.streams = *v;
  if (auto v = r.int32("threads")) e.threads = *v;
  if (r.has("device")) e.devices = parse_devices(cx, r.value("device"), r.path("device"));
  if (auto v = r.number("latency_ms")) e.latency_ms = *v;
  return e;
}

BatchSpec parse_batch(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kBatchKeys}));
  BatchSpec b;
  if (r.has("inputs")) {
    const YAML::Node v = r.value("inputs");
    const Path p = r.path("inputs");
    if (v.IsScalar()) {
      if (auto s = read_string(cx, v, p, kInputValue)) b.inputs.push_back(*s);
    } else if (v.IsSequence()) {
      std::size_t i = 0;
      for (const YAML::Node& item : v) {
        if (auto s = read_string(cx, item, p / i, kInputValue)) b.inputs.push_back(*s);
        ++i;
      }
    } else {
      cx.error(v, p, describe(v) + " is not a list of inputs (expected " +
                         expected(r.decl("inputs")) + ")");
    }
  }
  if (auto v = r.string("out_dir")) b.out_dir = *v;
  if (auto v = r.boolean("keep_going")) b.keep_going = *v;
  return b;
}

Config parse_root(Context& cx, const YAML::Node& root, ConfigUse use) {
  Config c;
  std::vector<const Key*> root_keys = keys_of({kRootKeys});
  // A batch gives each file as the source: a config for it may leave source out.
  static_assert(kRootKeys[1].name == "source");
  static const Key kOptionalSource = [] {
    Key k = kRootKeys[1];
    k.is_required = false;
    return k;
  }();
  if (use == ConfigUse::batch)
    for (const Key*& k : root_keys)
      if (k->name == "source") k = &kOptionalSource;
  MapReader r(cx, root, Path{}, std::move(root_keys));
  if (!r.ok()) return c;
  if (r.has("version")) {
    const YAML::Node v = r.value("version");
    // The version gets its own message: "out of range" would undersell it.
    Key any_integer = r.decl("version");
    any_integer.min = any_integer.max = std::nullopt;
    if (auto n = read_integer(cx, v, r.path("version"), any_integer)) {
      if (*n != 1) {
        cx.error(v, r.path("version"),
                 "schema version " + v.Scalar() +
                     " is not supported (expected 1: this sigstream reads version 1)");
      }
    }
  }
  std::optional<double> synth_rate;
  if (r.has("source")) c.source = parse_source(cx, r.value("source"), r.path("source"), synth_rate);
  if (r.has("stages")) c.stages = parse_stages(cx, r.value("stages"), r.path("stages"), synth_rate);
  // Absent sections still go through their readers so that table defaults apply.
  const auto section = [&](std::string_view name) {
    return r.has(name) ? r.value(name) : YAML::Node(YAML::NodeType::Null);
  };
  c.sink = parse_sink(cx, section("sink"), r.path("sink"));
  c.stats = parse_stats(cx, section("stats"), r.path("stats"));
  c.execution = parse_execution(cx, section("execution"), r.path("execution"));
  c.batch = parse_batch(cx, section("batch"), r.path("batch"));
  return c;
}

// ---------------------------------------------------------------------------
// --set overrides

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return std::string(s.substr(first, last - first + 1));
}

std::optional<std::size_t> parse_index(const std::string& s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), is_digit)) return std::nullopt;
  std::size_t out = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
  if (res.ec != std::errc()) return std::nullopt;
  return out;
}

// Applies one "key.path=value" to the tree. Map keys on the way are created;
// list indices must exist.
void apply_override(Context& cx, YAML::Node& root, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    cx.override_error(text, "malformed override (expected KEY.PATH=VALUE, e.g. "
                            "execution.streams=8)");
    return;
  }
  const std::string key = trim(std::string_view(text).substr(0, eq));
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    parts.push_back(trim(std::string_view(key).substr(start, dot - start)));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    cx.override_error(text, "the key path '" + key +
                                "' has an empty component (expected KEY.PATH=VALUE, e.g. "
                                "stages.0.design.cutoff_hz=3000)");
    return;
  }
  YAML::Node value;
  try {
    value = YAML::Load(text.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    cx.override_error(text, "the value is not valid YAML: " + e.msg);
    return;
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  // Node::reset rebinds a handle; operator= would overwrite the node it refers to.
  YAML::Node cur;
  cur.reset(root);
  std::vector<std::string> done;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string here = done.empty() ? "the top level" : "'" + Path(done).str() + "'";
    YAML::Node next;
    if (cur.IsSequence()) {
      const auto index = parse_index(part);
      if (!index) {
        cx.override_error(text, here + " is a list: '" + part +
                                    "' is not an index (expected a number from 0)");
        return;
      }
      if (*index >= cur.size()) {
        cx.override_error(text, "index " + part + " is past the end of " + here + " (" +
                                    std::to_string(cur.size()) + " item" +
                                    (cur.size() == 1 ? "" : "s") + "; expected 0 to " +
                                    std::to_string(static_cast<long long>(cur.size()) - 1) + ")");
        return;
      }
      done.push_back(std::to_string(*index));
      if (last) {
        cur[*index] = value;
        break;
      }
      next.reset(cur[*index]);
    } else if (cur.IsMap()) {
      done.push_back(part);
      if (last) {
        cur[part] = value;
        break;
      }
      const YAML::Node& const_cur = cur;
      if (!const_cur[part] || const_cur[part].IsNull()) {
        cur[part] = YAML::Node(YAML::NodeType::Map);
      }
      next.reset(cur[part]);
    } else {
      cx.override_error(text, here + " is " + describe(cur) + ", not a mapping or list, so it "
                                         "has no '" + part + "' (expected a path to a key)");
      return;
    }
    cur.reset(next);
  }
  cx.add_override(Path(done), text);
}

std::string position(const YAML::Mark& m) {
  return std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// Sees where each YAML document starts and where its first node is.
class DocumentProbe : public YAML::EventHandler {
 public:
  void reset() {
    first_node_.reset();
    empty_ = true;
  }
  [[nodiscard]] const YAML::Mark& start() const { return start_; }
  [[nodiscard]] YAML::Mark first_node() const { return first_node_.value_or(start_); }
  // Nothing but a null (e.g. after a trailing "---").
  [[nodiscard]] bool empty() const { return empty_; }

  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, false); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, true); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark, true);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark, true);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark, true);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& mark, bool content) {
    if (!first_node_) first_node_ = mark;
    if (content) empty_ = false;
  }
  YAML::Mark start_;
  std::optional<YAML::Mark> first_node_;
  bool empty_ = true;
};

// Loads the first YAML document and checks that there is no other. Not
// YAML::LoadAll: in yaml-cpp 0.7 a document that starts with a stray ',' makes
// the parser hand out the same empty document forever (LoadAll then allocates
// until it dies), and YAML::Load silently returns null for it. Such a document
// is recognised by a start that does not advance, and reported as the syntax
// error it is.
YAML::Node load_document(const std::string& text, const std::string& origin, Context& cx) {
  const auto syntax_error = [&](const YAML::Mark& mark, const std::string& what) {
    return config_error(origin + ":" + position(mark) + ": YAML syntax error: " + what);
  };
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentProbe probe;
    std::vector<YAML::Mark> documents;
    std::optional<YAML::Mark> second;  // the first node of the first extra document
    int extra = 0;
    while (true) {
      probe.reset();
      if (!parser.HandleNextDocument(probe)) break;
      if (!documents.empty() && probe.start().pos == documents.back().pos) {
        const YAML::Mark at = probe.first_node();
        const bool in_text = at.pos >= 0 && static_cast<std::size_t>(at.pos) < text.size();
        throw syntax_error(at, in_text ? "unexpected '" + text.substr(at.pos, 1) + "'"
                                       : std::string("unexpected content"));
      }
      documents.push_back(probe.start());
      if (documents.size() > 1 && !probe.empty()) {
        ++extra;
        if (!second) second = probe.first_node();
      }
    }
    if (extra > 0) {
      cx.error_at(*second, Path{}, "the file holds " + std::to_string(extra + 1) +
                                       " YAML documents (expected one)");
    }
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw syntax_error(e.mark, e.msg);
  } catch (const YAML::Exception& e) {
    throw config_error(origin + ": YAML error: " + e.msg);
  }
}

// A '|' inside a markdown table cell must be escaped.
std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string config_reference() {
  std::string out;
  for (const Section& s : kSections) {
    out += s.path.empty() ? std::string("### Top level") : "### `" + std::string(s.path) + "`";
    if (!s.title.empty() && !s.path.empty()) out += " (" + std::string(s.title) + ")";
    out += "\n\n| key | type | default | description |\n|---|---|---|---|\n";
    for (const Key& k : s.keys) {
      std::string path = std::string(s.path) + (s.path.empty() ? "" : ".") + std::string(k.name);
      std::string type = expected(k);
      if (k.type == Type::section) type = "mapping";
      std::string def = k.is_required ? "required" : k.default_text.empty()
                                                     ? "-"
                                                     : "`" + std::string(k.default_text) + "`";
      out += "| `" + path + "` | " + markdown_cell(type) + " | " + def + " | " +
             markdown_cell(k.description) + " |\n";
    }
    out += "\n";
  }
  return out;
}

Config parse_config(const std::string& yaml_text, const std::string& origin,
                    const std::vector<std::string>& overrides, ConfigUse use) {
  Context cx(origin);
  YAML::Node root = load_document(yaml_text, origin, cx);
  if (root.IsNull() && overrides.empty()) {
    throw config_error(origin + ":1:1: the config is empty (expected a mapping with version, "
                                "source and stages)");
  }
  if (!root.IsNull() && !root.IsMap()) {
    cx.error(root, Path{}, "the config is " + describe(root) +
                               " (expected a mapping with version, source and stages)");
    cx.throw_if_any();
  }
  for (const std::string& o : overrides) apply_override(cx, root, o);
  Config config;
  try {
    config = parse_root(cx, root, use);
  } catch (const YAML::Exception& e) {
    // Defensive: a yaml-cpp surprise must still come out as a config error.
    throw config_error(origin + ": YAML error: " + e.msg);
  }
  config.origin = origin;
  cx.throw_if_any();
  return config;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides,
                   ConfigUse use) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw io_error(path + ": cannot read config: is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error(path + ": cannot read config (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw io_error(path + ": cannot read config: read error");
  return parse_config(text.str(), path, overrides, use);
}

}  // namespace sigstream
