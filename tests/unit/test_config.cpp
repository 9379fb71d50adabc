// The YAML loader: valid configs, defaults, --set overrides, and every negative
// case in configs/invalid/ (each names the substrings its message must hold and
// the line it must point at).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/config.hpp"
#include "stages/fir/spec.hpp"
#include "stages/gain/spec.hpp"
#include "stages/metrics/spec.hpp"

namespace sigstream {
namespace {

namespace fs = std::filesystem;

fs::path source_dir() {
  return fs::path(SIGSTREAM_SOURCE_DIR);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The message of the config error that parsing `text` must raise.
std::string config_error_of(const std::string& text, const std::vector<std::string>& overrides = {},
                            const std::string& origin = "test.yaml") {
  try {
    (void)parse_config(text, origin, overrides);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::config) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return {};
}

std::size_t count_lines(const std::string& s) {
  return s.empty() ? 0 : static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) + 1;
}

const char* const kMinimal = "version: 1\nsource: {file: in.wav}\n";

TEST(Config, FilterFileExample) {
  const Config c = load_config((source_dir() / "configs/examples/filter_file.yaml").string());
  ASSERT_TRUE(c.source.file);
  EXPECT_FALSE(c.source.synth);
  ASSERT_EQ(c.stages.size(), 3U);
  EXPECT_EQ(c.stages[0].type, kFirType);
  ASSERT_TRUE(c.stages[0].as<FirSpec>().design);
  EXPECT_EQ(c.stages[0].as<FirSpec>().design->kind, FilterKind::lowpass);
  EXPECT_EQ(c.stages[0].as<FirSpec>().design->cutoff_hz, std::vector<double>{3000.0});
  EXPECT_EQ(c.stages[1].type, kGainType);
  EXPECT_DOUBLE_EQ(c.stages[1].as<GainSpec>().linear, std::pow(10.0, -3.0 / 20.0));
  EXPECT_EQ(c.stages[2].type, kMetricsType);
  EXPECT_EQ(c.sink.format, SampleFormat::pcm16);
  ASSERT_TRUE(c.sink.file);
  EXPECT_EQ(*c.sink.file, "out/filtered.wav");
}

TEST(Config, CascadeExample) {
  const Config c = load_config((source_dir() / "configs/examples/cascade.yaml").string());
  ASSERT_TRUE(c.source.synth);
  const SynthSpec& s = *c.source.synth;
  EXPECT_EQ(s.sample_rate, 48000.0);
  EXPECT_EQ(s.frames, 240000);
  EXPECT_EQ(s.channels, 2);
  ASSERT_EQ(s.tones.size(), 3U);
  EXPECT_FALSE(s.tones[0].channel);
  EXPECT_EQ(s.tones[2].channel, 1);
  ASSERT_TRUE(s.noise);
  EXPECT_EQ(s.noise->kind, NoiseKind::uniform);
  EXPECT_EQ(s.noise->seed, 7U);

  std::vector<std::string> names;
  for (const StageSpec& st : c.stages)
    names.push_back(st.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"input", "highpass", "notch", "gain3", "after_filters"}));
  const DesignSpec& hp = *c.stages[1].as<FirSpec>().design;
  EXPECT_EQ(hp.kind, FilterKind::highpass);
  EXPECT_EQ(hp.taps, 1001);
  EXPECT_EQ(hp.window.kind, WindowKind::kaiser);
  EXPECT_EQ(hp.window.beta, 8.6);
  EXPECT_EQ(c.stages[1].as<FirSpec>().mode, FirMode::same);
  const DesignSpec& bs = *c.stages[2].as<FirSpec>().design;
  EXPECT_EQ(bs.kind, FilterKind::bandstop);
  EXPECT_EQ(bs.cutoff_hz, (std::vector<double>{950.0, 1050.0}));
  // window: kaiser + beta: means the same as "kaiser:8.6".
  EXPECT_EQ(bs.window.kind, WindowKind::kaiser);
  EXPECT_EQ(bs.window.beta, 8.6);
  EXPECT_EQ(c.stages[2].as<FirSpec>().mode, FirMode::same);
  EXPECT_EQ(c.stages[2].as<FirSpec>().method, FirMethod::fft);
  EXPECT_EQ(c.stages[3].as<GainSpec>().linear, 1.5);
  EXPECT_EQ(c.stats.json.value_or(""), "out/cascade_stats.json");
  EXPECT_EQ(c.stats.csv.value_or(""), "out/cascade_chunks.csv");
  EXPECT_EQ(c.sink.format, SampleFormat::pcm24);
}

TEST(Config, BatchExample) {
  const Config c = load_config((source_dir() / "configs/examples/batch.yaml").string());
  EXPECT_EQ(c.batch.inputs, std::vector<std::string>{"data/*.wav"});
  EXPECT_EQ(c.batch.out_dir, "out/batch");
  EXPECT_TRUE(c.batch.keep_going);
  EXPECT_TRUE(c.execution.devices.empty()); // every GPU
  EXPECT_EQ(c.execution.streams, 2);
  EXPECT_EQ(c.stages[0].as<FirSpec>().design->window.kind, WindowKind::blackman);
}

TEST(Config, DemoParsesFromFileAndBuiltIn) {
  const Config file = load_config((source_dir() / "configs/demo.yaml").string());
  const Config built_in = parse_config(demo_config_text(), "<demo>");
  EXPECT_EQ(built_in.origin, "<demo>");
  ASSERT_TRUE(built_in.source.synth);
  EXPECT_EQ(built_in.source.synth->frames, 160000);
  EXPECT_EQ(built_in.stages.size(), file.stages.size());
  EXPECT_EQ(built_in.stages[1].name, "lowpass");
  EXPECT_EQ(built_in.stages[1].as<FirSpec>().mode, FirMode::same);
}

// The key tables' defaults must agree with the struct defaults in config.hpp.
TEST(Config, DefaultsMatchTheHeader) {
  const Config c =
      parse_config(std::string(kMinimal) + "stages:\n"
                                           "  - type: fir\n"
                                           "    design: {kind: lowpass, cutoff_hz: 100}\n",
                   "min.yaml");
  EXPECT_EQ(c.version, 1);
  EXPECT_EQ(c.origin, "min.yaml");
  const ExecutionSpec e;
  EXPECT_EQ(c.execution.backend, e.backend);
  EXPECT_EQ(c.execution.chunk_frames, e.chunk_frames);
  EXPECT_EQ(c.execution.streams, e.streams);
  EXPECT_EQ(c.execution.threads, e.threads);
  EXPECT_TRUE(c.execution.devices.empty());
  const SinkSpec sink;
  EXPECT_FALSE(c.sink.file);
  EXPECT_EQ(c.sink.format, sink.format);
  EXPECT_FALSE(c.stats.json);
  EXPECT_FALSE(c.stats.csv);
  const BatchSpec b;
  EXPECT_EQ(c.batch.out_dir, b.out_dir);
  EXPECT_EQ(c.batch.keep_going, b.keep_going);
  EXPECT_TRUE(c.batch.inputs.empty());
  const FirSpec f;
  EXPECT_EQ(c.stages[0].as<FirSpec>().mode, f.mode);
  EXPECT_EQ(c.stages[0].as<FirSpec>().method, f.method);
  const DesignSpec d;
  EXPECT_EQ(c.stages[0].as<FirSpec>().design->taps, d.taps);
  EXPECT_EQ(c.stages[0].as<FirSpec>().design->window.kind, d.window.kind);

  const Config s =
      parse_config("version: 1\nsource:\n  synth:\n    frames: 10\n    tones: [{freq_hz: 5}]\n"
                   "    noise: {}\n",
                   "synth.yaml");
  const SynthSpec synth;
  EXPECT_EQ(s.source.synth->sample_rate, synth.sample_rate);
  EXPECT_EQ(s.source.synth->channels, synth.channels);
  const ToneSpec tone;
  EXPECT_EQ(s.source.synth->tones[0].amplitude, tone.amplitude);
  EXPECT_EQ(s.source.synth->tones[0].phase_deg, tone.phase_deg);
  const NoiseSpec noise;
  EXPECT_EQ(s.source.synth->noise->kind, noise.kind);
  EXPECT_EQ(s.source.synth->noise->amplitude, noise.amplitude);
  EXPECT_EQ(s.source.synth->noise->seed, noise.seed);
  EXPECT_TRUE(s.stages.empty());
}

TEST(Config, DefaultStageNamesUseTheListIndex) {
  const Config c = parse_config(std::string(kMinimal) + "stages:\n"
                                                        "  - {type: fir, taps: [1]}\n"
                                                        "  - {type: gain, db: 0}\n"
                                                        "  - type: metrics\n"
                                                        "  - {type: metrics, name: after}\n",
                                "t.yaml");
  ASSERT_EQ(c.stages.size(), 4U);
  EXPECT_EQ(c.stages[0].name, "fir0");
  EXPECT_EQ(c.stages[1].name, "gain1");
  EXPECT_EQ(c.stages[2].name, "metrics2");
  EXPECT_EQ(c.stages[3].name, "after");
  EXPECT_EQ(c.stages[0].line, 4);
  EXPECT_EQ(c.stages[3].line, 7);
}

TEST(Config, GainInDecibelsIsConverted) {
  const auto gain = [](const std::string& setting) {
    return parse_config(std::string(kMinimal) + "stages:\n  - {type: gain, " + setting + "}\n",
                        "g.yaml")
        .stages[0]
        .as<GainSpec>()
        .linear;
  };
  EXPECT_EQ(gain("db: 0"), 1.0);
  EXPECT_DOUBLE_EQ(gain("db: -6"), std::pow(10.0, -6.0 / 20.0));
  EXPECT_DOUBLE_EQ(gain("db: 20"), 10.0);
  EXPECT_EQ(gain("linear: 0.5"), 0.5);
  EXPECT_EQ(gain("linear: -1"), -1.0);
}

TEST(Config, ScalarsFollowYamlTyping) {
  const Config c =
      parse_config(std::string(kMinimal) + "execution: {chunk_frames: 1_048_576, streams: 0x10}\n"
                                           "batch: {keep_going: no, inputs: one.wav}\n",
                   "t.yaml");
  EXPECT_EQ(c.execution.chunk_frames, 1048576);
  EXPECT_EQ(c.execution.streams, 16);
  EXPECT_FALSE(c.batch.keep_going);
  EXPECT_EQ(c.batch.inputs, std::vector<std::string>{"one.wav"});
  EXPECT_NE(config_error_of(std::string(kMinimal) + "execution: {chunk_frames: 1e6}\n")
                .find("'1e6' is not an integer"),
            std::string::npos);
  const std::string huge = "execution: {chunk_frames: 99999999999999999999}\n";
  EXPECT_NE(config_error_of(std::string(kMinimal) + huge).find("too large"), std::string::npos);
  EXPECT_NE(config_error_of(std::string(kMinimal) + "execution: {device: [1, x]}\n")
                .find("execution.device.1: 'x' is not an integer"),
            std::string::npos);
}

TEST(Config, WindowSpellings) {
  const auto window = [](const std::string& setting) {
    return parse_config(std::string(kMinimal) +
                            "stages:\n  - type: fir\n    design: {kind: lowpass, cutoff_hz: 10, " +
                            setting + "}\n",
                        "w.yaml")
        .stages[0]
        .as<FirSpec>()
        .design->window;
  };
  EXPECT_EQ(window("window: hann").kind, WindowKind::hann);
  EXPECT_EQ(window("window: rectangular").kind, WindowKind::rectangular);
  EXPECT_EQ(window("window: 'kaiser:5'").beta, 5.0);
  EXPECT_EQ(window("window: kaiser, beta: 6.5").beta, 6.5);
  const std::string twice = config_error_of(
      std::string(kMinimal) +
      "stages:\n  - type: fir\n    design: {kind: lowpass, cutoff_hz: 10, window: 'kaiser:5', "
      "beta: 5}\n");
  EXPECT_NE(twice.find("beta is given twice"), std::string::npos) << twice;
  const std::string stray = config_error_of(
      std::string(kMinimal) +
      "stages:\n  - type: fir\n    design: {kind: lowpass, cutoff_hz: 10, beta: 5}\n");
  EXPECT_NE(stray.find("beta applies only to the kaiser window"), std::string::npos) << stray;
}

// A file source's Nyquist frequency is unknown until the planner opens the file.
TEST(Config, NyquistIsCheckedOnlyForSynthSources) {
  const std::string stages =
      "stages:\n  - type: fir\n    design: {kind: bandpass, cutoff_hz: [100, 30000]}\n";
  EXPECT_NO_THROW((void)parse_config(std::string(kMinimal) + stages, "t.yaml"));
  const std::string msg =
      config_error_of("version: 1\nsource:\n  synth: {sample_rate: 48000, frames: 10}\n" + stages);
  EXPECT_NE(msg.find("test.yaml:6:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("stages.0.design.cutoff_hz.1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Nyquist frequency 24000 Hz"), std::string::npos) << msg;
}

TEST(Config, DurationIsRoundedToFrames) {
  const Config c = parse_config(
      "version: 1\nsource:\n  synth: {sample_rate: 44100, duration_s: 0.50001}\n", "t.yaml");
  EXPECT_EQ(c.source.synth->frames, std::llround(0.50001 * 44100));
  const std::string msg =
      config_error_of("version: 1\nsource:\n  synth: {sample_rate: 8000, duration_s: 0.00001}\n");
  EXPECT_NE(msg.find("source.synth.duration_s"), std::string::npos) << msg;
  EXPECT_NE(msg.find("less than one frame"), std::string::npos) << msg;
}

TEST(Config, OverridesNestedListIndexAndNewKeys) {
  const std::string demo = read_text(source_dir() / "configs/demo.yaml");
  const Config c =
      parse_config(demo, "demo.yaml",
                   {"stages.1.design.cutoff_hz=3000", "execution.streams=8", "sink.file=out/x.wav",
                    "stages.1.mode=full", "execution.device=[0, 1]", "stats.csv=~"});
  EXPECT_EQ(c.stages[1].as<FirSpec>().design->cutoff_hz, std::vector<double>{3000.0});
  EXPECT_EQ(c.stages[1].as<FirSpec>().mode, FirMode::full);
  EXPECT_EQ(c.execution.streams, 8);
  EXPECT_EQ(c.sink.file.value_or(""), "out/x.wav");
  EXPECT_EQ(c.execution.devices, (std::vector<int>{0, 1}));
  EXPECT_FALSE(c.stats.csv); // a YAML null removes a setting
  EXPECT_TRUE(c.stats.json);

  // Keys and whole sections that the file lacks are created.
  const Config m = parse_config(kMinimal, "m.yaml",
                                {"sink.format=pcm24", "stages=[{type: gain, db: -6}]",
                                 "stages.0.name=quiet", "execution.chunk_frames=4096"});
  EXPECT_EQ(m.sink.format, SampleFormat::pcm24);
  ASSERT_EQ(m.stages.size(), 1U);
  EXPECT_EQ(m.stages[0].name, "quiet");
  EXPECT_EQ(m.execution.chunk_frames, 4096);

  // A band cutoff given as a YAML list; the last override of a key wins.
  const Config b =
      parse_config(std::string(kMinimal) + "stages:\n  - type: fir\n    design: {kind: lowpass, "
                                           "cutoff_hz: 100}\n",
                   "b.yaml",
                   {"stages.0.design.kind=bandpass", "stages.0.design.cutoff_hz=[300, 3000]",
                    "execution.streams=2", "execution.streams=3"});
  EXPECT_EQ(b.stages[0].as<FirSpec>().design->cutoff_hz, (std::vector<double>{300.0, 3000.0}));
  EXPECT_EQ(b.execution.streams, 3);
}

TEST(Config, OverrideErrors) {
  const std::string base = std::string(kMinimal) + "stages:\n  - type: metrics\n";
  const std::string past_end = config_error_of(base, {"stages.3.name=x"});
  EXPECT_NE(past_end.find("--set stages.3.name=x"), std::string::npos) << past_end;
  EXPECT_NE(past_end.find("past the end"), std::string::npos) << past_end;

  const std::string malformed = config_error_of(base, {"execution.streams"});
  EXPECT_NE(malformed.find("--set execution.streams: malformed override"), std::string::npos)
      << malformed;

  const std::string not_index = config_error_of(base, {"stages.first.name=x"});
  EXPECT_NE(not_index.find("is not an index"), std::string::npos) << not_index;

  const std::string into_scalar = config_error_of(base, {"version.x=1"});
  EXPECT_NE(into_scalar.find("--set version.x=1"), std::string::npos) << into_scalar;

  const std::string bad_yaml = config_error_of(base, {"execution.device=[0"});
  EXPECT_NE(bad_yaml.find("not valid YAML"), std::string::npos) << bad_yaml;

  // A bad value says where it came from instead of a (meaningless) line number.
  const std::string bad_value = config_error_of(base, {"execution.streams=0"});
  EXPECT_EQ(bad_value, "test.yaml: execution.streams: 0 is out of range (expected an integer >= 1) "
                       "(from --set execution.streams=0)");
  const std::string typo = config_error_of(base, {"execution.chunk_frame=10"});
  EXPECT_NE(typo.find("did you mean 'chunk_frames'?"), std::string::npos) << typo;
  EXPECT_NE(typo.find("(from --set execution.chunk_frame=10)"), std::string::npos) << typo;
  EXPECT_EQ(typo.rfind("test.yaml: execution.chunk_frame: ", 0), 0U) << typo;

  // Override problems and file problems are reported together.
  const std::string both =
      config_error_of(base + "execution: {streams: 0}\n", {"=1", "stages.0.mode=same"});
  EXPECT_EQ(count_lines(both), 3U) << both;
  EXPECT_NE(both.find("test.yaml:5:"), std::string::npos) << both;
}

TEST(Config, AllProblemsAreReportedTogetherInFileOrder) {
  const std::string msg = config_error_of("version: 1\n"                                 // 1
                                          "source: {file: in.wav}\n"                     // 2
                                          "stages:\n"                                    // 3
                                          "  - type: fir\n"                              // 4
                                          "    design: {kind: lowpass, cutoff_hz: -1}\n" // 5
                                          "    mode: casual\n"                           // 6
                                          "execution:\n"                                 // 7
                                          "  streams: 0\n"                               // 8
                                          "  chunk_frame: 10\n",                         // 9
                                          {}, "multi.yaml");
  ASSERT_EQ(count_lines(msg), 4U) << msg;
  std::istringstream lines(msg);
  std::string line;
  const char* const expected[] = {
      "multi.yaml:5:", "multi.yaml:6:", "multi.yaml:8:", "multi.yaml:9:"};
  for (const char* prefix : expected) {
    std::getline(lines, line);
    EXPECT_EQ(line.rfind(prefix, 0), 0U) << line;
  }
}

TEST(Config, SuggestionsIgnoreCaseAndSkipFarFetchedOnes) {
  EXPECT_NE(
      config_error_of(std::string(kMinimal) + "Execution: {}\n").find("did you mean 'execution'?"),
      std::string::npos);
  EXPECT_EQ(config_error_of(std::string(kMinimal) + "colour: red\n").find("did you mean"),
            std::string::npos);
}

TEST(Config, SyntaxErrorsAndNonMappingsAreConfigErrors) {
  const std::string syntax = config_error_of("version: 1\nsource: {file: [a\n", {}, "bad.yaml");
  EXPECT_EQ(syntax.rfind("bad.yaml:", 0), 0U) << syntax;
  EXPECT_NE(syntax.find("YAML syntax error"), std::string::npos) << syntax;
  // yaml-cpp 0.7 loops forever on a document that starts with ',' (LoadAll) or
  // silently reads it as empty (Load); both must be a plain syntax error.
  EXPECT_EQ(config_error_of(",\nversion: 1\n", {}, "c.yaml"),
            "c.yaml:1:1: YAML syntax error: unexpected ','");
  EXPECT_EQ(config_error_of("version: 1\n---\n,\n", {}, "c.yaml"),
            "c.yaml:3:1: YAML syntax error: unexpected ','");
  EXPECT_NE(config_error_of("").find("the config is empty"), std::string::npos);
  EXPECT_NE(config_error_of("- 1\n- 2\n").find("the config is a list"), std::string::npos);
  const std::string two = config_error_of(std::string(kMinimal) + "---\nversion: 1\n");
  EXPECT_NE(two.find("test.yaml:4:1: the file holds 2 YAML documents"), std::string::npos) << two;
}

TEST(Config, UnreadableFileIsAnIoError) {
  try {
    (void)load_config("/nonexistent/sigstream.yaml");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/sigstream.yaml"), std::string::npos);
  }
}

TEST(Config, ReferenceListsEveryKey) {
  const std::string ref = config_reference();
  for (const char* key :
       {"`version`", "`source.synth.tones[].channel`", "`stages[].design.cutoff_hz`",
        "`stages[].db`", "`execution.chunk_frames`", "`batch.keep_going`", "`1048576`",
        "`out/batch`"}) {
    EXPECT_NE(ref.find(key), std::string::npos) << key;
  }
}

// configs/invalid/*.yaml: "# expect: TEXT" lines name substrings of the message,
// "# line: N" the line the error must point at.
TEST(Config, EveryInvalidConfigIsRejectedWithItsMessageAndLine) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(source_dir() / "configs/invalid")) {
    if (entry.path().extension() == ".yaml")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 20U);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    std::vector<std::string> expects;
    int line = 0;
    std::istringstream text(read_text(file));
    for (std::string l; std::getline(text, l) && l.starts_with("#");) {
      if (l.starts_with("# expect: "))
        expects.push_back(l.substr(10));
      if (l.starts_with("# line: "))
        line = std::stoi(l.substr(8));
    }
    ASSERT_FALSE(expects.empty()) << "no '# expect:' line";
    ASSERT_GT(line, 0) << "no '# line:' line";
    try {
      (void)load_config(file.string());
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::config) << msg;
      for (const std::string& x : expects) {
        EXPECT_NE(msg.find(x), std::string::npos) << x << "\n" << msg;
      }
      const std::string where = file.filename().string() + ":" + std::to_string(line) + ":";
      EXPECT_NE(msg.find(where), std::string::npos) << where << "\n" << msg;
    }
  }
}

} // namespace
} // namespace sigstream
