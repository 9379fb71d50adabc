// The metrics kind in live mode (SPEC §6): an observer that measures each
// block it is handed (core/channel_metrics.hpp's block, the Welch sums of a
// spectrum, the loudness meter); live mode's walk passes the block on. LiveRun
// also makes one for the chain's output (make_metrics_live_observer), so every
// measurement of a live run is this kind's.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kernels/cpu/reduce.hpp"
#include "kernels/cpu/welch.hpp"
#include "model/plan.hpp"
#include "stages/metrics/loudness.hpp"
#include "stages/metrics/metrics.hpp"
#include "stages/metrics/spec.hpp"

namespace sigstream {

namespace {

void append(std::vector<float>& to, const float* p, std::int64_t n) {
  to.insert(to.end(), p, p + n);
}

// The source frames a block pairs its signal with (dot_input): the stage
// sees frame j after the source's frame j has come (stages only delay), so
// it keeps the source frames between, and zeros past the end.
class SourceQueue {
public:
  explicit SourceQueue(int channels) : q_(static_cast<std::size_t>(channels)) {}
  void feed(const LivePlanes& src, std::int64_t n) {
    for (std::size_t c = 0; c < q_.size(); ++c)
      append(q_[c], src[c].data(), n);
  }
  // The next n source frames, channel c (zeros beyond what came).
  const float* take(std::size_t c, std::int64_t n) {
    std::vector<float>& v = q_[c];
    if (static_cast<std::int64_t>(v.size()) < n)
      v.resize(static_cast<std::size_t>(n), 0.0f);
    return v.data();
  }
  void pop(std::int64_t n) {
    for (std::vector<float>& v : q_)
      v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min<std::int64_t>(
                                         n, static_cast<std::int64_t>(v.size()))));
  }

private:
  LivePlanes q_;
};

class MetricsOp final : public LiveObserver {
public:
  // `paired`: no rate change or mix before it, so it pairs with the source
  // frame by frame (else it keeps no source frames and its dot is null).
  // `spectrum_window` non-empty: the Welch sums of the segments that end in
  // each block, from the block and the nfft - 1 frames kept before it.
  // `loudness_rate`: the block's EBU R128 loudness too (LoudnessMeter), fed
  // block by block in order, so its values are a file's.
  MetricsOp(int channels, bool paired, std::span<const double> spectrum_window, int spectrum_hop,
            std::optional<double> loudness_rate = std::nullopt)
      : paired_(paired), source_(paired ? channels : 0) {
    if (loudness_rate)
      meter_ = std::make_unique<LoudnessMeter>(channels, *loudness_rate);
    if (spectrum_window.empty())
      return;
    welch_ = std::make_unique<const kernels::cpu::Welch>(spectrum_window, spectrum_hop);
    history_.assign(static_cast<std::size_t>(channels), {});
    sums_.power.assign(static_cast<std::size_t>(channels * welch_->bins()), 0.0);
  }
  void feed_source(const LivePlanes& src, std::int64_t n) override {
    if (paired_)
      source_.feed(src, n);
  }
  void measure(const LivePlanes& in, std::int64_t n) override {
    last_.assign(in.size(), ChannelMetrics{});
    for (std::size_t c = 0; c < in.size(); ++c)
      last_[c] =
          kernels::cpu::channel_metrics(in[c].data(), paired_ ? source_.take(c, n) : nullptr, n);
    if (paired_)
      source_.pop(n);
    last_frames_ = n;
    if (welch_ && n > 0)
      measure_spectrum(in, n);
    if (meter_ && n > 0) {
      planes_.clear();
      for (const std::vector<float>& p : in)
        planes_.push_back(p.data());
      meter_->add(planes_, n);
    }
  }
  std::int64_t take(std::vector<ChannelMetrics>& out) override {
    out = last_;
    const std::int64_t n = last_frames_;
    last_frames_ = 0;
    return n;
  }
  [[nodiscard]] const SpectrumSums& spectrum() const override { return sums_; }
  [[nodiscard]] std::optional<LoudnessReport> loudness() const override {
    return meter_ ? std::optional<LoudnessReport>(meter_->result()) : std::nullopt;
  }

private:
  void measure_spectrum(const LivePlanes& in, std::int64_t n) {
    const auto bins = static_cast<std::size_t>(welch_->bins());
    const auto keep = static_cast<std::size_t>(welch_->nfft() - 1);
    std::int64_t segments = 0;
    for (std::size_t c = 0; c < in.size(); ++c) {
      std::vector<float>& h = history_[c]; // frames [seen_ - h.size(), seen_), then the block
      const auto before = static_cast<std::int64_t>(h.size());
      h.insert(h.end(), in[c].data(), in[c].data() + n);
      segments = welch_->add(h.data(), seen_ - before, before + n, seen_, seen_ + n,
                             std::span<double>(sums_.power.data() + c * bins, bins));
      if (h.size() > keep)
        h.erase(h.begin(), h.end() - static_cast<std::ptrdiff_t>(keep));
    }
    sums_.segments += segments;
    seen_ += n;
  }

  bool paired_;
  SourceQueue source_;
  std::vector<ChannelMetrics> last_;
  std::int64_t last_frames_ = 0;
  std::unique_ptr<const kernels::cpu::Welch> welch_; // null: no spectrum
  std::vector<std::vector<float>> history_;
  std::int64_t seen_ = 0; // frames measured so far
  SpectrumSums sums_;
  std::unique_ptr<LoudnessMeter> meter_; // null: no loudness
  std::vector<const float*> planes_;
};

} // namespace

std::unique_ptr<LiveOp> make_metrics_live_op(const PlannedStage& stage,
                                             const LiveOpContext& where) {
  const MetricsPlan& p = stage.as<MetricsPlan>();
  return std::make_unique<MetricsOp>(
      where.channels, where.paired, p.spectrum_window, p.spectrum_hop,
      p.loudness ? std::optional<double>(p.loudness_rate) : std::nullopt);
}

std::unique_ptr<LiveObserver> make_metrics_live_observer(int channels, bool paired) {
  return std::make_unique<MetricsOp>(channels, paired, std::span<const double>{}, 0);
}

} // namespace sigstream
