// YAML -> validated Config (SPEC §2): the key tables of the sections that are
// not stages (source, sink, stats, execution, batch) and their readers. The
// generic walker is pipeline/config/yaml_reader.*, and each stage kind's keys
// and reader are in stages/<kind>/schema.cpp, found through the registry.
// This file runs a little over 600 lines because the source section's
// readers (synth, tones, noise, raw) and the root belong with their tables.
#include "pipeline/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <span>
#include <sstream>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "pipeline/config/schema.hpp"
#include "pipeline/config/stage_schema.hpp"
#include "pipeline/config/yaml_document.hpp"
#include "pipeline/config/yaml_reader.hpp"
#include "stages/registry.hpp"

namespace sigstream {

// This file is the config reader: the walker's vocabulary is its own.
using namespace config;

namespace {

// The names `type:` accepts: one per registered kind, in registry order.
std::span<const std::string_view> stage_type_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const StageKind& kind : stage_kinds())
      out.push_back(kind.type.name());
    return out;
  }();
  return names;
}

// ---------------------------------------------------------------------------
// The key tables (stage kinds declare theirs in stages/<kind>/schema.cpp)

constexpr Key kRootKeys[] = {
    Key("version", Type::integer, "Schema version; this sigstream reads version 1.")
        .at_least(1)
        .at_most(1)
        .required(),
    Key("source", Type::section, "Where the signal comes from: exactly one of file / synth.")
        .spelled("a mapping with file or synth")
        .required(),
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
    Key("raw", Type::section,
        "With file: headerless PCM (needed for .raw/.pcm files and raw streams)."),
};

constexpr Key kRawKeys[] = {
    Key("sample_rate", Type::number, "Sample rate in Hz (a whole number).")
        .above(0)
        .at_most(kMaxInt)
        .required(),
    Key("channels", Type::integer, "Number of channels (interleaved).")
        .at_least(1)
        .at_most(1024)
        .required(),
    Key("encoding", Type::choice, "Sample encoding.").one_of(&enum_names<RawEncoding>).required(),
};

constexpr Key kSynthKeys[] = {
    Key("sample_rate", Type::number, "Sample rate in Hz (a whole number).")
        .defaults("48000")
        .above(0),
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
        .at_least(0)
        .at_most(kMaxInt),
};

constexpr Key kNoiseKeys[] = {
    Key("kind", Type::choice, "Noise distribution.")
        .one_of(&enum_names<NoiseKind>)
        .defaults("gaussian"),
    Key("amplitude", Type::number, "gaussian: standard deviation; uniform: half-width.")
        .defaults("0")
        .at_least(0),
    Key("seed", Type::uint64, "Random seed (same seed, same noise).").defaults("1"),
};

constexpr Key kStageKeys[] = {
    Key("type", Type::choice, "What the stage does.").one_of(&stage_type_names).required(),
    Key("name", Type::string, "Unique name, used in statistics; 'output' is reserved.")
        .computed("<type><index>")
        .spelled("a name of letters, digits, '_', '-' or '.'"),
};

constexpr Key kSinkKeys[] = {
    Key("file", Type::string, "Output file; the container comes from the extension.")
        .spelled("a file path"),
    Key("format", Type::choice, "Sample format; same = that of the input (float for synth).")
        .one_of(&enum_names<SampleFormat>)
        .defaults("same"),
    Key("type", Type::choice,
        "Container, required for file '-' (standard output); else from the extension.")
        .one_of(&enum_names<SinkType>),
    Key("quality", Type::number,
        "MP3, Vorbis and Opus outputs: 0 (smallest file) to 1 (best quality), libsndfile's "
        "compression level "
        "1 - quality; left out: libsndfile's default.")
        .at_least(0)
        .at_most(1),
};

constexpr Key kStatsKeys[] = {
    Key("json", Type::string, "Statistics JSON (schema 1).").spelled("a file path"),
    Key("csv", Type::string, "Per-chunk, per-channel metrics CSV.").spelled("a file path"),
};

constexpr Key kExecutionKeys[] = {
    Key("backend", Type::choice, "auto uses CUDA when a device exists, else the CPU.")
        .one_of(&enum_names<BackendKind>)
        .defaults("auto"),
    Key("chunk_frames", Type::integer, "Frames per chunk; bounds memory, never changes results.")
        .defaults("1048576")
        .at_least(1),
    Key("streams", Type::integer, "CUDA streams (chunks in flight).")
        .defaults("4")
        .at_least(1)
        .at_most(kMaxInt),
    Key("threads", Type::integer, "CPU worker threads; 0 = one per hardware thread.")
        .defaults("0")
        .at_least(0)
        .at_most(kMaxInt),
    Key("device", Type::custom, "CUDA device(s); a list spreads batch work over GPUs.")
        .spelled("an integer >= 0, or a list of them"),
    Key("latency_ms", Type::number, "Live mode: bound on the added latency of each chunk, in ms.")
        .above(0)
        .at_most(10000),
    Key("busy_poll", Type::boolean,
        "Live mode: wait for input and output by spinning, not sleeping (one core busy).")
        .defaults("false"),
    Key("redundant", Type::boolean,
        "Live mode: compute every block on two threads (two cores spinning, the GPU work twice); "
        "the first "
        "to finish writes it, so one core's stall does not make a block late.")
        .defaults("false"),
};

constexpr Key kBatchKeys[] = {
    Key("inputs", Type::custom, "Input files or globs; CLI inputs are added.")
        .spelled("a string or a list of strings"),
    Key("out_dir", Type::string, "Output folder: input stem + sink extension.")
        .defaults("out/batch")
        .spelled("a folder path"),
    Key("keep_going", Type::boolean, "Go on with the other files when one fails.").defaults("true"),
};

// Element types of lists, for messages.
constexpr Key kDeviceValue = Key("device", Type::integer).at_least(0).at_most(kMaxInt);
constexpr Key kInputValue = Key("input", Type::string).spelled("a path or glob");

// The reference's tables: these, then every stage kind's (see config_reference).
constexpr Section kSectionsBeforeStages[] = {
    {"", "top level", kRootKeys},
    {"source", "", kSourceKeys},
    {"source.raw", "", kRawKeys},
    {"source.synth", "", kSynthKeys},
    {"source.synth.tones[]", "", kToneKeys},
    {"source.synth.noise", "", kNoiseKeys},
    {"stages[]", "every stage", kStageKeys},
};

constexpr Section kSectionsAfterStages[] = {
    {"sink", "", kSinkKeys},
    {"stats", "", kStatsKeys},
    {"execution", "", kExecutionKeys},
    {"batch", "", kBatchKeys},
};

// ---------------------------------------------------------------------------
// Sections

NoiseSpec parse_noise(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kNoiseKeys}));
  NoiseSpec n;
  if (auto v = r.choice<NoiseKind>("kind"))
    n.kind = *v;
  if (auto v = r.number("amplitude"))
    n.amplitude = *v;
  if (auto v = r.uint64("seed"))
    n.seed = *v;
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
    if (!r.ok())
      continue;
    if (auto v = r.number("freq_hz"))
      t.freq_hz = *v;
    if (auto v = r.number("amplitude"))
      t.amplitude = *v;
    if (auto v = r.number("phase_deg"))
      t.phase_deg = *v;
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
  if (!r.ok())
    return s;
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
  if (channels)
    s.channels = *channels;
  const int lengths = exactly_one_of(cx, r, {"duration_s", "frames"});
  if (lengths == 1 && r.has("frames")) {
    if (auto v = r.integer("frames"))
      s.frames = *v;
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
    if (r.has("frames"))
      (void)r.integer("frames");
    if (r.has("duration_s"))
      (void)r.number("duration_s");
  }
  if (r.has("tones"))
    s.tones = parse_tones(cx, r.value("tones"), r.path("tones"), channels);
  if (r.has("noise"))
    s.noise = parse_noise(cx, r.value("noise"), r.path("noise"));
  return s;
}

SourceSpec parse_source(Context& cx, const YAML::Node& node, const Path& path,
                        std::optional<double>& synth_rate) {
  MapReader r(cx, node, path, keys_of({kSourceKeys}));
  SourceSpec s;
  if (!r.ok())
    return s;
  const int count = exactly_one_of(cx, r, {"file", "synth"});
  if (r.has("file"))
    s.file = r.string("file");
  if (r.has("raw")) {
    if (r.has("synth"))
      cx.error(r.key_node("raw"), r.path("raw"),
               "raw describes a file source (expected it with file, not synth)");
    MapReader raw(cx, r.value("raw"), r.path("raw"), keys_of({kRawKeys}));
    RawSpec spec;
    const auto rate = raw.number("sample_rate");
    const auto channels = raw.int32("channels");
    const auto encoding = raw.choice<RawEncoding>("encoding");
    if (rate && *rate != std::floor(*rate))
      raw.error("sample_rate",
                format_number(*rate) + " is not a whole number of Hz (expected e.g. 48000)");
    if (raw.ok() && rate && channels && encoding) {
      spec.sample_rate = *rate;
      spec.channels = *channels;
      spec.encoding = *encoding;
      s.raw = spec;
    }
  }
  std::optional<double> rate;
  if (r.has("synth"))
    s.synth = parse_synth(cx, r.value("synth"), r.path("synth"), rate);
  // Cutoffs are checked against the synth rate only when the synth is the source.
  if (count == 1)
    synth_rate = rate;
  return s;
}

// ---------------------------------------------------------------------------
// Stages: `type` picks the kind, whose schema gives the other keys and reads them.

// Stage keys that belong to another stage type get a message that says so.
std::string stage_key_hint(const StageKind& kind, std::string_view name) {
  for (const StageKind& other : stage_kinds()) {
    if (other.type == kind.type)
      continue;
    for (const Key& k : other.schema().keys) {
      if (k.name == name) {
        return "'" + std::string(name) + "' does not apply to a " + std::string(kind.type.name()) +
               " stage, it is a " + std::string(other.type.name()) + " setting";
      }
    }
  }
  return {};
}

// With its type unknown, a stage may have any kind's keys: each name once
// (kinds may share one), in registry order.
std::vector<const Key*> any_stage_keys() {
  std::vector<const Key*> keys = keys_of({kStageKeys});
  for (const StageKind& kind : stage_kinds()) {
    for (const Key& k : kind.schema().keys) {
      const bool seen =
          std::any_of(keys.begin(), keys.end(), [&](const Key* o) { return o->name == k.name; });
      if (!seen)
        keys.push_back(&k);
    }
  }
  return keys;
}

bool valid_stage_name(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// `named`: the stage has a valid name of its own; `typed`: a valid type (so that
// its default name means something).
StageSpec parse_stage(Context& cx, const YAML::Node& node, const Path& path,
                      std::optional<double> rate, bool rate_changed, bool& named, bool& typed) {
  StageSpec s;
  named = false;
  typed = false;
  if (!node.IsMap()) {
    cx.error(node, path,
             describe(node) + " is not a stage (expected a mapping with type: " +
                 join(stage_type_names(), " | ") + ")");
    return s;
  }
  if (!node.Mark().is_null())
    s.line = node.Mark().line + 1;
  // The type decides which other keys are allowed, so peek at it first; the
  // MapReader below reports a bad or missing type.
  const StageKind* kind = nullptr;
  if (const YAML::Node t = node["type"]; t && t.IsScalar())
    kind = find_stage_kind(t.Scalar());
  std::vector<const Key*> keys =
      kind ? keys_of({kStageKeys, kind->schema().keys}) : any_stage_keys();
  ForeignKeyHint hint;
  if (kind)
    hint = [kind](std::string_view name) { return stage_key_hint(*kind, name); };
  MapReader r(cx, node, path, std::move(keys), hint);
  if (auto t = r.choice_index("type")) {
    s.type = stage_kinds()[*t].type;
    typed = true;
  }
  if (auto n = r.string("name")) {
    if (!valid_stage_name(*n)) {
      r.error("name",
              "'" + *n + "' is not a valid stage name (expected " + expected(r.decl("name")) + ")");
    } else {
      s.name = *n;
      named = true;
    }
  }
  if (!kind)
    return s;
  if (const StageSchema& schema = kind->schema(); schema.read) {
    schema.read(r, StageReadContext{cx, rate, rate_changed}, s);
  }
  return s;
}

std::vector<StageSpec> parse_stages(Context& cx, const YAML::Node& node, const Path& path,
                                    std::optional<double> rate) {
  std::vector<StageSpec> stages;
  if (!node.IsSequence()) {
    cx.error(node, path,
             describe(node) + " is not a list (expected a list of stages, each "
                              "a mapping with a type)");
    return stages;
  }
  struct Owner {
    std::size_t index;
    bool named;
  };
  std::map<std::string, Owner, std::less<>> owners;
  std::size_t i = 0;
  bool rate_changed = false;
  for (const YAML::Node& item : node) {
    const Path p = path / i;
    bool named = false;
    bool typed = false;
    StageSpec s = parse_stage(cx, item, p, rate, rate_changed, named, typed);
    // A stage that changes the rate (resample) changes what later stages'
    // cutoffs are checked against.
    if (typed) {
      const StageSchema& schema = stage_kind(s.type).schema();
      if (schema.rate_after != nullptr) {
        rate = schema.rate_after(s, rate);
        rate_changed = true;
      }
    }
    if (!named)
      s.name = std::string(s.type.name()) + std::to_string(i);
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
  if (r.has("file"))
    s.file = r.string("file");
  if (auto v = r.choice<SampleFormat>("format"))
    s.format = *v;
  if (auto v = r.choice<SinkType>("type"))
    s.type = *v;
  if (auto v = r.number("quality"))
    s.quality = *v;
  if (s.file && *s.file == "-" && !s.type)
    cx.error(r.key_node("file"), r.path("file"),
             "'-' is standard output and needs its container (expected sink.type: wav, raw, au, "
             "flac or caf)");
  return s;
}

StatsSpec parse_stats(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kStatsKeys}));
  StatsSpec s;
  if (r.has("json"))
    s.json = r.string("json");
  if (r.has("csv"))
    s.csv = r.string("csv");
  return s;
}

std::vector<int> parse_devices(Context& cx, const YAML::Node& v, const Path& p) {
  std::vector<int> out;
  if (v.IsScalar()) {
    if (auto d = read_integer(cx, v, p, kDeviceValue))
      out.push_back(static_cast<int>(*d));
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
    if (!d)
      continue;
    if (std::find(out.begin(), out.end(), *d) != out.end()) {
      cx.error(item, ip,
               "device " + std::to_string(*d) + " is listed twice (expected each device once)");
      continue;
    }
    out.push_back(static_cast<int>(*d));
  }
  return out;
}

ExecutionSpec parse_execution(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kExecutionKeys}));
  ExecutionSpec e;
  if (auto v = r.choice<BackendKind>("backend"))
    e.backend = *v;
  if (auto v = r.integer("chunk_frames"))
    e.chunk_frames = *v;
  if (auto v = r.int32("streams"))
    e.streams = *v;
  if (auto v = r.int32("threads"))
    e.threads = *v;
  if (r.has("device"))
    e.devices = parse_devices(cx, r.value("device"), r.path("device"));
  if (auto v = r.number("latency_ms"))
    e.latency_ms = *v;
  if (auto v = r.boolean("busy_poll"))
    e.busy_poll = *v;
  if (auto v = r.boolean("redundant"))
    e.redundant = *v;
  return e;
}

BatchSpec parse_batch(Context& cx, const YAML::Node& node, const Path& path) {
  MapReader r(cx, node, path, keys_of({kBatchKeys}));
  BatchSpec b;
  if (r.has("inputs")) {
    const YAML::Node v = r.value("inputs");
    const Path p = r.path("inputs");
    if (v.IsScalar()) {
      if (auto s = read_string(cx, v, p, kInputValue))
        b.inputs.push_back(*s);
    } else if (v.IsSequence()) {
      std::size_t i = 0;
      for (const YAML::Node& item : v) {
        if (auto s = read_string(cx, item, p / i, kInputValue))
          b.inputs.push_back(*s);
        ++i;
      }
    } else {
      cx.error(v, p,
               describe(v) + " is not a list of inputs (expected " + expected(r.decl("inputs")) +
                   ")");
    }
  }
  if (auto v = r.string("out_dir"))
    b.out_dir = *v;
  if (auto v = r.boolean("keep_going"))
    b.keep_going = *v;
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
      if (k->name == "source")
        k = &kOptionalSource;
  MapReader r(cx, root, Path{}, std::move(root_keys));
  if (!r.ok())
    return c;
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
  if (r.has("source"))
    c.source = parse_source(cx, r.value("source"), r.path("source"), synth_rate);
  if (r.has("stages"))
    c.stages = parse_stages(cx, r.value("stages"), r.path("stages"), synth_rate);
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

// A '|' inside a markdown table cell must be escaped.
std::string markdown_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += '\\';
    out += c;
  }
  return out;
}

// One table of the reference.
void append_section(std::string& out, std::string_view path, std::string_view title,
                    std::span<const Key> keys) {
  out += path.empty() ? std::string("### Top level") : "### `" + std::string(path) + "`";
  if (!title.empty() && !path.empty())
    out += " (" + std::string(title) + ")";
  out += "\n\n| key | type | default | description |\n|---|---|---|---|\n";
  for (const Key& k : keys) {
    std::string key_path = std::string(path) + (path.empty() ? "" : ".") + std::string(k.name);
    std::string type = expected(k);
    if (k.type == Type::section)
      type = "mapping";
    std::string def = k.is_required            ? "required"
                      : k.default_text.empty() ? "-"
                                               : "`" + std::string(k.default_text) + "`";
    out += "| `" + key_path + "` | " + markdown_cell(type) + " | " + def + " | " +
           markdown_cell(k.description) + " |\n";
  }
  out += "\n";
}

} // namespace

std::string config_reference() {
  std::string out;
  for (const Section& s : kSectionsBeforeStages)
    append_section(out, s.path, s.title, s.keys);
  out += "### Stage kinds\n\n| `type` | what it does |\n|---|---|\n";
  for (const StageKind& kind : stage_kinds())
    out += "| `" + std::string(kind.type.name()) + "` | " + markdown_cell(kind.summary) + " |\n";
  out += "\n";
  for (const StageKind& kind : stage_kinds()) {
    const StageSchema& schema = kind.schema();
    // A kind without keys of its own (metrics) has nothing to tabulate.
    if (!schema.keys.empty()) {
      append_section(out, "stages[]", "type: " + std::string(kind.type.name()), schema.keys);
    }
    for (const Section& s : schema.sections)
      append_section(out, s.path, s.title, s.keys);
  }
  for (const Section& s : kSectionsAfterStages)
    append_section(out, s.path, s.title, s.keys);
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
    cx.error(root, Path{},
             "the config is " + describe(root) +
                 " (expected a mapping with version, source and stages)");
    cx.throw_if_any();
  }
  for (const std::string& o : overrides)
    apply_override(cx, root, o);
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
  if (!in)
    throw io_error(path + ": cannot read config (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw io_error(path + ": cannot read config: read error");
  return parse_config(text.str(), path, overrides, use);
}

} // namespace sigstream
