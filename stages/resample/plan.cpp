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

// Live mode: the same kernel over a history of the input. Output m needs
// input frames up to floor((m·down + delay)/up); it is computed once they
// have come (past the end of the input: zeros), so the bits are the file
// path's.
class ResampleOp final : public LiveOp {
public:
  ResampleOp(const PlannedStage& st, int channels)
      : stage_(st), taps_(kcpu::make_polyphase(st.as<ResamplePlan>().taps, static_cast<int>(st.up),
                                               static_cast<int>(st.down), st.lookahead)),
        history_(static_cast<std::size_t>(channels)) {}
  void push(const LivePlanes& in, std::int64_t n, LivePlanes& out) override {
    for (std::size_t c = 0; c < history_.size(); ++c)
      history_[c].insert(history_[c].end(), in[c].begin(), in[c].begin() + n);
    received_ += n;
    emit(received_, out);
  }
  void finish(LivePlanes& out) override {
    const std::int64_t total = stage_.length_out(received_);
    if (total <= next_)
      return;
    // Zeros after the end, as far as the last output reads.
    const std::int64_t need =
        kcpu::floor_div((total - 1) * stage_.down + stage_.lookahead, stage_.up) + 1;
    for (auto& h : history_)
      if (static_cast<std::int64_t>(h.size()) < need - base_)
        h.resize(static_cast<std::size_t>(need - base_), 0.0f);
    emit_until(total, out);
  }

private:
  // The outputs whose inputs are all below `have`: output m reads up to
  // floor((m·down + delay)/up).
  void emit(std::int64_t have, LivePlanes& out) {
    emit_until(kcpu::ceil_div(have * stage_.up - stage_.lookahead, stage_.down), out);
  }
  // Outputs [next_, end), from the history (which holds what they read).
  void emit_until(std::int64_t end, LivePlanes& out) {
    if (end <= next_)
      return;
    const std::int64_t n = end - next_;
    // The history holds input frames [base_, base_ + size); frames before 0 are zeros.
    const std::int64_t lo = kcpu::ceil_div(next_ * stage_.down - stage_.lookback, stage_.up);
    if (lo < base_) { // the first outputs look before the signal: pad with zeros
      for (auto& h : history_)
        h.insert(h.begin(), static_cast<std::size_t>(base_ - lo), 0.0f);
      base_ = lo;
    }
    for (std::size_t c = 0; c < history_.size(); ++c) {
      const std::size_t at = out[c].size();
      out[c].resize(at + static_cast<std::size_t>(n));
      kcpu::resample_direct(history_[c].data(), base_, out[c].data() + at, next_, n, taps_);
    }
    next_ = end;
    // Keep what the next output still needs.
    const std::int64_t keep_from = kcpu::ceil_div(next_ * stage_.down - stage_.lookback, stage_.up);
    if (keep_from > base_) {
      const auto drop = static_cast<std::size_t>(
          std::min<std::int64_t>(keep_from - base_, static_cast<std::int64_t>(history_[0].size())));
      for (auto& h : history_)
        h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(drop));
      base_ += static_cast<std::int64_t>(drop);
    }
  }

  const PlannedStage stage_; // a copy: the op may outlive the plan it was made from
  kcpu::PolyphaseTaps taps_;
  LivePlanes history_;
  std::int64_t base_ = 0;     // input frame of history_[c][0]
  std::int64_t received_ = 0; // input frames so far
  std::int64_t next_ = 0;     // next output frame
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
  const std::int64_t g = std::gcd(up, down);
  up /= g;
  down /= g;
  if (std::max(up, down) > kMaxResampleFactor)
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

std::unique_ptr<LiveOp> make_resample_live_op(const PlannedStage& stage,
                                              const LiveOpContext& where) {
  return std::make_unique<ResampleOp>(stage, where.channels);
}

} // namespace sigstream
