#include "pipeline/live.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "kernels/cpu/fir.hpp"
#include "kernels/cpu/fir_partitioned.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/reduce.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/io/audio_sink.hpp"
#include "pipeline/block_convolver.hpp"
#include "pipeline/io/stats_writer.hpp"
#include "pipeline/backends/cuda_backend.hpp"
#include "pipeline/progress.hpp"

namespace sigstream {

std::int64_t live_block_frames(double latency_ms, double rate) noexcept {
  return std::max<std::int64_t>(1, std::llround(latency_ms * rate / 1000.0));
}

namespace {

using Clock = std::chrono::steady_clock;
using Planes = std::vector<std::vector<float>>;  // [channel][frame]

void append(std::vector<float>& to, const float* p, std::int64_t n) { to.insert(to.end(), p, p + n); }
void drop_front(std::vector<float>& v, std::int64_t n) {
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min<std::int64_t>(n, static_cast<std::int64_t>(v.size()))));
}

// One stage of the live chain: takes frames in order, appends its outputs.
class Op {
 public:
  virtual ~Op() = default;
  // in[c][0..n) in, outputs appended to out[c].
  virtual void push(const Planes& in, std::int64_t n, Planes& out) = 0;
  // The input has ended: appends what is still owed (tails, held-back frames).
  virtual void finish(Planes& out) = 0;
};

// The CPU's partitioned step: one PartitionedFir, a state per channel.
class CpuBlockConvolver final : public BlockConvolver {
 public:
  CpuBlockConvolver(const float* taps, int count, int channels, int block) : fir_(taps, count, block) {
    for (int c = 0; c < channels; ++c) states_.push_back(fir_.make_state());
  }
  [[nodiscard]] int block() const noexcept override { return fir_.block(); }
  [[nodiscard]] int partitions() const noexcept override { return fir_.partitions(); }
  [[nodiscard]] std::string describe() const override {
    return "partitioned, " + std::to_string(fir_.partitions()) + " partitions of " + std::to_string(fir_.block());
  }
  void process(const float* const* x, float* const* y) override {
    for (std::size_t c = 0; c < states_.size(); ++c) fir_.process(states_[c], x[c], y[c]);
  }
  [[nodiscard]] double block_cost_ns() const noexcept { return fir_.block_cost_ns() * static_cast<double>(states_.size()); }

 private:
  kernels::cpu::PartitionedFir fir_;
  std::vector<kernels::cpu::PartitionedFir::State> states_;
};

// A FIR stage as a running causal convolution yc[n] = sum h[k] x[n-k]:
// causal emits yc[0..N), same yc[c..N+c) with c = (K-1)/2 (so it holds back
// c frames), full yc[0..N+K-1). Direct: the kernel of the file path on the
// history plus the new frames (same operations, same bits). Partitioned:
// blocks of P frames; an input whose frames arrive off the block grid (after
// a `same` stage) is primed with zeros so its blocks end where the steps do,
// and as many outputs are dropped.
class FirOp final : public Op {
 public:
  FirOp(const PlannedStage& st, int channels, BlockConvolver* partitioned, std::int64_t phase)
      : taps_(st.taps_f32), channels_(channels), fir_(partitioned) {
    const auto k = static_cast<std::int64_t>(taps_.size());
    const std::int64_t c = st.mode == FirMode::same ? (k - 1) / 2 : 0;
    drop_ = c;
    tail_ = st.mode == FirMode::full ? k - 1 : c;
    extra_ = st.mode == FirMode::full ? k - 1 : 0;
    if (fir_ != nullptr) {
      const std::int64_t p = fir_->block();
      const std::int64_t prime = ((phase % p) + p) % p;
      drop_ += prime;
      fifo_.assign(static_cast<std::size_t>(channels), std::vector<float>(static_cast<std::size_t>(prime), 0.0f));
      out_.assign(static_cast<std::size_t>(channels), std::vector<float>(static_cast<std::size_t>(p), 0.0f));
      for (int c = 0; c < channels; ++c) {
        x_ptrs_.push_back(nullptr);
        y_ptrs_.push_back(out_[static_cast<std::size_t>(c)].data());
      }
    } else {
      history_.assign(static_cast<std::size_t>(channels), std::vector<float>(static_cast<std::size_t>(k - 1), 0.0f));
    }
  }

  void push(const Planes& in, std::int64_t n, Planes& out) override {
    pushed_ += n;
    run(in, n, out);
  }

  void finish(Planes& out) override {
    limit_ = pushed_ + extra_;
    // Zeros after the end: the tail (full), the held-back frames (same), and
    // for the partitioned kernel enough to complete the last block.
    std::int64_t zeros = tail_ + (fir_ != nullptr ? fir_->block() : 0);
    const std::int64_t step = 4096;
    Planes z(static_cast<std::size_t>(channels_), std::vector<float>(static_cast<std::size_t>(step), 0.0f));
    while (zeros > 0 && emitted_ < limit_) {
      const std::int64_t n = std::min(zeros, step);
      run(z, n, out);
      zeros -= n;
    }
  }

 private:
  void run(const Planes& in, std::int64_t n, Planes& out) {
    const auto k = static_cast<std::int64_t>(taps_.size());
    if (fir_ == nullptr) {
      for (int c = 0; c < channels_; ++c) {
        std::vector<float>& h = history_[static_cast<std::size_t>(c)];
        buf_.assign(h.begin(), h.end());
        append(buf_, in[static_cast<std::size_t>(c)].data(), n);
        y_.resize(static_cast<std::size_t>(n));
        kernels::cpu::fir_direct(buf_.data(), n, taps_.data(), static_cast<int>(k), y_.data());
        std::copy(buf_.end() - static_cast<std::ptrdiff_t>(k - 1), buf_.end(), h.begin());
        emit(c, y_.data(), n, out);
      }
      advance(n);
      return;
    }
    const std::int64_t p = fir_->block();
    for (int c = 0; c < channels_; ++c) append(fifo_[static_cast<std::size_t>(c)], in[static_cast<std::size_t>(c)].data(), n);
    while (static_cast<std::int64_t>(fifo_[0].size()) >= p) {
      for (int c = 0; c < channels_; ++c) x_ptrs_[static_cast<std::size_t>(c)] = fifo_[static_cast<std::size_t>(c)].data();
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
  void emit(int c, const float* y, std::int64_t n, Planes& out) const {
    const auto [from, count] = window(n);
    append(out[static_cast<std::size_t>(c)], y + from, count);
  }
  void advance(std::int64_t n) {
    emitted_ += window(n).second;
    produced_ += n;
  }

  std::vector<float> taps_;
  int channels_;
  BlockConvolver* fir_;
  std::int64_t drop_ = 0, tail_ = 0, extra_ = 0;
  std::int64_t pushed_ = 0, produced_ = 0, emitted_ = 0;
  std::int64_t limit_ = std::numeric_limits<std::int64_t>::max();
  Planes history_, fifo_, out_;
  std::vector<const float*> x_ptrs_;
  std::vector<float*> y_ptrs_;
  std::vector<float> buf_, y_;
};

class GainOp final : public Op {
 public:
  explicit GainOp(double gain) : gain_(static_cast<float>(gain)) {}
  void push(const Planes& in, std::int64_t n, Planes& out) override {
    for (std::size_t c = 0; c < in.size(); ++c)
      for (std::int64_t i = 0; i < n; ++i) out[c].push_back(in[c][static_cast<std::size_t>(i)] * gain_);
  }
  void finish(Planes&) override {}

 private:
  float gain_;
};

// The source frames a metrics block pairs its signal with (dot_input): the
// stage sees frame j after the source's frame j has come (stages only delay),
// so each block keeps the source frames between, and zeros past the end.
class SourceQueue {
 public:
  explicit SourceQueue(int channels) : q_(static_cast<std::size_t>(channels)) {}
  void feed(const Planes& src, std::int64_t n) {
    for (std::size_t c = 0; c < q_.size(); ++c) append(q_[c], src[c].data(), n);
  }
  // The next n source frames, channel c (zeros beyond what came).
  const float* take(std::size_t c, std::int64_t n) {
    if (static_cast<std::int64_t>(q_[c].size()) < n) q_[c].resize(static_cast<std::size_t>(n), 0.0f);
    return q_[c].data();
  }
  void pop(std::int64_t n) {
    for (auto& v : q_) drop_front(v, n);
  }

 private:
  Planes q_;
};

class MetricsOp final : public Op {
 public:
  MetricsOp(int slot, int channels) : slot_(slot), source_(channels) {}
  void push(const Planes& in, std::int64_t n, Planes& out) override {
    measure(in, n);
    for (std::size_t c = 0; c < in.size(); ++c) append(out[c], in[c].data(), n);
  }
  // The metrics of in[c][0..n), without passing the frames on.
  void measure(const Planes& in, std::int64_t n) {
    last_.assign(in.size(), ChannelMetrics{});
    for (std::size_t c = 0; c < in.size(); ++c)
      last_[c] = kernels::cpu::channel_metrics(in[c].data(), source_.take(c, n), n);
    source_.pop(n);
    last_frames_ = n;
  }
  void finish(Planes&) override {}
  SourceQueue& source() { return source_; }
  [[nodiscard]] int slot() const { return slot_; }
  // This step's metrics (frames 0 when the stage saw none), then resets.
  std::int64_t take(std::vector<ChannelMetrics>& out) {
    out = last_;
    const std::int64_t n = last_frames_;
    last_frames_ = 0;
    return n;
  }

 private:
  int slot_;
  SourceQueue source_;
  std::vector<ChannelMetrics> last_;
  std::int64_t last_frames_ = 0;
};

// The partitioned steps of a plan's FIR stages (null: direct), made once and
// shared by the chains made from them (the warm-up chain leaves them as it
// found them: zeros in, zeros kept).
struct LiveKernels {
  std::vector<std::unique_ptr<BlockConvolver>> partitioned;  // per stage
  std::vector<std::string> notes;
  std::string where = "the CPU, one thread";
};

// `device` >= 0: every FIR stage runs partitioned on that GPU (blocks of at
// most 4096). Else on the CPU, direct or partitioned as asked; `auto`
// partitioned where that is cheaper.
LiveKernels make_live_kernels(const Plan& plan, std::int64_t block, int device) {
  LiveKernels k;
  if (device >= 0) k.where = "CUDA device " + std::to_string(device) + " (FIR stages), the CPU (the rest)";
  k.partitioned.resize(plan.stages.size());
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    if (st.type != StageType::fir) continue;
    const auto taps = static_cast<int>(st.taps_f32.size());
    std::ostringstream note;
    note << "fir '" << st.name << "' (" << taps << " taps): ";
    if (device >= 0) {
#ifdef SIGSTREAM_HAVE_CUDA
      k.partitioned[j] = make_cuda_block_convolver(st.taps_f32.data(), taps, plan.channels,
                                                   static_cast<int>(std::min<std::int64_t>(block, 4096)), device);
#else
      throw Error(ErrorKind::cuda, "live mode on CUDA: this sigstream was built without CUDA");
#endif
    } else {
      bool part = st.requested == FirMethod::fft && kernels::cpu::PartitionedFir::available();
      if (st.requested == FirMethod::automatic && kernels::cpu::PartitionedFir::available()) {
        // Direct where it is cheaper: its short blocks run at about a quarter
        // of the long-chunk rate (measured at 48 frames on the EPYC).
        const CpuBlockConvolver probe(st.taps_f32.data(), taps, 1, static_cast<int>(block));
        const double direct_ns = 4.0 * static_cast<double>(block) * taps * kernels::cpu::fir_direct_ns_per_fma();
        part = probe.block_cost_ns() < direct_ns;
      }
      if (part)
        k.partitioned[j] = std::make_unique<CpuBlockConvolver>(st.taps_f32.data(), taps, plan.channels,
                                                               static_cast<int>(block));
    }
    note << (k.partitioned[j] ? k.partitioned[j]->describe() : std::string("direct"));
    k.notes.push_back(note.str());
  }
  return k;
}

struct LiveChain {
  std::vector<std::unique_ptr<Op>> ops;
  std::vector<MetricsOp*> metrics;  // in plan order
  std::unique_ptr<MetricsOp> output;
  std::vector<Planes> bufs;         // bufs[j] = output of op j
};

LiveChain make_chain(const Plan& plan, const LiveKernels& k) {
  LiveChain chain;
  const int ch = plan.channels;
  std::int64_t delay = 0;  // frames held back by the stages so far
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    switch (st.type) {
      case StageType::fir:
        chain.ops.push_back(std::make_unique<FirOp>(st, ch, k.partitioned[j].get(), delay));
        delay += st.lookahead;
        break;
      case StageType::gain:
        chain.ops.push_back(std::make_unique<GainOp>(st.gain));
        break;
      case StageType::metrics: {
        auto m = std::make_unique<MetricsOp>(st.metrics_slot, ch);
        chain.metrics.push_back(m.get());
        chain.ops.push_back(std::move(m));
        break;
      }
    }
  }
  chain.output = std::make_unique<MetricsOp>(plan.output_slot(), ch);
  chain.bufs.assign(chain.ops.size(), Planes(static_cast<std::size_t>(ch)));
  return chain;
}

// Runs one step: `in` (n frames, the source) through every op; `last` when
// the source has ended. Returns the chain's output planes (`in` itself when
// there are no stages: then n must be in[c].size()).
const Planes& step(LiveChain& chain, const Planes& in, std::int64_t n, bool last) {
  for (MetricsOp* m : chain.metrics) m->source().feed(in, n);
  chain.output->source().feed(in, n);
  const Planes* cur = &in;
  std::int64_t frames = n;
  for (std::size_t j = 0; j < chain.ops.size(); ++j) {
    Planes& out = chain.bufs[j];
    for (auto& v : out) v.clear();
    chain.ops[j]->push(*cur, frames, out);
    if (last) chain.ops[j]->finish(out);
    cur = &out;
    frames = static_cast<std::int64_t>(out[0].size());
  }
  return *cur;
}

// Added latency, in 10 µs bins up to 1 s (the max is kept exactly).
class LatencyHistogram {
 public:
  void add(double ms) {
    const auto bin = static_cast<std::size_t>(std::min(ms * 100.0, static_cast<double>(kBins - 1)));
    ++bins_[bin];
    ++count_;
    max_ = std::max(max_, ms);
  }
  [[nodiscard]] double quantile(double q) const {
    if (count_ == 0) return 0.0;
    const auto want = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count_)));
    std::int64_t seen = 0;
    for (std::size_t b = 0; b < kBins; ++b) {
      seen += bins_[b];
      if (seen >= want) return std::min(max_, (static_cast<double>(b) + 1.0) / 100.0);
    }
    return max_;
  }
  [[nodiscard]] double max() const { return max_; }
  [[nodiscard]] std::int64_t count() const { return count_; }

 private:
  static constexpr std::size_t kBins = 100000;
  std::vector<std::int64_t> bins_ = std::vector<std::int64_t>(kBins, 0);
  std::int64_t count_ = 0;
  double max_ = 0.0;
};

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

RunReport run_live(const Config& config, const RunOptions& options, Source& source, const Plan& plan,
                   const std::optional<SinkFormat>& sink_format, RunReport report,
                   std::chrono::steady_clock::time_point t0) {
  auto log = [&](const std::string& m) {
    if (options.log) options.log(m);
  };
  const double target = *config.execution.latency_ms;
  const std::int64_t block = plan.chunk_frames;
  const int ch = plan.channels;
  // What one block costs here, measured on zeros through a chain of its own.
  auto measure_block = [&](const LiveKernels& k) {
    LiveChain warm = make_chain(plan, k);
    const Planes zeros(static_cast<std::size_t>(ch), std::vector<float>(static_cast<std::size_t>(block), 0.0f));
    constexpr int kWarm = 30, kSkip = 5;
    std::pair<double, double> mean_max{0.0, 0.0};
    for (int i = 0; i < kWarm; ++i) {
      const auto t = Clock::now();
      static_cast<void>(step(warm, zeros, block, false));
      const double ms = ms_since(t);
      if (i < kSkip) continue;
      mean_max.first += ms / (kWarm - kSkip);
      mean_max.second = std::max(mean_max.second, ms);
    }
    return mean_max;
  };
  const int device = config.execution.devices.empty() ? 0 : config.execution.devices.front();
  const BackendKind asked = config.execution.backend;
  LiveKernels kernels = make_live_kernels(plan, block, asked == BackendKind::cuda ? device : -1);
  auto [warm_mean, warm_max] = measure_block(kernels);
#ifdef SIGSTREAM_HAVE_CUDA
  // auto: the CPU, unless it cannot keep up and a GPU is there.
  if (asked == BackendKind::automatic && warm_mean > 0.5 * target && !cuda_devices().empty()) {
    log("live: the CPU needs " + std::to_string(warm_mean) + " ms a block; moving the FIR stages to CUDA device " +
        std::to_string(device));
    try {
      LiveKernels gpu = make_live_kernels(plan, block, device);
      const auto [gpu_mean, gpu_max] = measure_block(gpu);
      kernels = std::move(gpu);
      warm_mean = gpu_mean;
      warm_max = gpu_max;
    } catch (const Error& e) {
      log("live: CUDA could not take the FIR stages (" + std::string(e.what()) + "); staying on the CPU");
    }
  }
#endif
  const bool on_gpu = kernels.where.rfind("CUDA", 0) == 0;
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    if (plan.stages[j].type != StageType::fir) continue;
    report.stages[j].method = kernels.partitioned[j] ? FirMethod::fft : FirMethod::direct;
    if (kernels.partitioned[j]) report.stages[j].detail += "; live: " + kernels.partitioned[j]->describe();
  }
  std::int64_t delay = 0;
  for (const PlannedStage& st : plan.stages) delay += st.lookahead;
  {
    std::ostringstream o;
    o << "live: blocks of " << block << " frames (" << static_cast<double>(block) * 1000.0 / plan.sample_rate
      << " ms at " << plan.sample_rate << " Hz) on " << kernels.where;
    for (const std::string& n : kernels.notes) o << "; " << n;
    o << "; inherent delay: the block";
    if (delay > 0) o << " + " << delay << " frames of look-ahead (" << static_cast<double>(delay) * 1000.0 / plan.sample_rate << " ms, mode same)";
    o << "; compute " << warm_mean << " ms a block (max " << warm_max << ")";
    log(o.str());
    if (warm_mean > 0.5 * target)
      log("warning: --latency " + std::to_string(target) + " ms is below what this machine can hold for these stages (" +
          std::to_string(warm_mean) + " ms of compute a block): expect late chunks");
  }

  std::optional<AudioSink> sink;
  if (sink_format) sink.emplace(*config.sink.file, *sink_format, plan.sample_rate, ch);
  std::optional<AtomicFile> json_file, csv_file;
  if (config.stats.json) json_file.emplace(*config.stats.json);
  if (config.stats.csv) {
    csv_file.emplace(*config.stats.csv);
    write_all(*csv_file, stats_csv_header());
  }
  report.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();
  report.backend = on_gpu ? "cuda" : "cpu";
  report.device = "live on " + kernels.where;
#ifdef SIGSTREAM_HAVE_CUDA
  if (on_gpu)
    for (const CudaDeviceInfo& d : cuda_devices())
      if (d.ordinal == device) report.device = d.name + " (live FIR stages; the rest on the CPU)";
#endif

  // Like JACK and BruteFIR: real-time priority for the live thread where the
  // system grants it (root, CAP_SYS_NICE or an rtprio limit), so that other
  // work does not preempt a block; without it, ordinary scheduling. Only for
  // a stream (a file would run flat out at that priority), and given back
  // at the end.
  struct Priority {
    int policy = SCHED_OTHER;
    sched_param param{};
    bool raised = false;
    ~Priority() {
      if (raised) static_cast<void>(pthread_setschedparam(pthread_self(), policy, &param));
    }
  } priority;
  if (source.is_stream()) {
    pthread_getschedparam(pthread_self(), &priority.policy, &priority.param);
    sched_param sp{};
    sp.sched_priority = std::min(50, sched_get_priority_max(SCHED_FIFO));
    priority.raised = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
    log(priority.raised ? "live: real-time priority (SCHED_FIFO " + std::to_string(sp.sched_priority) + ")"
                        : std::string("live: no real-time priority here (ordinary scheduling; blocks may wait "
                                      "behind other work)"));
  }
  LiveChain chain = make_chain(plan, kernels);
  HostBlock in_block = make_host_block(plan.input_type, ch, block);
  Planes src(static_cast<std::size_t>(ch), std::vector<float>(static_cast<std::size_t>(block)));
  std::vector<float*> src_ptrs(static_cast<std::size_t>(ch));
  for (int c = 0; c < ch; ++c) src_ptrs[static_cast<std::size_t>(c)] = src[static_cast<std::size_t>(c)].data();
  HostBlock out_block = make_host_block(plan.output_type, ch, block);
  std::vector<const float*> out_ptrs(static_cast<std::size_t>(ch));

  LatencyHistogram latency, compute;  // added latency; of it, the stages' part (read to output ready)
  std::int64_t late = 0, source_frames = 0, out_frames = 0, out_chunks = 0;
  std::vector<std::int64_t> metric_frames(plan.metric_names.size(), 0);
  std::vector<std::int64_t> metric_rows(plan.metric_names.size(), 0);
  Progress progress(0, plan.sample_rate, options.progress);
  std::vector<ChannelMetrics> row;
  auto record = [&](int slot, std::int64_t n, const std::vector<ChannelMetrics>& m) {
    if (n == 0) return;
    MetricsReport& rep = report.metrics[static_cast<std::size_t>(slot)];
    for (std::size_t c = 0; c < m.size(); ++c) rep.totals[c].merge(m[c]);
    const std::int64_t index = metric_rows[static_cast<std::size_t>(slot)]++;
    const std::int64_t start = metric_frames[static_cast<std::size_t>(slot)];
    metric_frames[static_cast<std::size_t>(slot)] += n;
    if (csv_file) write_all(*csv_file, stats_csv_rows(rep.name, ChunkMetricsRow{index, start, n, m}));
  };

  for (bool ended = false; !ended;) {
    throw_if_interrupted();
    const std::int64_t got = source.read(in_block, 0, block);
    const auto arrived = Clock::now();
    source_frames += got;
    ended = got < block;
    if (ended && source_frames == 0) throw io_error(source.path() + ": holds no audio frames (the stream is empty)");
    if (got > 0) kernels::cpu::deinterleave(in_block, 0, got, src_ptrs.data());
    const Planes& y = step(chain, src, got, ended);
    const auto n = chain.ops.empty() ? got : static_cast<std::int64_t>(y[0].size());
    if (n > 0) {
      compute.add(ms_since(arrived));
      chain.output->measure(y, n);
      if (sink) {
        if (out_block.capacity < n) out_block = make_host_block(plan.output_type, ch, n);  // tails at the end
        out_block.frames = n;
        for (int c = 0; c < ch; ++c) out_ptrs[static_cast<std::size_t>(c)] = y[static_cast<std::size_t>(c)].data();
        report.clipped_samples += kernels::cpu::interleave(out_ptrs.data(), n, plan.output_bits, out_block);
        sink->write(out_block);
      }
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - arrived).count();
      latency.add(ms);
      if (ms > target) ++late;
      ++out_chunks;
      out_frames += n;
    }
    for (MetricsOp* m : chain.metrics) {
      const std::int64_t k = m->take(row);
      record(m->slot(), k, row);
    }
    const std::int64_t k = chain.output->take(row);
    record(chain.output->slot(), k, row);
    progress.update(out_frames);
  }
  progress.finish();

  report.input_frames = source_frames;
  report.output_frames = out_frames;
  LatencyReport lr;
  lr.target = target;
  lr.p50 = latency.quantile(0.50);
  lr.p99 = latency.quantile(0.99);
  lr.max = latency.max();
  lr.late_chunks = late;
  lr.chunks = out_chunks;
  lr.block_frames = block;
  lr.compute_p99 = compute.quantile(0.99);
  lr.compute_max = compute.max();
  report.latency = lr;
  {
    std::ostringstream o;
    o << "live: " << out_chunks << " blocks, added latency p50 " << lr.p50 << " ms, p99 " << lr.p99 << " ms, max "
      << lr.max << " ms; " << late << " late (over " << target << " ms); the stages' part p99 " << lr.compute_p99
      << " ms, max " << lr.compute_max << " ms";
    log(o.str());
  }
  report.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (json_file) write_all(*json_file, stats_json(report));
  if (sink) sink->commit();
  if (json_file) json_file->commit();
  if (csv_file) csv_file->commit();
  return report;
}

}  // namespace sigstream
