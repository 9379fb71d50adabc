// QA of the per-channel FIR (SPEC §11): taps as a list of lists and an
// audio taps file whose channel c filters input channel c, with responses
// of different lengths (zero-padded to the longest). Each output channel has
// the bits of a one-channel run of that channel with its own taps (a mix
// `select` picks it) and matches the float64 definition; direct and FFT, the
// three modes, chunkings, a stream of unknown length and live mode; a
// 1-channel taps file filters every channel; counts that fit neither are
// config errors naming the file, line, stage and both counts.
#include <gtest/gtest.h>

#include <sndfile.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pipeline/pipeline.hpp"
#include "stage_builders.hpp"
#include "stages/fir/spec.hpp"
#include "stages/mix/spec.hpp"
#include "stream_support.hpp"
#include "test_support.hpp"

namespace sigstream {
namespace {

StageSpec per_channel_fir(const std::string& name, std::vector<std::vector<double>> taps,
                          FirMode mode, FirMethod method) {
  StageSpec s;
  s.type = kFirType;
  s.name = name;
  s.as<FirSpec>().channel_taps = std::move(taps);
  s.as<FirSpec>().mode = mode;
  s.as<FirSpec>().method = method;
  return s;
}

StageSpec select_channel(int c) {
  StageSpec s;
  s.type = kMixType;
  s.name = "pick";
  s.as<MixSpec>().select = {c};
  return s;
}

// Three responses of different odd lengths.
std::vector<std::vector<double>> three_responses() {
  return {test::random_taps_unit_energy(31, 1), test::random_taps_unit_energy(7, 2),
          test::random_taps_unit_energy(63, 3)};
}

std::vector<double> padded(std::vector<double> h, std::size_t k) {
  h.resize(k, 0.0);
  return h;
}

// Channel c of an interleaved file.
std::vector<float> channel(const test::Audio& a, int c) {
  std::vector<float> out;
  for (std::int64_t i = 0; i < a.frames; ++i)
    out.push_back(a.samples[static_cast<std::size_t>(i * a.channels + c)]);
  return out;
}

struct Way {
  FirMode mode;
  FirMethod method;
};

class FirChannels : public ::testing::TestWithParam<Way> {};

TEST_P(FirChannels, EachChannelIsItsOwnFilterAndTheDefinition) {
  const auto [mode, method] = GetParam();
  test::TempDir dir;
  const auto taps = three_responses();
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(30011, 3, 4);
  c.execution.backend = BackendKind::cpu;
  c.sink.format = SampleFormat::float32;
  c.stages = {per_channel_fir("f", taps, mode, method), test::metrics_stage("m")};
  std::vector<unsigned char> first;
  test::Audio all;
  for (const std::int64_t chunk : {std::int64_t{1048576}, std::int64_t{4099}}) {
    c.execution.chunk_frames = chunk;
    c.sink.file = dir.file("all" + std::to_string(chunk) + ".wav");
    const RunReport r = run_pipeline(c, RunOptions{});
    EXPECT_EQ(r.stages[0].as<FirPlan>().channel_taps.size(), 3u);
    const std::vector<unsigned char> bytes = test::slurp_bytes(*c.sink.file);
    if (first.empty()) {
      first = bytes;
      all = test::read_audio(*c.sink.file);
    } else if (method == FirMethod::direct) {
      EXPECT_EQ(bytes, first) << "chunk " << chunk;
    }
  }
  ASSERT_EQ(all.channels, 3);
  const auto x = test::source_planes(*c.source.synth);
  for (int ch = 0; ch < 3; ++ch) {
    // Alone: the channel picked, then a one-channel FIR of its (padded) taps.
    Config one = c;
    one.execution.chunk_frames = 1048576;
    one.stages = {
        select_channel(ch),
        test::fir_stage("f", padded(taps[static_cast<std::size_t>(ch)], 63), mode, method)};
    one.sink.file = dir.file("one" + std::to_string(ch) + ".wav");
    run_pipeline(one, RunOptions{});
    const test::Audio a = test::read_audio(*one.sink.file);
    EXPECT_EQ(channel(all, ch), a.samples) << "channel " << ch;
    const std::vector<double> want = test::reference_fir(x[static_cast<std::size_t>(ch)],
                                                         taps[static_cast<std::size_t>(ch)], mode);
    // The padded response delays `same` by (63 - 1) / 2 - (K - 1) / 2 frames.
    const std::vector<double> want_padded = test::reference_fir(
        x[static_cast<std::size_t>(ch)], padded(taps[static_cast<std::size_t>(ch)], 63), mode);
    const std::vector<float> got = channel(all, ch);
    ASSERT_EQ(got.size(), want_padded.size());
    EXPECT_LT(test::rel_l2(want_padded.data(), got.data(), static_cast<std::int64_t>(got.size())),
              method == FirMethod::direct ? 1e-6 : 1e-5)
        << "channel " << ch;
    if (mode == FirMode::causal) { // causal: padding adds zeros after the response only
      EXPECT_LT(test::rel_l2(want.data(), got.data(), static_cast<std::int64_t>(got.size())), 1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ways, FirChannels,
                         ::testing::Values(Way{FirMode::causal, FirMethod::direct},
                                           Way{FirMode::same, FirMethod::direct},
                                           Way{FirMode::full, FirMethod::direct},
                                           Way{FirMode::causal, FirMethod::fft},
                                           Way{FirMode::full, FirMethod::fft}),
                         [](const auto& info) {
                           return std::string(to_string(info.param.mode)) + "_" +
                                  std::string(to_string(info.param.method));
                         });

// A float WAV of taps: channel c holds taps[c] (zero-padded).
void write_taps_wav(const std::string& path, const std::vector<std::vector<double>>& taps) {
  std::size_t k = 0;
  for (const auto& t : taps)
    k = std::max(k, t.size());
  std::vector<float> frames(k * taps.size(), 0.0f);
  for (std::size_t c = 0; c < taps.size(); ++c)
    for (std::size_t i = 0; i < taps[c].size(); ++i)
      frames[i * taps.size() + c] = static_cast<float>(taps[c][i]);
  test::write_audio(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 48000, static_cast<int>(taps.size()),
                    frames);
}

std::vector<std::vector<double>> as_float_values(std::vector<std::vector<double>> taps) {
  for (auto& t : taps)
    for (double& v : t)
      v = static_cast<float>(v);
  return taps;
}

TEST(FirChannelsFile, AnAudioTapsFileIsTheListOfLists) {
  test::TempDir dir;
  const auto taps = as_float_values(three_responses()); // what a float WAV holds
  write_taps_wav(dir.file("ir.wav"), taps);
  Config c;
  c.origin = "test";
  c.source.synth = test::noise_synth(20011, 3, 6);
  c.execution.backend = BackendKind::cpu;
  c.sink.format = SampleFormat::float32;
  StageSpec from_file;
  from_file.type = kFirType;
  from_file.name = "f";
  from_file.as<FirSpec>().taps_file = dir.file("ir.wav");
  from_file.as<FirSpec>().method = FirMethod::direct;
  c.stages = {from_file};
  c.sink.file = dir.file("file.wav");
  run_pipeline(c, RunOptions{});
  c.stages = {per_channel_fir("f", taps, FirMode::causal, FirMethod::direct)};
  c.sink.file = dir.file("inline.wav");
  run_pipeline(c, RunOptions{});
  EXPECT_EQ(test::read_audio(dir.file("file.wav")).samples,
            test::read_audio(dir.file("inline.wav")).samples);

  // A 1-channel file filters every channel, as FFmpeg's afir.
  write_taps_wav(dir.file("mono_ir.wav"), {taps[0]});
  from_file.as<FirSpec>().taps_file = dir.file("mono_ir.wav");
  c.stages = {from_file};
  c.sink.file = dir.file("mono_file.wav");
  run_pipeline(c, RunOptions{});
  c.stages = {test::fir_stage("f", taps[0], FirMode::causal, FirMethod::direct)};
  c.sink.file = dir.file("shared.wav");
  run_pipeline(c, RunOptions{});
  EXPECT_EQ(test::read_audio(dir.file("mono_file.wav")).samples,
            test::read_audio(dir.file("shared.wav")).samples);
}

TEST(FirChannelsFile, AStreamAndLiveModeGiveTheFilesBytes) {
  test::StreamCase s;
  s.name = "fir-channels";
  s.stages = {per_channel_fir(
                  "f", {test::random_taps_unit_energy(15, 7), test::random_taps_unit_energy(9, 8)},
                  FirMode::same, FirMethod::direct),
              test::metrics_stage("m")};
  s.frames = 30011;
  s.channels = 2;
  s.chunk_frames = 997;
  s.max_write = 913;
  const auto [file, stream] = test::file_and_stream_outputs(s, BackendKind::cpu, 12);
  EXPECT_EQ(file, stream);

  for (const FirMethod method : {FirMethod::direct, FirMethod::fft}) {
    test::TempDir dir;
    Config c;
    c.origin = "test";
    c.source.synth = test::noise_synth(20011, 3, 9);
    c.execution.backend = BackendKind::cpu;
    c.sink.format = SampleFormat::float32;
    c.stages = {per_channel_fir("f", three_responses(), FirMode::full, method)};
    c.sink.file = dir.file("file.wav");
    run_pipeline(c, RunOptions{});
    c.execution.latency_ms = 1.0;
    c.sink.file = dir.file("live.wav");
    run_pipeline(c, RunOptions{});
    const test::Audio a = test::read_audio(dir.file("file.wav"));
    const test::Audio b = test::read_audio(dir.file("live.wav"));
    ASSERT_EQ(a.frames, b.frames);
    ASSERT_EQ(a.channels, b.channels);
    if (method == FirMethod::direct) {
      EXPECT_EQ(a.samples, b.samples); // the file path's kernel: the same bits
    } else {                           // partitioned live: within SPEC §3's tolerance
      std::vector<double> want(a.samples.begin(), a.samples.end());
      EXPECT_LT(test::rel_l2(want.data(), b.samples.data(), static_cast<std::int64_t>(want.size())),
                1e-5);
    }
  }
}

std::string error_of(const std::string& fir_keys, int channels) {
  const std::string yaml = "version: 1\n"
                           "source:\n"
                           "  synth: {sample_rate: 48000, channels: " +
                           std::to_string(channels) +
                           ", frames: 1000, noise: {kind: uniform, amplitude: 0.1, seed: 1}}\n"
                           "stages:\n"
                           "  - type: fir\n"
                           "    name: room\n" +
                           fir_keys + "execution: {backend: cpu}\n";
  const std::optional<Error> e = test::pipeline_error(yaml, "fir.yaml");
  if (!e) {
    ADD_FAILURE() << "no error for\n" << fir_keys;
    return {};
  }
  EXPECT_EQ(e->kind(), ErrorKind::config) << e->what();
  return e->what();
}

TEST(FirChannelsFile, CountsThatFitNeitherAreConfigErrors) {
  test::TempDir dir;
  write_taps_wav(dir.file("ir3.wav"), three_responses());
  std::string m = error_of("    taps_file: " + dir.file("ir3.wav") + "\n", 2);
  EXPECT_NE(m.find("fir.yaml:5"), std::string::npos) << m;
  EXPECT_NE(m.find("stage 'room'"), std::string::npos) << m;
  EXPECT_NE(m.find("has 3 channels"), std::string::npos) << m;
  EXPECT_NE(m.find("the input has 2 channels"), std::string::npos) << m;
  m = error_of("    taps: [[1, 0.5], [0.25], [1]]\n", 4);
  EXPECT_NE(m.find("taps has 3 lists, the input has 4 channels"), std::string::npos) << m;
  m = error_of("    taps: [[1, 0.5], []]\n", 2);
  EXPECT_NE(m.find("fir.yaml:7"), std::string::npos) << m;
  EXPECT_NE(m.find("empty"), std::string::npos) << m;
  m = error_of("    taps: [[1, 0.5], 2]\n", 2);
  EXPECT_NE(m.find("not a list"), std::string::npos) << m;
  // Audio taps come in WAV, FLAC or AIFF: another container (CAF) is refused
  // before libsndfile parses it, and a broken WAV is not read as text.
  test::write_audio(dir.file("ir.caf"), SF_FORMAT_CAF | SF_FORMAT_FLOAT, 48000, 2,
                    std::vector<float>(64, 0.25f));
  m = error_of("    taps_file: " + dir.file("ir.caf") + "\n", 2);
  EXPECT_NE(m.find("WAV, FLAC or AIFF"), std::string::npos) << m;
  {
    std::ofstream broken(dir.file("broken.wav"), std::ios::binary);
    broken << "RIFF\x10\0\0\0WAVEjunk";
  }
  m = error_of("    taps_file: " + dir.file("broken.wav") + "\n", 2);
  EXPECT_NE(m.find("does not open"), std::string::npos) << m;
}

} // namespace
} // namespace sigstream
