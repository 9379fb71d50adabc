// The stage kinds, in the order the README documents them. Each entry points
// at its kind's own unit (stages/<kind>/); nothing else here knows a kind.
#include "stages/registry.hpp"

#include <cstddef>
#include <iterator>

#include "stages/fir/fir.hpp"
#include "stages/gain/gain.hpp"
#include "stages/metrics/metrics.hpp"
#include "stages/mix/mix.hpp"
#include "stages/resample/resample.hpp"

namespace sigstream {
namespace {

constexpr StageKind kKinds[] = {
    {.type = StageType::fir,
     .name = "fir",
     .summary = "FIR filter: windowed-sinc design, inline taps or a taps file; causal, same or "
                "full output.",
     .observer = false,
     .schema = &fir_schema,
     .plan = &plan_fir,
     .cpu_step = &make_fir_cpu_step,
     .live_kernel = &make_fir_live_kernel,
     .live_op = &make_fir_live_op,
     .stats = &fir_stats,
     .resolve = &fir_resolve,
     .cpu_ns_per_frame = &fir_cpu_ns_per_frame,
     .response = &fir_response,
     .facts = &fir_facts,
     .files = &fir_files},
    {.type = StageType::gain,
     .name = "gain",
     .summary = "Multiplies every sample by a constant factor, given in dB or linear.",
     .observer = false,
     .schema = &gain_schema,
     .plan = &plan_gain,
     .cpu_step = &make_gain_cpu_step,
     .live_kernel = nullptr,
     .live_op = &make_gain_live_op,
     .stats = &gain_stats,
     .facts = &gain_facts},
    {.type = StageType::metrics,
     .name = "metrics",
     .summary = "Measures the signal at this point of the chain (energy, RMS, peak, mean, "
                "correlation with the source) and passes it on unchanged.",
     .observer = true,
     .schema = &metrics_schema,
     .plan = &plan_metrics,
     .cpu_step = nullptr,
     .live_kernel = nullptr,
     .live_op = nullptr,
     .facts = &metrics_facts},
    {.type = StageType::resample,
     .name = "resample",
     .summary = "Changes the sample rate by a rational factor, as scipy.signal.resample_poly "
                "(polyphase, Kaiser 5.0, zero-phase).",
     .observer = false,
     .schema = &resample_schema,
     .plan = &plan_resample,
     .cpu_step = &make_resample_cpu_step,
     .live_kernel = nullptr,
     .live_op = &make_resample_live_op,
     .stats = &resample_stats,
     .cpu_ns_per_frame = &resample_cpu_ns_per_frame,
     .response = &resample_response,
     .facts = &resample_facts},
    {.type = StageType::mix,
     .name = "mix",
     .summary = "Mixes channels into a new count: a gain matrix, a preset (mono, 5.1-stereo) or "
                "a selection of channels.",
     .observer = false,
     .schema = &mix_schema,
     .plan = &plan_mix,
     .cpu_step = &make_mix_cpu_step,
     .live_kernel = nullptr,
     .live_op = &make_mix_live_op,
     .stats = &mix_stats,
     .facts = &mix_facts},
};

// stage_kind() indexes by the enum's value, so the table follows its order.
constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (static_cast<std::size_t>(kKinds[i].type) != i)
      return false;
  }
  return true;
}
static_assert(in_enum_order(), "kKinds must list every StageType once, in enum order");
static_assert(std::size(kKinds) == static_cast<std::size_t>(StageType::mix) + 1,
              "every StageType needs an entry in kKinds");

} // namespace

std::span<const StageKind> stage_kinds() noexcept {
  return kKinds;
}

const StageKind& stage_kind(StageType type) noexcept {
  return kKinds[static_cast<std::size_t>(type)];
}

} // namespace sigstream
