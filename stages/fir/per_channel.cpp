#include "stages/fir/per_channel.hpp"

#include <string>
#include <utility>

#include "core/error.hpp"
#include "model/plan.hpp"
#include "stages/fir/fir.hpp"
#include "stages/fir/spec.hpp"

namespace sigstream {

bool fir_per_channel(const PlannedStage& stage) {
  const FirPlan* fir = stage.params.find<FirPlan>();
  return fir != nullptr && !fir->channel_taps.empty();
}

PlannedStage fir_channel_stage(const PlannedStage& stage, std::size_t c) {
  // (A whole copy, every channel's taps included, then cut down: no field
  // of the stage is left behind.)
  PlannedStage one = stage;
  FirPlan& fir = one.as<FirPlan>();
  fir.taps = std::move(fir.channel_taps.at(c));
  fir.taps_f32.assign(fir.taps.begin(), fir.taps.end());
  fir.channel_taps.clear();
  fir.channel_taps.shrink_to_fit();
  one.channels_in = 1;
  one.channels_out = 1;
  one.name = stage.name + "[" + std::to_string(c) + "]";
  return one;
}

std::vector<std::unique_ptr<const PlannedStage>> fir_channel_stages(const PlannedStage& stage) {
  std::vector<std::unique_ptr<const PlannedStage>> out;
  for (std::size_t c = 0; c < stage.as<FirPlan>().channel_taps.size(); ++c)
    out.push_back(std::make_unique<const PlannedStage>(fir_channel_stage(stage, c)));
  return out;
}

namespace {

// Each channel's own step's scratch.
class ChannelScratch final : public StepScratch {
public:
  std::vector<std::unique_ptr<StepScratch>> parts;
};

class PerChannelStep final : public CpuStageStep {
public:
  explicit PerChannelStep(const PlannedStage& stage) : stages_(fir_channel_stages(stage)) {
    for (const auto& st : stages_)
      steps_.push_back(make_fir_cpu_step(*st));
  }
  [[nodiscard]] std::unique_ptr<StepScratch> make_scratch() const override {
    auto s = std::make_unique<ChannelScratch>();
    for (const auto& step : steps_)
      s->parts.push_back(step->make_scratch());
    return s;
  }
  [[nodiscard]] std::string describe() const override {
    const std::string d = steps_.front()->describe();
    return d.empty()
               ? d
               : d + " (one response per channel, " + std::to_string(steps_.size()) + " channels)";
  }
  [[nodiscard]] std::int64_t min_frames_per_call() const override {
    std::int64_t m = 0;
    for (const auto& step : steps_)
      m = std::max(m, step->min_frames_per_call());
    return m;
  }
  void run(std::span<const float* const> x, std::int64_t x_first, std::span<float* const> y,
           std::int64_t y_first, std::int64_t n, StepScratch* scratch) const override {
    auto* s = dynamic_cast<ChannelScratch*>(scratch);
    if (s == nullptr && scratch != nullptr)
      throw internal_error("fir '" + stages_.front()->name + "': another step's scratch");
    for (std::size_t c = 0; c < steps_.size(); ++c)
      steps_[c]->run(x.subspan(c, 1), x_first, y.subspan(c, 1), y_first, n,
                     s != nullptr ? s->parts[c].get() : nullptr);
  }
  void run(std::span<const double* const> x, std::int64_t x_first, std::span<double* const> y,
           std::int64_t y_first, std::int64_t n) const override {
    for (std::size_t c = 0; c < steps_.size(); ++c)
      steps_[c]->run(x.subspan(c, 1), x_first, y.subspan(c, 1), y_first, n);
  }

private:
  std::vector<std::unique_ptr<const PlannedStage>> stages_;
  std::vector<std::unique_ptr<const CpuStageStep>> steps_;
};

class PerChannelLiveKernel final : public LiveKernel {
public:
  PerChannelLiveKernel(const PlannedStage& stage, const LiveContext& context)
      : stages_(fir_channel_stages(stage)) {
    LiveContext one = context;
    one.channels = 1;
    one.device = -1;
    for (const auto& st : stages_)
      kernels_.push_back(make_fir_live_kernel(*st, one));
  }
  [[nodiscard]] std::string describe() const override {
    return kernels_.front()->describe() + ", one response per channel (" +
           std::to_string(kernels_.size()) + ")";
  }
  [[nodiscard]] std::string detail() const override { return kernels_.front()->detail(); }
  [[nodiscard]] std::optional<FirMethod> method() const override {
    return kernels_.front()->method();
  }
  [[nodiscard]] std::string last_step() const override { return kernels_.front()->last_step(); }
  [[nodiscard]] std::size_t channels() const noexcept { return stages_.size(); }
  [[nodiscard]] const PlannedStage& stage(std::size_t c) const { return *stages_[c]; }
  [[nodiscard]] LiveKernel* kernel(std::size_t c) const { return kernels_[c].get(); }

private:
  std::vector<std::unique_ptr<const PlannedStage>> stages_;
  std::vector<std::unique_ptr<LiveKernel>> kernels_;
};

// Each channel through its own op: its plane in, its plane out.
class PerChannelOp final : public LiveOp {
public:
  PerChannelOp(const PerChannelLiveKernel& k, std::int64_t phase) {
    for (std::size_t c = 0; c < k.channels(); ++c)
      ops_.push_back(make_fir_live_op(
          k.stage(c), LiveOpContext{.kernel = k.kernel(c), .channels = 1, .phase = phase}));
    in_.resize(1);
    out_.resize(1);
  }
  void push(const LivePlanes& in, std::int64_t n, LivePlanes& out) override {
    for (std::size_t c = 0; c < ops_.size(); ++c) {
      in_[0].assign(in[c].begin(), in[c].begin() + n);
      out_[0].clear();
      ops_[c]->push(in_, n, out_);
      out[c].insert(out[c].end(), out_[0].begin(), out_[0].end());
    }
  }
  void finish(LivePlanes& out) override {
    for (std::size_t c = 0; c < ops_.size(); ++c) {
      out_[0].clear();
      ops_[c]->finish(out_);
      out[c].insert(out[c].end(), out_[0].begin(), out_[0].end());
    }
  }

private:
  std::vector<std::unique_ptr<LiveOp>> ops_;
  LivePlanes in_, out_;
};

} // namespace

std::unique_ptr<const CpuStageStep> make_fir_per_channel_cpu_step(const PlannedStage& stage) {
  return std::make_unique<const PerChannelStep>(stage);
}

std::unique_ptr<LiveKernel> make_fir_per_channel_live_kernel(const PlannedStage& stage,
                                                             const LiveContext& context) {
  return std::make_unique<PerChannelLiveKernel>(stage, context);
}

std::unique_ptr<LiveOp> make_fir_per_channel_live_op(LiveKernel* kernel, std::int64_t phase) {
  const auto* k = dynamic_cast<const PerChannelLiveKernel*>(kernel);
  return k != nullptr ? std::make_unique<PerChannelOp>(*k, phase) : nullptr;
}

} // namespace sigstream
