#include "stages/step_live.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/int_math.hpp"
#include "model/plan.hpp"
#include "stages/registry.hpp"

namespace sigstream {

namespace {

class StepLiveOp final : public LiveOp {
public:
  explicit StepLiveOp(PlannedStage stage)
      : stage_(std::move(stage)), step_(make_step(stage_)), scratch_(step_->make_scratch()),
        history_(static_cast<std::size_t>(stage_.channels_in)),
        x_(static_cast<std::size_t>(stage_.channels_in)),
        y_(static_cast<std::size_t>(stage_.channels_out)),
        // Output frame m reads input frame m alone (gain, mix, iir): the step
        // reads each block as it comes, with no history.
        frame_by_frame_(stage_.lookback == 0 && stage_.lookahead == 0 && stage_.up == 1 &&
                        stage_.down == 1 && stage_.extra == 0) {}
  // The step refers to stage_: the op stays where it was made.
  StepLiveOp(const StepLiveOp&) = delete;
  StepLiveOp& operator=(const StepLiveOp&) = delete;

  void push(const LivePlanes& in, std::int64_t n, LivePlanes& out) override {
    if (frame_by_frame_) {
      if (n <= 0)
        return;
      for (std::size_t c = 0; c < x_.size(); ++c)
        x_[c] = in[c].data();
      run(received_, n, out);
      received_ += n;
      next_ = received_;
      return;
    }
    for (std::size_t c = 0; c < history_.size(); ++c)
      history_[c].insert(history_[c].end(), in[c].begin(), in[c].begin() + n);
    received_ += n;
    // Output m reads input frames up to input_window({m, m + 1}).hi - 1: the
    // outputs whose last input frame is below received_.
    emit_until(ceil_div(received_ * stage_.up - stage_.lookahead, stage_.down), out);
  }

  void finish(LivePlanes& out) override {
    const std::int64_t total = stage_.length_out(received_);
    if (total <= next_)
      return;
    // Zeros after the end, as far as the last output reads.
    const std::int64_t need = stage_.input_window({next_, total}).hi;
    for (auto& h : history_)
      if (static_cast<std::int64_t>(h.size()) < need - base_)
        h.resize(static_cast<std::size_t>(need - base_), 0.0f);
    emit_until(total, out);
  }

private:
  static std::unique_ptr<const CpuStageStep> make_step(const PlannedStage& stage) {
    const StageKind& kind = stage_kind(stage.type);
    const std::string what = "stage '" + stage.name + "' (" + std::string(kind.type.name()) + ")";
    // The plan refuses these in live mode first (with the config's file and
    // line); a step that needs the whole signal, or calls of a least length,
    // cannot run block by block with the file path's bits.
    if (stage.whole_signal)
      throw config_error(what + " needs the whole signal at once: not in live mode");
    if (kind.cpu_step == nullptr)
      throw internal_error(what + ": no CPU step to run live");
    std::unique_ptr<const CpuStageStep> step = kind.cpu_step(stage);
    if (step->min_frames_per_call() > 0)
      throw internal_error(what + ": its CPU step wants calls of " +
                           std::to_string(step->min_frames_per_call()) +
                           " frames or more, which live blocks are not");
    return step;
  }

  // Output frames [first, first + n) from the inputs x_ (x_[c][0] is input
  // frame x_first), appended to out.
  void run_into(std::int64_t x_first, std::int64_t first, std::int64_t n, LivePlanes& out) {
    for (std::size_t c = 0; c < y_.size(); ++c) {
      const std::size_t at = out[c].size();
      out[c].resize(at + static_cast<std::size_t>(n));
      y_[c] = out[c].data() + at;
    }
    step_->run(x_, x_first, y_, first, n, scratch_.get());
  }
  void run(std::int64_t first, std::int64_t n, LivePlanes& out) { run_into(first, first, n, out); }

  // Outputs [next_, end), from the history (which holds what they read).
  void emit_until(std::int64_t end, LivePlanes& out) {
    if (end <= next_)
      return;
    const std::int64_t n = end - next_;
    // The history holds input frames [base_, base_ + size); frames before 0 are zeros.
    const std::int64_t lo = stage_.input_window({next_, end}).lo;
    if (lo < base_) { // the first outputs look before the signal: pad with zeros
      for (auto& h : history_)
        h.insert(h.begin(), static_cast<std::size_t>(base_ - lo), 0.0f);
      base_ = lo;
    }
    for (std::size_t c = 0; c < history_.size(); ++c)
      x_[c] = history_[c].data();
    run_into(base_, next_, n, out);
    next_ = end;
    // Keep what the next output still needs.
    const std::int64_t keep_from = stage_.input_window({next_, next_ + 1}).lo;
    if (keep_from > base_) {
      const auto drop = static_cast<std::size_t>(
          std::min<std::int64_t>(keep_from - base_, static_cast<std::int64_t>(history_[0].size())));
      for (auto& h : history_)
        h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(drop));
      base_ += static_cast<std::int64_t>(drop);
    }
  }

  const PlannedStage stage_; // a copy: the step refers to it
  std::unique_ptr<const CpuStageStep> step_;
  std::unique_ptr<StepScratch> scratch_;
  LivePlanes history_;
  std::vector<const float*> x_;
  std::vector<float*> y_;
  std::int64_t base_ = 0;     // input frame of history_[c][0]
  std::int64_t received_ = 0; // input frames so far
  std::int64_t next_ = 0;     // next output frame
  const bool frame_by_frame_;
};

} // namespace

std::unique_ptr<LiveOp> make_step_live_op(PlannedStage stage) {
  return std::make_unique<StepLiveOp>(std::move(stage));
}

} // namespace sigstream
