#include <algorithm>
#include <cmath>
#include <ostream>
#include <sstream>

#include "core/error.hpp"
#include "kernels/cpu/fft_engine.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "model/config.hpp"
#include "model/plan.hpp"
#include "model/report.hpp"
#include "stages/design.hpp"
#include "stages/fir/fir.hpp"
#include "stages/fir/per_channel.hpp"
#include "stages/fir/spec.hpp"

namespace sigstream {

namespace {

void check_inline_taps(const std::vector<double>& taps, const std::string& where) {
  if (taps.empty())
    throw config_error(where + ": no taps");
  if (taps.size() > static_cast<std::size_t>(kMaxTaps))
    throw config_error(where + ": " + std::to_string(taps.size()) + " taps; at most " +
                       std::to_string(kMaxTaps) + " are allowed");
  for (double t : taps)
    if (!std::isfinite(t))
      throw config_error(where + ": taps must be finite");
}

// The stage's responses: one (every channel) or one per channel.
std::vector<std::vector<double>> resolve_taps(const StageSpec& s, double sample_rate,
                                              const std::string& where) {
  const FirSpec& f = s.as<FirSpec>();
  if (f.design) {
    try {
      return {design_fir(*f.design, sample_rate)};
    } catch (const Error& e) {
      throw Error(e.kind(), where + ": " + e.what());
    }
  }
  if (f.taps_file)
    return read_channel_taps_file(*f.taps_file);
  if (!f.channel_taps.empty()) {
    for (const std::vector<double>& t : f.channel_taps)
      check_inline_taps(t, where);
    return f.channel_taps;
  }
  check_inline_taps(f.taps, where);
  return {f.taps};
}

// One response per channel of `channels`, zero-padded to the longest, or
// one for all; a count that is neither is the config's error.
std::vector<std::vector<double>> per_channel(std::vector<std::vector<double>> responses,
                                             int channels, const FirSpec& f,
                                             const std::string& where) {
  if (responses.size() == 1)
    return responses;
  if (responses.size() != static_cast<std::size_t>(channels))
    throw config_error(where + ": " +
                       (f.taps_file ? "the taps file " + *f.taps_file + " has " +
                                          std::to_string(responses.size()) + " channels"
                                    : "taps has " + std::to_string(responses.size()) + " lists") +
                       ", the input has " + std::to_string(channels) + " channel" +
                       (channels == 1 ? "" : "s") +
                       " (expected one response for every channel, or one per channel)");
  std::size_t longest = 0;
  for (const std::vector<double>& r : responses)
    longest = std::max(longest, r.size());
  for (std::vector<double>& r : responses)
    r.resize(longest, 0.0);
  return responses;
}

std::string describe_design(const DesignSpec& d) {
  std::ostringstream o;
  o << to_string(d.kind) << ' ';
  for (std::size_t i = 0; i < d.cutoff_hz.size(); ++i)
    o << (i ? ":" : "") << d.cutoff_hz[i];
  o << " Hz, " << d.taps << " taps, " << to_string(d.window);
  return o.str();
}

class DirectStep final : public ChannelwiseCpuStep {
public:
  // The plan's taps, looked up once (not per call).
  explicit DirectStep(const PlannedStage& st) : stage_(st), fir_(st.as<FirPlan>()) {}
  void run_plane(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                 std::int64_t n, StepScratch* /*scratch*/) const override {
    kernels::cpu::fir_direct(x + (y_first - stage_.lookback - x_first), n, fir_.taps_f32.data(),
                             static_cast<int>(fir_.taps_f32.size()), y);
  }
  void run_plane(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                 std::int64_t n) const override {
    kernels::cpu::fir_direct_f64(x + (y_first - stage_.lookback - x_first), n, fir_.taps.data(),
                                 static_cast<int>(fir_.taps.size()), y);
  }

private:
  const PlannedStage& stage_;
  const FirPlan& fir_;
};

class FftScratch final : public StepScratch {
public:
  kernels::cpu::FirFft::Scratch fft;
};

// Overlap-save; the FFT kernel is built once and shared by every worker.
class FftStep final : public ChannelwiseCpuStep {
public:
  explicit FftStep(const PlannedStage& st)
      : direct_(st),
        fft_(st.as<FirPlan>().taps_f32.data(), static_cast<int>(st.as<FirPlan>().taps_f32.size())),
        stage_(st) {}
  [[nodiscard]] std::unique_ptr<StepScratch> make_scratch() const override {
    return std::make_unique<FftScratch>();
  }
  [[nodiscard]] std::string describe() const override {
    return "fir '" + stage_.name + "': " +
           (kernels::cpu::FirFft::available()
                ? "fft overlap-save, " + std::to_string(fft_.taps()) + " taps, blocks of " +
                      std::to_string(fft_.fft_size()) + ", " + kernels::cpu::FirFft::library()
                : std::string("fft asked, built without a CPU FFT library: float64 direct sum"));
  }
  [[nodiscard]] std::int64_t min_frames_per_call() const override {
    return kernels::cpu::fft::group() * fft_.block_outputs();
  }
  void run_plane(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                 std::int64_t n, StepScratch* scratch) const override {
    auto* s = dynamic_cast<FftScratch*>(scratch);
    if (s == nullptr)
      throw internal_error("fir '" + stage_.name + "' (fft): no FFT scratch");
    fft_.apply(x + (y_first - stage_.lookback - x_first), n, y, s->fft);
  }
  void run_plane(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                 std::int64_t n) const override {
    direct_.run_plane(x, x_first, y, y_first, n);
  }

private:
  DirectStep direct_;
  kernels::cpu::FirFft fft_;
  const PlannedStage& stage_;
};

} // namespace

void plan_fir(const StageSpec& s, const StagePlanContext& where, PlannedStage& p) {
  const FirSpec& spec = s.as<FirSpec>();
  FirPlan& fir = p.as<FirPlan>();
  std::vector<std::vector<double>> responses =
      per_channel(resolve_taps(s, where.sample_rate, stage_where(where, s)), where.channels, spec,
                  stage_where(where, s));
  fir.taps = responses.front();
  fir.taps_f32.assign(fir.taps.begin(), fir.taps.end());
  if (responses.size() > 1)
    fir.channel_taps = std::move(responses);
  if (spec.design)
    p.detail = describe_design(*spec.design);
  else if (spec.taps_file)
    p.detail = "taps file " + *spec.taps_file;
  else
    p.detail = "inline taps";
  if (!fir.channel_taps.empty())
    p.detail += ", one response per channel (" + std::to_string(fir.channel_taps.size()) + ")";
  fir.mode = spec.mode;
  fir.requested = spec.method;
  fir.method = FirMethod::direct; // until resolve_methods() says otherwise
  const auto k = static_cast<std::int64_t>(fir.taps.size());
  const std::int64_t centre = (k - 1) / 2;
  p.lookback = fir.mode == FirMode::same ? k - 1 - centre : k - 1;
  p.lookahead = fir.mode == FirMode::same ? centre : 0;
  p.extra = fir.mode == FirMode::full ? k - 1 : 0;
  p.frames_out = p.length_out(where.frames_in);
}

void fir_facts(const StageSpec& spec, std::ostream& o) {
  const FirSpec& f = spec.as<FirSpec>();
  o << ':' << to_string(f.mode) << ':' << to_string(f.method);
  if (f.design) {
    o << ":design:" << to_string(f.design->kind) << ':' << f.design->taps << ':'
      << to_string(f.design->window);
    for (double c : f.design->cutoff_hz)
      o << ',' << c;
  }
  if (f.taps_file)
    o << ":file:" << *f.taps_file;
  for (double t : f.taps)
    o << ',' << t;
  for (const std::vector<double>& channel : f.channel_taps) {
    o << ":channel";
    for (double t : channel)
      o << ',' << t;
  }
}

std::optional<kernels::cpu::FilterResponse> fir_response(const PlannedStage& stage,
                                                         double rate_in) {
  return taps_response(stage.as<FirPlan>().taps, stage.up, rate_in);
}

std::vector<std::string> fir_files(const StageSpec& spec) {
  const FirSpec& f = spec.as<FirSpec>();
  return f.taps_file ? std::vector<std::string>{*f.taps_file} : std::vector<std::string>{};
}

StatFields fir_stats(const StageReport& s) {
  const FirPlan& fir = s.as<FirPlan>();
  StatFields f = {{"taps", static_cast<std::int64_t>(fir.taps.size())},
                  {"mode", std::string(to_string(fir.mode))},
                  {"method", std::string(to_string(fir.method))},
                  {"design", s.detail}};
  if (!fir.channel_taps.empty()) // the response reported is channel 0's
    f.emplace_back("responses", static_cast<std::int64_t>(fir.channel_taps.size()));
  return f;
}

std::unique_ptr<const CpuStageStep> make_fir_cpu_step(const PlannedStage& stage) {
  if (fir_per_channel(stage))
    return make_fir_per_channel_cpu_step(stage);
  if (stage.as<FirPlan>().method == FirMethod::fft)
    return std::make_unique<const FftStep>(stage);
  return std::make_unique<const DirectStep>(stage);
}

} // namespace sigstream
