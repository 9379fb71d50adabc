// The fir stage in live mode (SPEC §6, pipeline/live.hpp): direct, the
// file path's step over the stage's history (stages/step_live.hpp: the same
// bits), or partitioned (uniform partitions with a frequency-domain delay
// line, on the CPU or a GPU: stages/fir/block_convolver.hpp), so that a long
// filter does not force long blocks.
#include <algorithm>
#include <limits>
#include <utility>

#include "core/error.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_partitioned.hpp"
#include "model/plan.hpp"
#include "stages/fir/block_convolver.hpp"
#include "stages/fir/fir.hpp"
#include "stages/fir/per_channel.hpp"
#include "stages/fir/spec.hpp"
#include "stages/step_live.hpp"

namespace sigstream {

namespace {

void append(std::vector<float>& to, const float* p, std::int64_t n) {
  to.insert(to.end(), p, p + n);
}
void drop_front(std::vector<float>& v, std::int64_t n) {
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min<std::int64_t>(
                                     n, static_cast<std::int64_t>(v.size()))));
}

// The CPU's partitioned step: one PartitionedFir, a state per channel.
class CpuBlockConvolver final : public BlockConvolver {
public:
  CpuBlockConvolver(const float* taps, int count, int channels, int block)
      : fir_(taps, count, block) {
    for (int c = 0; c < channels; ++c)
      states_.push_back(fir_.make_state());
  }
  [[nodiscard]] int block() const noexcept override { return fir_.block(); }
  [[nodiscard]] int partitions() const noexcept override { return fir_.partitions(); }
  [[nodiscard]] std::string describe() const override {
    return "partitioned, " + std::to_string(fir_.partitions()) + " partitions of " +
           std::to_string(fir_.block());
  }
  void process(const float* const* x, float* const* y) override {
    for (std::size_t c = 0; c < states_.size(); ++c)
      fir_.process(states_[c], x[c], y[c]);
  }
  [[nodiscard]] double block_cost_ns() const noexcept {
    return fir_.block_cost_ns() * static_cast<double>(states_.size());
  }

private:
  kernels::cpu::PartitionedFir fir_;
  std::vector<kernels::cpu::PartitionedFir::State> states_;
};

// A FIR stage as a running causal convolution yc[n] = sum h[k] x[n-k] in
// blocks of P frames: causal emits yc[0..N), same yc[c..N+c) with c =
// (K-1)/2 (so it holds back c frames), full yc[0..N+K-1). An input whose
// frames arrive off the block grid (after a `same` stage) is primed with
// zeros so its blocks end where the steps do, and as many outputs are dropped.
class PartitionedFirOp final : public LiveOp {
public:
  PartitionedFirOp(const PlannedStage& st, int channels, BlockConvolver* partitioned,
                   std::int64_t phase)
      : channels_(channels), fir_(partitioned) {
    const auto k = static_cast<std::int64_t>(st.as<FirPlan>().taps_f32.size());
    const std::int64_t c = st.as<FirPlan>().mode == FirMode::same ? (k - 1) / 2 : 0;
    drop_ = c;
    tail_ = st.as<FirPlan>().mode == FirMode::full ? k - 1 : c;
    extra_ = st.as<FirPlan>().mode == FirMode::full ? k - 1 : 0;
    const std::int64_t p = fir_->block();
    const std::int64_t prime = ((phase % p) + p) % p;
    drop_ += prime;
    fifo_.assign(static_cast<std::size_t>(channels),
                 std::vector<float>(static_cast<std::size_t>(prime), 0.0f));
    out_.assign(static_cast<std::size_t>(channels),
                std::vector<float>(static_cast<std::size_t>(p), 0.0f));
    for (int c = 0; c < channels; ++c) {
      x_ptrs_.push_back(nullptr);
      y_ptrs_.push_back(out_[static_cast<std::size_t>(c)].data());
    }
  }

  void push(const LivePlanes& in, std::int64_t n, LivePlanes& out) override {
    pushed_ += n;
    run(in, n, out);
  }

  void finish(LivePlanes& out) override {
    limit_ = pushed_ + extra_;
    // Zeros after the end: the tail (full), the held-back frames (same), and
    // enough to complete the last block.
    std::int64_t zeros = tail_ + fir_->block();
    const std::int64_t step = 4096;
    LivePlanes z(static_cast<std::size_t>(channels_),
                 std::vector<float>(static_cast<std::size_t>(step), 0.0f));
    while (zeros > 0 && emitted_ < limit_) {
      const std::int64_t n = std::min(zeros, step);
      run(z, n, out);
      zeros -= n;
    }
  }

private:
  void run(const LivePlanes& in, std::int64_t n, LivePlanes& out) {
    const std::int64_t p = fir_->block();
    for (int c = 0; c < channels_; ++c)
      append(fifo_[static_cast<std::size_t>(c)], in[static_cast<std::size_t>(c)].data(), n);
    while (static_cast<std::int64_t>(fifo_[0].size()) >= p) {
      for (int c = 0; c < channels_; ++c)
        x_ptrs_[static_cast<std::size_t>(c)] = fifo_[static_cast<std::size_t>(c)].data();
      fir_->process(x_ptrs_.data(), y_ptrs_.data());
      for (int c = 0; c < channels_; ++c) {
        drop_front(fifo_[static_cast<std::size_t>(c)], p);
        emit(c, y_ptrs_[static_cast<std::size_t>(c)], p, out);
      }
      advance(p);
    }
  }

  // Of the next n causal outputs, those that are the stage's: past the first
  // drop_ overall, not past limit_. {first, count}.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> window(std::int64_t n) const {
    const std::int64_t from = std::min(n, std::max<std::int64_t>(0, drop_ - produced_));
    return {from, std::clamp<std::int64_t>(limit_ - emitted_, 0, n - from)};
  }
  void emit(int c, const float* y, std::int64_t n, LivePlanes& out) const {
    const auto [from, count] = window(n);
    append(out[static_cast<std::size_t>(c)], y + from, count);
  }
  void advance(std::int64_t n) {
    emitted_ += window(n).second;
    produced_ += n;
  }

  int channels_;
  BlockConvolver* fir_;
  std::int64_t drop_ = 0, tail_ = 0, extra_ = 0;
  std::int64_t pushed_ = 0, produced_ = 0, emitted_ = 0;
  std::int64_t limit_ = std::numeric_limits<std::int64_t>::max();
  LivePlanes fifo_, out_;
  std::vector<const float*> x_ptrs_;
  std::vector<float*> y_ptrs_;
};

} // namespace

std::string fir_live_note(const std::string& name, std::size_t taps) {
  return "fir '" + name + "' (" + std::to_string(taps) + " taps): ";
}

// On the CPU: direct or partitioned as asked; `auto` partitioned where that
// is cheaper. (On a GPU: stages/fir/cuda_live.cu.)
std::unique_ptr<LiveKernel> make_fir_live_kernel(const PlannedStage& st,
                                                 const LiveContext& context) {
  if (fir_per_channel(st))
    return make_fir_per_channel_live_kernel(st, context);
  const auto taps = static_cast<int>(st.as<FirPlan>().taps_f32.size());
  std::unique_ptr<BlockConvolver> partitioned;
  {
    bool part =
        st.as<FirPlan>().requested == FirMethod::fft && kernels::cpu::PartitionedFir::available();
    if (st.as<FirPlan>().requested == FirMethod::automatic &&
        kernels::cpu::PartitionedFir::available()) {
      // Direct where it is cheaper: its short blocks run at about a quarter
      // of the long-chunk rate (measured at 48 frames on the EPYC).
      const CpuBlockConvolver probe(st.as<FirPlan>().taps_f32.data(), taps, 1,
                                    static_cast<int>(context.block));
      const double direct_ns =
          4.0 * static_cast<double>(context.block) * taps * kernels::cpu::fir_direct_ns_per_fma();
      part = probe.block_cost_ns() < direct_ns;
    }
    if (part)
      partitioned =
          std::make_unique<CpuBlockConvolver>(st.as<FirPlan>().taps_f32.data(), taps,
                                              context.channels, static_cast<int>(context.block));
  }
  return std::make_unique<FirLiveKernel>(fir_live_note(st.name, st.as<FirPlan>().taps_f32.size()),
                                         std::move(partitioned));
}

std::unique_ptr<LiveOp> make_fir_live_op(const PlannedStage& st, const LiveOpContext& where) {
  if (auto per_channel = make_fir_per_channel_live_op(where.kernel, where.phase))
    return per_channel;
  auto* k = dynamic_cast<FirLiveKernel*>(where.kernel);
  if (k != nullptr && k->partitioned() != nullptr)
    return std::make_unique<PartitionedFirOp>(st, where.channels, k->partitioned(), where.phase);
  // Direct: the file path's step (the same bits).
  PlannedStage direct = st;
  direct.as<FirPlan>().method = FirMethod::direct;
  return make_step_live_op(std::move(direct));
}

} // namespace sigstream
