#include "stages/metrics/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "core/error.hpp"
#include "model/config.hpp"
#include "model/plan.hpp"
#include "stages/design.hpp"
#include "stages/metrics/loudness.hpp"
#include "stages/metrics/spec.hpp"

namespace sigstream {

void plan_metrics(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out) {
  out.frames_out = where.frames_in;
  if (spec.as<MetricsSpec>().loudness) {
    out.as<MetricsPlan>().loudness = true;
    out.as<MetricsPlan>().loudness_rate = where.sample_rate;
    // libebur128's checks, now rather than at the first chunk.
    const LoudnessMeter probe(where.channels, where.sample_rate);
    // The GPU measures each chunk's frames on their own (any lane, any
    // order), and the CPU's workers each piece of a chunk, the K-weighting
    // started from rest this far before them (kernels/cuda/loudness.cuh,
    // Bs1770Meter::measure). Like a spectrum's, this look-back makes the
    // stages before the block compute that many more frames a chunk (and a
    // piece: pipeline/backends/cpu_backend.cpp).
    out.lookback = std::max(out.lookback, probe.meter().settle_frames());
  }
  const std::optional<SpectrumSpec>& asked = spec.as<MetricsSpec>().spectrum;
  if (!asked)
    return;
  const SpectrumSpec& sp = *asked;
  // scipy.signal.get_window(window, nfft) (fftbins=True, periodic): the
  // symmetric window one longer, less its last point.
  out.as<MetricsPlan>().spectrum_window = make_window(sp.window, sp.nfft + 1);
  out.as<MetricsPlan>().spectrum_window.pop_back();
  const int noverlap = static_cast<int>(std::floor(sp.nfft * sp.overlap));
  out.as<MetricsPlan>().spectrum_hop = sp.nfft - noverlap;
  out.as<MetricsPlan>().spectrum_rate = where.sample_rate;
  out.as<MetricsPlan>().spectrum_window_name = to_string(sp.window);
  out.lookback = std::max<std::int64_t>(out.lookback, sp.nfft - 1);
}

void metrics_facts(const StageSpec& spec, std::ostream& o) {
  if (const std::optional<SpectrumSpec>& sp = spec.as<MetricsSpec>().spectrum)
    o << ":spectrum:" << sp->nfft << ':' << sp->overlap << ':' << to_string(sp->window);
  if (spec.as<MetricsSpec>().loudness)
    o << ":loudness";
}

} // namespace sigstream
