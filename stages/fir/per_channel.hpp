#pragma once
// A FIR with one response per channel (SPEC §11: a multi-channel taps file
// or a list of lists) runs as one single-channel FIR per channel: channel c's
// stage is the planned stage with channel c's taps, one channel in and out,
// and its steps are the kind's usual ones (direct or FFT on the CPU and on a
// lane, direct or partitioned live). Every response has the same length (the
// plan pads them), so the stage's geometry is the same for each channel.
#include <cstddef>
#include <memory>
#include <vector>

#include "stages/stage.hpp"

namespace sigstream {

// Whether the stage filters each channel with its own response.
[[nodiscard]] bool fir_per_channel(const PlannedStage& stage);
// Channel c's stage alone: its taps, one channel, no per-channel responses.
[[nodiscard]] PlannedStage fir_channel_stage(const PlannedStage& stage, std::size_t c);
// Each channel's stage, made once and kept where the steps made from them can
// refer to them (they hold references to their stage).
[[nodiscard]] std::vector<std::unique_ptr<const PlannedStage>>
fir_channel_stages(const PlannedStage& stage);

std::unique_ptr<const CpuStageStep> make_fir_per_channel_cpu_step(const PlannedStage& stage);
// Live: a kernel per channel (on the CPU; a GPU live kernel serves one
// response for all channels), and the op that runs each channel through its own.
std::unique_ptr<LiveKernel> make_fir_per_channel_live_kernel(const PlannedStage& stage,
                                                             const LiveContext& context);
// Null when `kernel` is not a per-channel one.
std::unique_ptr<LiveOp> make_fir_per_channel_live_op(LiveKernel* kernel, std::int64_t phase);

} // namespace sigstream
