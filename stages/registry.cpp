// The stage kinds, in the order the README documents them. Each entry points
// at its kind's own unit (stages/<kind>/); nothing else here knows a kind.
#include "stages/registry.hpp"

#include <cstddef>
#include <iterator>
#include <string>

#include "core/error.hpp"
#include "stages/fir/fir.hpp"
#include "stages/fir/spec.hpp"
#include "stages/gain/gain.hpp"
#include "stages/gain/spec.hpp"
#include "stages/iir/iir.hpp"
#include "stages/iir/spec.hpp"
#include "stages/metrics/metrics.hpp"
#include "stages/metrics/spec.hpp"
#include "stages/mix/mix.hpp"
#include "stages/mix/spec.hpp"
#include "stages/normalize/normalize.hpp"
#include "stages/normalize/spec.hpp"
#include "stages/resample/resample.hpp"
#include "stages/resample/spec.hpp"

namespace sigstream {
namespace {

constexpr StageKind kKinds[] = {
    {.type = kFirType,
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
     .cuda_ns_per_frame = &fir_cuda_ns_per_frame,
     .response = &fir_response,
     .facts = &fir_facts,
     .files = &fir_files},
    {.type = kGainType,
     .summary = "Multiplies every sample by a constant factor, given in dB or linear.",
     .observer = false,
     .schema = &gain_schema,
     .plan = &plan_gain,
     .cpu_step = &make_gain_cpu_step,
     .stats = &gain_stats,
     .facts = &gain_facts},
    {.type = kNormalizeType,
     .summary = "One gain for the whole signal, from a first pass over it: to an integrated "
                "loudness (LUFS), a sample peak or an RMS level, capped by the (true) peak. Files "
                "and batches.",
     .observer = false,
     .schema = &normalize_schema,
     .plan = &plan_normalize,
     .cpu_step = &make_normalize_cpu_step,
     .stats = &normalize_stats,
     .facts = &normalize_facts,
     .first_pass = &normalize_first_pass,
     .measured = &normalize_measured},
    {.type = kMetricsType,
     .summary = "Measures the signal at this point of the chain (energy, RMS, peak, mean, "
                "correlation with the source) and passes it on unchanged.",
     .observer = true,
     .schema = &metrics_schema,
     .plan = &plan_metrics,
     .cpu_step = nullptr,
     .live_op = &make_metrics_live_op,
     .facts = &metrics_facts},
    {.type = kResampleType,
     .summary = "Changes the sample rate by a rational factor, as scipy.signal.resample_poly "
                "(polyphase, Kaiser 5.0, zero-phase).",
     .observer = false,
     .schema = &resample_schema,
     .plan = &plan_resample,
     .cpu_step = &make_resample_cpu_step,
     .stats = &resample_stats,
     .cpu_ns_per_frame = &resample_cpu_ns_per_frame,
     .cuda_ns_per_frame = &resample_cuda_ns_per_frame,
     .response = &resample_response,
     .facts = &resample_facts},
    {.type = kMixType,
     .summary = "Mixes channels into a new count: a gain matrix, a preset (mono, 5.1-stereo) or "
                "a selection of channels.",
     .observer = false,
     .schema = &mix_schema,
     .plan = &plan_mix,
     .cpu_step = &make_mix_cpu_step,
     .stats = &mix_stats,
     .facts = &mix_facts},
    {.type = kIirType,
     .summary = "IIR filter: second-order sections (scipy.signal.sosfilt), inline, from a file, "
                "or an RBJ cookbook biquad; its state runs through the whole signal.",
     .observer = false,
     .schema = &iir_schema,
     .plan = &plan_iir,
     .cpu_step = &make_iir_cpu_step,
     .stats = &iir_stats,
     .response = &iir_response,
     .facts = &iir_facts,
     .files = &iir_files},
};

// Names are keys: no two rows share one.
constexpr bool names_unique() {
  for (std::size_t i = 0; i < std::size(kKinds); ++i)
    for (std::size_t j = i + 1; j < std::size(kKinds); ++j)
      if (kKinds[i].type == kKinds[j].type || kKinds[i].type.empty())
        return false;
  return true;
}
static_assert(names_unique(), "each kKinds row needs its own, non-empty StageType");

} // namespace

std::span<const StageKind> stage_kinds() noexcept {
  return kKinds;
}

const StageKind* find_stage_kind(std::string_view name) noexcept {
  for (const StageKind& k : kKinds)
    if (k.type.name() == name)
      return &k;
  return nullptr;
}

const StageKind& stage_kind(StageType type) {
  if (const StageKind* k = find_stage_kind(type.name()))
    return *k;
  throw internal_error("no stage kind named '" + std::string(to_string(type)) + "'");
}

} // namespace sigstream
