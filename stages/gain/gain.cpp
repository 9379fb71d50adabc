#include "stages/gain/gain.hpp"

#include <ostream>

#include "model/config.hpp"
#include "model/plan.hpp"
#include "model/report.hpp"
#include "stages/gain/spec.hpp"

namespace sigstream {

namespace {

class GainStep final : public ChannelwiseCpuStep {
public:
  explicit GainStep(double g) : g_(g) {}
  void run_plane(const float* x, std::int64_t x_first, float* y, std::int64_t y_first,
                 std::int64_t n, StepScratch* /*scratch*/) const override {
    apply(x + (y_first - x_first), n, y);
  }
  void run_plane(const double* x, std::int64_t x_first, double* y, std::int64_t y_first,
                 std::int64_t n) const override {
    apply(x + (y_first - x_first), n, y);
  }

private:
  template <typename T> void apply(const T* x, std::int64_t n, T* y) const {
    const auto g = static_cast<T>(g_);
    for (std::int64_t i = 0; i < n; ++i)
      y[i] = x[i] * g;
  }
  double g_;
};

} // namespace

void plan_gain(const StageSpec& spec, const StagePlanContext& where, PlannedStage& out) {
  out.as<GainPlan>().gain = spec.as<GainSpec>().linear;
  out.frames_out = where.frames_in;
}

StatFields gain_stats(const StageReport& s) {
  return {{"linear", s.as<GainPlan>().gain}};
}

void gain_facts(const StageSpec& spec, std::ostream& o) {
  o << ':' << spec.as<GainSpec>().linear;
}

std::unique_ptr<const CpuStageStep> make_gain_cpu_step(const PlannedStage& stage) {
  return make_gain_cpu_step(stage.as<GainPlan>().gain);
}

std::unique_ptr<const CpuStageStep> make_gain_cpu_step(double linear) {
  return std::make_unique<const GainStep>(linear);
}

} // namespace sigstream
