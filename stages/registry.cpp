#include "stages/registry.hpp"

#include <array>

#include "stages/fir/fir.hpp"
#include "stages/gain/gain.hpp"
#include "stages/metrics/metrics.hpp"

namespace sigstream {

namespace {

const std::array<StageKind, 3> kKinds = {
    StageKind{StageType::fir, "fir", "FIR filter: a windowed-sinc design, inline taps or a taps file", false,
              nullptr, &plan_fir, &make_fir_cpu_step, &make_fir_live_kernel, &make_fir_live_op},
    StageKind{StageType::gain, "gain", "Multiply by a gain (dB or linear)", false, nullptr, &plan_gain,
              &make_gain_cpu_step, nullptr, &make_gain_live_op},
    StageKind{StageType::metrics, "metrics", "Measure the signal here (rms, peak, ...); it passes unchanged",
              true, nullptr, &plan_metrics, nullptr},
};

}  // namespace

std::span<const StageKind> stage_kinds() noexcept { return kKinds; }

const StageKind& stage_kind(StageType type) noexcept {
  for (const StageKind& k : kKinds)
    if (k.type == type) return k;
  return kKinds[0];  // unreachable: every StageType is listed
}

}  // namespace sigstream
