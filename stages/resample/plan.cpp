#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/resample.hpp"
#include "model/config.hpp"
#include "model/plan.hpp"
#include "model/report.hpp"
#include "stages/design.hpp"
#include "stages/fir/fir.hpp"
#include "stages/resample/resample.hpp"
#include "stages/resample/spec.hpp"

namespace sigstream {

namespace {

namespace kcpu = kernels::cpu;

std::string hz(double v) {
  std::ostringstream o;
  o.precision(12);
  o << v;
  return o.str();
}

class ResampleStep final : public ChannelwiseCpuStep {
public:
  explicit ResampleStep(const PlannedStage& st)
      : taps_(kcpu::make_polyphase(st.as<ResamplePlan>().taps, static_cast<int>(st.up),
                                   static_cast<int>(st.down), st.lookahead)) {}
  void run_plane(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                 std::int64_t n, StepScratch* /*scratch*/) const override {
    kcpu::resample_direct(x, x_first, y, y_first, n, taps_);
  }
  void run_plane(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                 std::int64_t n) const override {
    kcpu::resample_direct_f64(x, x_first, y, y_first, n, taps_);
  }

private:
  kcpu::PolyphaseTaps taps_;
};

} // namespace

void plan_resample(const StageSpec& s, const StagePlanContext& where, PlannedStage& p) {
  const ResampleSpec& r = s.as<ResampleSpec>();
  const std::string at = stage_where(where, s);
  std::int64_t up = r.up;
  std::int64_t down = r.down;
  if (r.to_hz) {
    const double in = where.sample_rate;
    if (in != std::floor(in) || in < 1)
      throw config_error(at + ": to_hz needs a whole input rate, got " + hz(in) +
                         " Hz here (expected up and down instead)");
    up = static_cast<std::int64_t>(*r.to_hz);
    down = static_cast<std::int64_t>(in);
  }
  const ReducedRatio ratio = reduce_ratio(up, down);
  up = ratio.up;
  down = ratio.down;
  if (!ratio.within_limit())
    throw config_error(at + ": " + hz(where.sample_rate) + " Hz to " +
                       hz(where.sample_rate * static_cast<double>(up) / static_cast<double>(down)) +
                       " Hz is up " + std::to_string(up) + " / down " + std::to_string(down) +
                       " after reducing, above the limit of " + std::to_string(kMaxResampleFactor) +
                       " (expected a ratio of smaller whole numbers, e.g. a nearby rate)");
  const double out = where.sample_rate * static_cast<double>(up) / static_cast<double>(down);
  // Audio files store rates as 32-bit integers; and no length may overflow.
  if (out > 2147483647.0)
    throw config_error(
        at + ": " + hz(where.sample_rate) + " Hz x " + std::to_string(up) + "/" +
        std::to_string(down) + " = " + hz(out) +
        " Hz is above the largest rate a file can hold, 2147483647 Hz (expected a smaller ratio)");
  if (where.frames_in < kOpenEnd && where.frames_in > (kOpenEnd - 1) / up)
    throw config_error(at + ": " + std::to_string(where.frames_in) + " frames x " +
                       std::to_string(up) +
                       " is too long a signal to resample (expected fewer frames or a smaller up)");
  if (out != std::floor(out))
    throw config_error(at + ": " + hz(where.sample_rate) + " Hz x " + std::to_string(up) + "/" +
                       std::to_string(down) + " = " + hz(out) +
                       " Hz is not a whole number of Hz (expected a ratio that gives a whole rate: "
                       "audio files store whole rates)");
  p.up = up;
  p.down = down;
  std::ostringstream note;
  note << "resample " << hz(where.sample_rate) << " -> "
       << hz(where.sample_rate * static_cast<double>(up) / static_cast<double>(down)) << " Hz (up "
       << up << ", down " << down << ")";
  ResamplePlan& rp = p.as<ResamplePlan>();
  try {
    rp.taps = resample_filter(up, down, r.half_taps_per_phase, r.window);
  } catch (const Error& e) {
    throw Error(e.kind(), at + ": " + e.what());
  }
  if (rp.taps.size() > 1)
    note << ", " << rp.taps.size() << " taps, " << to_string(r.window);
  rp.taps_f32.assign(rp.taps.begin(), rp.taps.end());
  p.detail = note.str();
  const auto k = static_cast<std::int64_t>(rp.taps.size());
  p.lookahead = (k - 1) / 2;
  p.lookback = k - 1 - p.lookahead;
  p.frames_out = p.length_out(where.frames_in);
}

ReducedRatio reduce_ratio(std::int64_t up, std::int64_t down) noexcept {
  const std::int64_t g = std::gcd(up, down);
  return {up / g, down / g};
}

std::vector<double> resample_filter(std::int64_t up, std::int64_t down, int half_taps_per_phase,
                                    const WindowSpec& window) {
  if (up == 1 && down == 1)
    return {1.0}; // resample_poly copies the signal
  const std::int64_t m = std::max(up, down);
  const std::int64_t half = static_cast<std::int64_t>(half_taps_per_phase) * m;
  DesignSpec d;
  d.kind = FilterKind::lowpass;
  d.cutoff_hz = {1.0 / static_cast<double>(m)}; // of Nyquist = 1 at rate 2
  d.taps = static_cast<int>(2 * half + 1);
  d.window = window;
  std::vector<double> taps = design_fir(d, 2.0);
  for (double& t : taps)
    t *= static_cast<double>(up);
  return taps;
}

std::optional<kernels::cpu::FilterResponse> resample_response(const PlannedStage& stage,
                                                              double rate_in) {
  return taps_response(stage.as<ResamplePlan>().taps, stage.up, rate_in);
}

void resample_facts(const StageSpec& spec, std::ostream& o) {
  const ResampleSpec& r = spec.as<ResampleSpec>();
  if (r.to_hz)
    o << ":to:" << *r.to_hz;
  else
    o << ":up:" << r.up << ":down:" << r.down;
  o << ':' << to_string(r.window) << ':' << r.half_taps_per_phase;
}

double resample_cpu_ns_per_frame(const PlannedStage& stage, std::int64_t /*frames_per_call*/) {
  return static_cast<double>(stage.as<ResamplePlan>().taps.size()) / static_cast<double>(stage.up) *
         kernels::cpu::fir_direct_ns_per_fma();
}

double resample_cuda_ns_per_frame(const PlannedStage& stage, std::int64_t /*frames_per_call*/) {
  return static_cast<double>(stage.as<ResamplePlan>().taps.size()) / static_cast<double>(stage.up) /
         fir_cuda_fma_per_ns();
}

StatFields resample_stats(const StageReport& s) {
  // Rates are whole numbers (plan_resample insists): an integer, like SPEC §4's rates.
  return {{"up", s.up},
          {"down", s.down},
          {"sample_rate", static_cast<std::int64_t>(s.rate_out)},
          {"taps", static_cast<std::int64_t>(s.as<ResamplePlan>().taps.size())},
          {"design", s.detail}};
}

std::unique_ptr<const CpuStageStep> make_resample_cpu_step(const PlannedStage& stage) {
  return std::make_unique<const ResampleStep>(stage);
}

} // namespace sigstream
