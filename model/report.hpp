#pragma once
// What a run reports (SPEC §4's statistics, before they are JSON): per
// stage, per metrics block and chunk, the spectra, verification, live
// latency and the excerpt for figures. Plain data, filled by the engine
// (pipeline/pipeline.hpp), written by io/stats_writer and read by the stage
// kinds for their own fields (StageKind::stats).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/channel_metrics.hpp"
#include "core/kind_data.hpp"
#include "kernels/cpu/response.hpp"
#include "model/loudness_report.hpp"
#include "model/stage_type.hpp"

namespace sigstream {

struct ChunkMetricsRow {
  std::int64_t index = 0;
  std::int64_t start = 0;
  std::int64_t frames = 0;
  std::vector<ChannelMetrics> channels;
};

// A metrics block's spectrum (SPEC §8): Welch's one-sided PSD per channel.
struct SpectrumReport {
  int nfft = 0;
  int overlap_frames = 0; // nfft - hop
  std::string window;
  double sample_rate = 0.0;  // the block's own rate
  std::int64_t segments = 0; // 0: the signal is shorter than nfft (psd all zero, null in the JSON)
  std::vector<double> freq_hz;
  std::vector<std::vector<double>> psd; // [channel][bin], units^2/Hz
};

struct MetricsReport {
  std::string name;
  std::vector<ChannelMetrics> totals;
  std::vector<ChunkMetricsRow> chunks;
  // False after a rate change: the source has other frames there, so
  // dot_input and correlation_input are undefined (null in the JSON).
  bool paired = true;
  std::optional<SpectrumReport> spectrum = std::nullopt; // a block that asked for one
  std::optional<LoudnessReport> loudness = std::nullopt; // a block that asked for it
};

struct StageReport {
  std::string name;
  StageType type; // the kind (stages/<kind>/spec.hpp), by name
  // The kind's plan as it ran (stages/<kind>/spec.hpp), for its statistics
  // (StageKind::stats): stage.as<FirPlan>().
  KindData params;
  std::string detail;
  std::int64_t up = 1, down = 1; // the rate change (1/1 but for resample)
  double rate_out = 0.0;         // the rate after the stage
  // fir and resample: the filter's response (the resampler's at its
  // up-sampled rate, divided by up: unity pass band), for figures.
  std::optional<kernels::cpu::FilterResponse> response;
  template <class T> [[nodiscard]] const T& as() const { return params.get<T>(); }
  template <class T> [[nodiscard]] T& as() { return params.get<T>(); }
};

struct VerificationReport {
  bool ran = false;
  double rel_l2_error = 0.0;
  double max_abs_error = 0.0;
  double tolerance = 0.0;
  bool passed = true;
};

// Live mode's added latency (SPEC §6), in ms.
struct LatencyReport {
  double target = 0.0, p50 = 0.0, p99 = 0.0, max = 0.0;
  std::int64_t late_chunks = 0;
  std::int64_t chunks = 0;
  std::int64_t block_frames = 0;
  double compute_p99 = 0.0, compute_max = 0.0; // of it, from the read to the output ready to write
  // execution.redundant: per lane, the blocks it wrote, and the blocks whose
  // result from it came over the target while the other lane had written
  // them (the stalls the other lane covered). Empty with one lane.
  struct Lane {
    std::int64_t written = 0, late_covered = 0;
  };
  std::vector<Lane> lanes;
};

// A short excerpt of the source and of the output over the same stretch of
// time (SPEC §8's before/after waveforms), planar [channel][frame], as the
// samples the stages saw (source) and the samples written (output, after
// quantization).
struct ExcerptReport {
  std::int64_t source_start = 0, output_start = 0; // first frame, each in its own rate
  double source_rate = 0.0, output_rate = 0.0;
  std::vector<std::vector<float>> source, output;
};

struct RunReport {
  std::string input_path, input_format;
  double sample_rate = 0.0;
  int channels = 0;
  std::int64_t input_frames = 0;
  std::string output_path, output_format;
  double output_sample_rate = 0.0; // differs from sample_rate after a resample stage
  int output_channels = 0;         // differs from channels after a mix stage
  std::int64_t output_frames = 0;
  std::int64_t clipped_samples = 0;
  std::string backend, device;
  std::int64_t chunk_frames = 0;
  int streams = 0;
  int threads = 0;
  std::vector<StageReport> stages;
  std::vector<MetricsReport> metrics;
  double wall_s = 0.0;
  double setup_s = 0.0; // opening the source, planning, backend start (device init)
  // Where a run's time went (the batch's profile, SIGSTREAM_TRACE): seconds the
  // reader spent reading and assembling blocks, the writer writing audio, and
  // committing the outputs; the backend's release is measured by the caller.
  double read_s = 0.0;
  double write_s = 0.0;
  double commit_s = 0.0;
  std::vector<double> stage_ms; // per stage (same order as stages), may be empty
  VerificationReport verification;
  std::optional<LatencyReport> latency; // live mode only
  std::optional<ExcerptReport> excerpt; // the chunk flow, when the signal reaches the excerpt
};

} // namespace sigstream
