#pragma once
// Live mode (SPEC §6, execution.latency_ms): the signal runs through the
// stages in small blocks, each computed as soon as its input has arrived and
// written at once, on one thread, with no chunk halos: every FIR stage keeps
// its own history (direct) or frequency-domain delay line (partitioned, so
// the block length follows the latency target, not the filter length).
//
// Block: B = round(latency_ms x rate / 1000) frames (at least 1). A stage in
// `same` mode holds back its lookahead ((K-1)/2 frames) until the input it
// needs has come; `full` adds its tail at the end. Outputs are the samples of
// SPEC §3 exactly as on the file path: bit for bit with the direct method
// (the same kernel, the same order of operations), within 1e-6 relative with
// the partitioned one.
//
// Added latency of a block = time from the return of the read that brought
// its last input frame to the return of the write of its output; the run
// reports p50/p99/max and the blocks above the target ("late"), from a
// histogram of 10 µs bins (memory stays bounded however long the stream).
// Statistics keep totals; per-block rows go to the CSV as they come.
//
// execution.redundant: two threads ("lanes"), each with its own kernels and
// state, compute every block; the first to read a block shares it through a
// ring (a second of blocks), the first to finish it writes it, in order.
// Both spin. A lane whose CPU stalls falls behind and catches up while the
// other writes: a virtual machine's vCPU stall makes a block late only when
// it hits both lanes, or the one writing during its write. The output is the
// same as one lane's (every lane computes the same samples).
#include <chrono>
#include <optional>

#include "pipeline/backends/backend.hpp"
#include "pipeline/io/audio_sink.hpp"
#include "pipeline/io/source.hpp"
#include "pipeline/pipeline.hpp"

namespace sigstream {

// Frames per live block for `latency_ms` at `rate`.
[[nodiscard]] std::int64_t live_block_frames(double latency_ms, double rate) noexcept;

// The report of a run before it starts (input, output, stages, metrics
// blocks), shared by the chunk flow and live mode (pipeline.cpp).
RunReport new_report(const Source& source, const Config& config, const Plan& plan,
                     const std::optional<SinkFormat>& sink_format);

// The spectra of the metrics blocks that have one, from their Welch power
// sums (sums[slot], merged over the whole run), into report.metrics[slot].
void finish_spectra(const Plan& plan, const std::vector<SpectrumSums>& sums, RunReport& report);

// The part of run_pipeline that live mode runs instead of the chunk flow:
// `config` has execution.latency_ms set, `plan` was made with chunks of
// live_block_frames, the source is open and the outputs checked; `report`
// holds what is known before the run. Throws Error like run_pipeline.
RunReport run_live(const Config& config, const RunOptions& options, Source& source,
                   const Plan& plan, const std::optional<SinkFormat>& sink_format, RunReport report,
                   std::chrono::steady_clock::time_point t0);

} // namespace sigstream
