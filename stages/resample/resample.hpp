#pragma once
// The resample stage kind (SPEC §7): a rational rate change by up/down with
// scipy.signal.resample_poly's filter (firwin of 2·h·max(up, down) + 1 taps,
// cutoff 1/max(up, down) of Nyquist, the window as given, times up) and its
// zero-phase alignment, ceil(N·up/down) frames out. Direct polyphase on both
// backends (kernels/cpu/resample.hpp, kernels/cuda/resample.cuh): the
// zero-stuffed samples are never evaluated, and both give the same bits.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "stages/stage.hpp"

namespace sigstream {

// The largest reduced up or down (K = 2·h·max + 1 taps stays below ~82k at h = 10).
inline constexpr std::int64_t kMaxResampleFactor = 4096;

// The longest half-length per phase (K = 2·h·max(up, down) + 1): longer sums
// in float32 leave SPEC §3's 1e-5.
inline constexpr int kMaxHalfTapsPerPhase = 64;

// up/down in lowest terms, and whether they are within kMaxResampleFactor:
// the one rule the stage (plan_resample) and Python's resample apply, each
// in its own words (a stage's names its rates).
struct ReducedRatio {
  std::int64_t up = 1;
  std::int64_t down = 1;
  [[nodiscard]] bool within_limit() const noexcept {
    return up <= kMaxResampleFactor && down <= kMaxResampleFactor;
  }
};
[[nodiscard]] ReducedRatio reduce_ratio(std::int64_t up, std::int64_t down) noexcept;

// Its YAML keys and their reader (schema.cpp; pipeline/config/stage_schema.hpp).
[[nodiscard]] const StageSchema& resample_schema();

// up/down (reduced), the taps and the window (stages/resample/plan.cpp).
// Throws Error(config) naming the stage for a ratio it cannot realise.
void plan_resample(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out);
std::unique_ptr<const CpuStageStep> make_resample_cpu_step(const PlannedStage& stage);
StatFields resample_stats(const StageReport& stage); // up, down, sample_rate, taps, design
// to_hz or up/down, the window and the taps per phase (a batch's fingerprint).
void resample_facts(const StageSpec& spec, std::ostream& out);
// The polyphase sum: ~K/up taps an output frame, at the direct kernel's rate.
double resample_cpu_ns_per_frame(const PlannedStage& stage, std::int64_t frames_per_call);
// The same sum on CUDA, at its direct FIR kernel's rate (fir_cuda_fma_per_ns).
double resample_cuda_ns_per_frame(const PlannedStage& stage, std::int64_t frames_per_call);
// The anti-alias filter's response at the up-sampled rate, divided by up.
std::optional<kernels::cpu::FilterResponse> resample_response(const PlannedStage& stage,
                                                              double rate_in);
// resample_poly's filter for a reduced up/down: firwin(2·h·max(up, down) + 1,
// 1/max(up, down) of Nyquist, window) times up, h = half_taps_per_phase;
// {1} when up = down = 1. Throws the design's Error for a bad window.
[[nodiscard]] std::vector<double> resample_filter(std::int64_t up, std::int64_t down,
                                                  int half_taps_per_phase,
                                                  const WindowSpec& window);

} // namespace sigstream
