#include "stages/mix/mix.hpp"

#include <algorithm>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/mix.hpp"
#include "model/config.hpp"
#include "model/plan.hpp"
#include "model/report.hpp"

namespace sigstream {

namespace {

// ITU-R BS.775's down-mix gain for the centre and the surrounds (-3 dB), as SPEC §11 gives it.
constexpr double kMinus3dB = 0.7071068;

// The gains of a matrix or preset for `in` input channels, out x in row-major.
std::vector<double> gains_for(const MixSpec& s, int in, const std::string& where) {
  const auto n = static_cast<std::size_t>(in);
  if (!s.matrix.empty()) {
    const std::size_t width = s.matrix.front().size();
    if (width != n)
      throw config_error(where + ": the matrix has " + std::to_string(width) + " column" +
                         (width == 1 ? "" : "s") + ", the input has " + std::to_string(in) +
                         " channel" + (in == 1 ? "" : "s") +
                         " (a mix matrix needs one column per input channel)");
    std::vector<double> g;
    for (const std::vector<double>& row : s.matrix)
      g.insert(g.end(), row.begin(), row.end());
    return g;
  }
  if (*s.preset == MixPreset::mono)
    return std::vector<double>(n, 1.0 / static_cast<double>(in));
  if (in != 6)
    throw config_error(where + ": preset 5.1-stereo needs 6 input channels (L R C LFE Ls Rs), " +
                       "the input has " + std::to_string(in));
  //        L    R    C           LFE  Ls          Rs
  return {1.0, 0.0, kMinus3dB, 0.0, kMinus3dB, 0.0,        // L'
          0.0, 1.0, kMinus3dB, 0.0, 0.0,       kMinus3dB}; // R'
}

class MixStep final : public CpuStageStep {
public:
  explicit MixStep(const MixPlan& p) : plan_(p) {}
  void run(std::span<const float* const> x, std::int64_t x_first, std::span<float* const> y,
           std::int64_t y_first, std::int64_t n, StepScratch* /*scratch*/) const override {
    apply(x, x_first, y, y_first, n, plan_.gains_f32);
  }
  void run(std::span<const double* const> x, std::int64_t x_first, std::span<double* const> y,
           std::int64_t y_first, std::int64_t n) const override {
    apply(x, x_first, y, y_first, n, plan_.gains);
  }

private:
  template <typename T>
  void apply(std::span<const T* const> x, std::int64_t x_first, std::span<T* const> y,
             std::int64_t y_first, std::int64_t n, const std::vector<T>& gains) const {
    const std::int64_t at = y_first - x_first; // output frame i reads input frame i
    if (plan_.select.empty()) {
      kernels::cpu::mix(x, gains.data(), y, n, at);
      return;
    }
    for (std::size_t c = 0; c < y.size(); ++c) {
      const T* src = x[static_cast<std::size_t>(plan_.select[c])] + at;
      std::copy(src, src + n, y[c]);
    }
  }
  MixPlan plan_;
};

} // namespace

void plan_mix(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out) {
  const MixSpec& s = spec.as<MixSpec>();
  MixPlan& p = out.as<MixPlan>();
  const int in = where.channels;
  p.in = in;
  if (!s.select.empty()) {
    p.how = "select";
    p.select = s.select;
    for (std::size_t c = 0; c < s.select.size(); ++c)
      if (s.select[c] >= in)
        throw config_error(stage_where(where, spec) + ": select[" + std::to_string(c) + "] is " +
                           std::to_string(s.select[c]) + ", the input has " + std::to_string(in) +
                           " channel" + (in == 1 ? "" : "s") + " (indices 0.." +
                           std::to_string(in - 1) + ")");
    p.out = static_cast<int>(s.select.size());
  } else {
    p.how = s.preset ? std::string(to_string(*s.preset)) : "matrix";
    p.gains = gains_for(s, in, stage_where(where, spec));
    p.gains_f32.assign(p.gains.begin(), p.gains.end());
    p.out = static_cast<int>(p.gains.size() / static_cast<std::size_t>(in));
  }
  out.channels_out = p.out;
  out.mixes_channels = true;
  out.frames_out = where.frames_in;
  out.detail = p.how + ", " + std::to_string(in) + " -> " + std::to_string(p.out) + " channel" +
               (p.out == 1 ? "" : "s");
}

std::unique_ptr<const CpuStageStep> make_mix_cpu_step(const PlannedStage& stage) {
  return std::make_unique<const MixStep>(stage.as<MixPlan>());
}

StatFields mix_stats(const StageReport& s) {
  const MixPlan& p = s.as<MixPlan>();
  return {
      {"mix", p.how}, {"channels_in", std::int64_t{p.in}}, {"channels_out", std::int64_t{p.out}}};
}

void mix_facts(const StageSpec& spec, std::ostream& o) {
  const MixSpec& s = spec.as<MixSpec>();
  if (s.preset)
    o << ":preset=" << to_string(*s.preset);
  for (const std::vector<double>& row : s.matrix) {
    o << ":row";
    for (const double g : row)
      o << ',' << g;
  }
  if (!s.select.empty()) {
    o << ":select";
    for (const int i : s.select)
      o << ',' << i;
  }
}

} // namespace sigstream
