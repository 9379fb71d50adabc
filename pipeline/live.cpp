// Live mode (see live.hpp): the chain of live ops (stages, metrics, warm-up)
// and LiveRun, one run as an object with small methods (placement, outputs
// and the thread's scheduling, the lanes with their input ring and write
// turn, the accounting, the latency report). Over 600 lines (~980) and one
// file on purpose: the chain exists only for LiveRun, and LiveRun's methods
// share its state (the ring, the turns, the counts) as members.
#include "pipeline/live.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cleanup.hpp"
#include "core/error.hpp"
#include "core/trace.hpp"
#include "kernels/cpu/layout.hpp"
#include "pipeline/backends/chain_walk.hpp"
#include "pipeline/backends/cuda_backend.hpp"
#include "pipeline/excerpt.hpp"
#include "pipeline/io/atomic_file.hpp"
#include "pipeline/io/audio_sink.hpp"
#include "pipeline/io/byte_stream.hpp"
#include "pipeline/io/stats_writer.hpp"
#include "pipeline/progress.hpp"
#include "stages/fir/spec.hpp"
#include "stages/metrics/metrics.hpp"
#include "stages/registry.hpp"
#include "stages/step_live.hpp"

namespace sigstream {

std::int64_t live_block_frames(double latency_ms, double rate) noexcept {
  return std::max<std::int64_t>(1, std::llround(latency_ms * rate / 1000.0));
}

namespace {

using Clock = std::chrono::steady_clock;
using Planes = LivePlanes; // [channel][frame]

// Each stage's input rate, then the output's ([stages.size()]).
std::vector<double> input_rates(const Plan& plan) {
  std::vector<double> r{plan.sample_rate};
  for (const PlannedStage& st : plan.stages)
    r.push_back(r.back() * static_cast<double>(st.up) / static_cast<double>(st.down));
  return r;
}

// The time each stage holds back before its input (the look-ahead of the
// stages before it), then the whole chain's ([stages.size()]); a resampler
// counts its look-ahead in up-sampled frames.
std::vector<double> delays_s(const Plan& plan) {
  const std::vector<double> rates = input_rates(plan);
  std::vector<double> d{0.0};
  for (std::size_t j = 0; j < plan.stages.size(); ++j)
    d.push_back(d.back() + static_cast<double>(plan.stages[j].lookahead) /
                               (static_cast<double>(plan.stages[j].up) * rates[j]));
  return d;
}

// The stages' live kernels (null where a kind prepares none), made once
// and shared by the chains made from them (the warm-up chain leaves them as
// it found them: zeros in, zeros kept).
struct LiveKernels {
  std::vector<std::unique_ptr<LiveKernel>> per_stage;
  std::vector<std::string> notes;
  std::string where = "the CPU, one thread";
};

// `device` >= 0: each kind that has a GPU kernel gets it there; else (and
// for the other kinds) the CPU's.
LiveKernels make_live_kernels(const Plan& plan, std::int64_t block, int device) {
  LiveKernels k;
  if (device >= 0)
    k.where = "CUDA device " + std::to_string(device) + " (FIR stages), the CPU (the rest)";
  k.per_stage.resize(plan.stages.size());
  const std::vector<double> rates = input_rates(plan);
  for (std::size_t j = 0; j < plan.stages.size(); ++j) {
    const PlannedStage& st = plan.stages[j];
    const StageKind& kind = stage_kind(st.type);
    // A stage's blocks last as long as the source's: behind a resampler
    // they hold other frame counts.
    const std::int64_t stage_block = std::max<std::int64_t>(
        1, std::llround(static_cast<double>(block) * rates[j] / plan.sample_rate));
    if (device >= 0) {
#ifdef SIGSTREAM_HAVE_CUDA
      k.per_stage[j] = make_cuda_live_kernel(st, LiveContext{st.channels_in, stage_block, device});
#else
      throw Error(ErrorKind::cuda, "live mode on CUDA: this sigstream was built without CUDA");
#endif
    }
    if (!k.per_stage[j] && kind.live_kernel != nullptr)
      k.per_stage[j] = kind.live_kernel(st, LiveContext{st.channels_in, stage_block, -1});
    if (k.per_stage[j])
      k.notes.push_back(k.per_stage[j]->describe());
  }
  return k;
}

struct LiveChain {
  const Plan* plan = nullptr;
  std::vector<bool> observers; // observer_stages(*plan)
  // ops[j]: stage j's running operation (null for an observer of a chain
  // made without them); bufs[j]: a step's output planes.
  std::vector<std::unique_ptr<LiveOp>> ops;
  std::vector<Planes> bufs;
  // The observers among ops, in plan order, with their metrics slots.
  std::vector<std::pair<LiveObserver*, int>> metrics;
  std::unique_ptr<LiveObserver> output; // the metrics kind's, on the chain's output
};

// `observers`: with the metrics stages and the output's metrics; without
// (a redundant lane's chain, which only computes), neither, and the output
// block keeps no source frames.
LiveChain make_chain(const Plan& plan, const LiveKernels& k, bool observers = true) {
  LiveChain chain;
  chain.plan = &plan;
  chain.observers = observer_stages(plan);
  chain.ops.resize(plan.stages.size());
  chain.bufs.resize(plan.stages.size());
  // A stage's `phase`: the time the stages before it hold back, in its own input frames.
  const std::vector<double> rates = input_rates(plan);
  const std::vector<double> delay = delays_s(plan);
  const auto context = [&](std::size_t j) {
    return LiveOpContext{.kernel = k.per_stage[j].get(),
                         .channels = plan.stages[j].channels_in,
                         .phase = std::llround(delay[j] * rates[j]),
                         .paired = plan.paired(j)};
  };
  walk_stages(
      plan, chain.observers,
      [&](std::size_t j, const PlannedStage& st) {
        if (!observers)
          return;
        std::unique_ptr<LiveOp> op = stage_kind(st.type).live_op(st, context(j));
        auto* observer = dynamic_cast<LiveObserver*>(op.get());
        if (observer == nullptr)
          throw internal_error("stage '" + st.name + "': an observer's live op must measure");
        chain.metrics.emplace_back(observer, st.metrics_slot);
        chain.ops[j] = std::move(op);
      },
      [&](std::size_t j, const PlannedStage& st) {
        // The kind's own live op where it has one (fir's partitioned
        // convolver), else its CPU step over the stage's history
        // (stages/step_live.hpp).
        const StageKind& kind = stage_kind(st.type);
        chain.ops[j] =
            kind.live_op != nullptr ? kind.live_op(st, context(j)) : make_step_live_op(st);
        // Its output planes: as many as the stage's output channels.
        chain.bufs[j].resize(static_cast<std::size_t>(st.channels_out));
      });
  chain.output = make_metrics_live_observer(plan.output_channels,
                                            observers && plan.paired(plan.stages.size()));
  return chain;
}

// Runs one step, by the chain walk's rule (pipeline/backends/chain_walk.hpp):
// `in` (n frames, the source) through every stage, an observer measuring its
// input and passing it on, a step turning it into the next; `last` when the
// source has ended. Returns the chain's output planes and sets `out_frames`
// to their frames (`in` itself and n when no stage transforms).
const Planes& step(LiveChain& chain, const Planes& in, std::int64_t n, bool last,
                   std::int64_t& out_frames) {
  for (const auto& [m, slot] : chain.metrics)
    m->feed_source(in, n);
  chain.output->feed_source(in, n);
  const Planes* cur = &in;
  std::int64_t frames = n;
  walk_stages(
      *chain.plan, chain.observers,
      [&](std::size_t j, const PlannedStage& /*st*/) {
        if (chain.ops[j])
          static_cast<LiveObserver&>(*chain.ops[j]).measure(*cur, frames);
      },
      [&](std::size_t j, const PlannedStage& /*st*/) {
        Planes& out = chain.bufs[j];
        for (auto& v : out)
          v.clear();
        chain.ops[j]->push(*cur, frames, out);
        if (last)
          chain.ops[j]->finish(out);
        cur = &out;
        frames = static_cast<std::int64_t>(out[0].size());
      });
  out_frames = frames;
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
    if (count_ == 0)
      return 0.0;
    const auto want = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(count_)));
    std::int64_t seen = 0;
    for (std::size_t b = 0; b < kBins; ++b) {
      seen += bins_[b];
      if (seen >= want)
        return std::min(max_, (static_cast<double>(b) + 1.0) / 100.0);
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

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
double ms_since(Clock::time_point t) {
  return ms_between(t, Clock::now());
}

// A spinning wait's pause between two looks (the CPU's hint that it spins).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// One live thread's own chain (execution.redundant runs two): its kernels
// and their state, its planes, and what it did.
struct Lane {
  LiveKernels kernels;
  LiveChain chain;
  bool primary = true; // keeps the metrics (the other lane's chain has none)
  Planes src;
  std::vector<float*> src_ptrs;
  HostBlock out_block;
  std::vector<const float*> out_ptrs;
  alignas(64) std::atomic<std::int64_t> consumed{0}; // blocks taken from the input ring
  alignas(64) std::int64_t written = 0;              // blocks whose output it wrote
  std::int64_t late_covered = 0; // its own result over the target, the other lane's written first
  std::int64_t preempted = 0;    // involuntary context switches
  std::int64_t clipped = 0;      // of the block it interleaved last
  rusage block_usage{};          // the thread's, when it took the block (trace)
};

void init_lane(Lane& lane, const Plan& plan, LiveKernels kernels, bool primary,
               std::int64_t block) {
  const auto ch = static_cast<std::size_t>(plan.channels);
  lane.kernels = std::move(kernels);
  lane.chain = make_chain(plan, lane.kernels, primary);
  lane.primary = primary;
  lane.src.assign(ch, std::vector<float>(static_cast<std::size_t>(block)));
  lane.src_ptrs.resize(ch);
  for (std::size_t c = 0; c < ch; ++c)
    lane.src_ptrs[c] = lane.src[c].data();
  lane.out_block = make_host_block(plan.output_type, plan.output_channels, block);
  lane.out_ptrs.resize(static_cast<std::size_t>(plan.output_channels));
}

// What a lane keeps of a block it took (the ring slot may be read into again).
struct BlockInfo {
  std::int64_t got = 0;
  bool ended = false;
  Clock::time_point arrived;
  double read_ms = 0.0; // how long the read that brought it took (waited, mostly)
};

// A block as read, in the ring the lanes share.
struct InputSlot {
  HostBlock data;
  BlockInfo info;
};

// Blocks the input ring holds with two lanes: a second of input (a lane may
// fall that far behind before the other waits for it), within 64 MiB, and
// at least two.
std::int64_t ring_blocks(double latency_ms, std::int64_t block, int channels) {
  const auto per_block = std::max<std::int64_t>(1, block * channels * 4);
  const auto second = static_cast<std::int64_t>(std::ceil(1000.0 / latency_ms));
  return std::clamp<std::int64_t>(std::min(second, (std::int64_t{64} << 20) / per_block), 2, 1024);
}

struct StopLane {}; // another lane has failed: this one leaves quietly

} // namespace

namespace {

// Thread priority as it was, put back at the end of the run (see place_thread).
struct Priority {
  int policy = SCHED_OTHER;
  sched_param param{};
  bool raised = false;
  Priority() = default;
  Priority(const Priority&) = delete;
  Priority& operator=(const Priority&) = delete;
  ~Priority() {
    if (raised)
      static_cast<void>(pthread_setschedparam(pthread_self(), policy, &param));
  }
};

// SIGSTREAM_TRACE: each late block's story, printed however the run ends
// (SIGINT is how a live stream usually does).
struct LateStory {
  std::vector<std::string> lines;
  std::function<void(const std::string&)> log;
  LateStory() = default;
  LateStory(const LateStory&) = delete;
  LateStory& operator=(const LateStory&) = delete;
  ~LateStory() {
    if (!log)
      return;
    try {
      for (const std::string& line : lines)
        log("trace: " + line);
    } catch (...) { // nothing to be done about a log that fails here
    }
  }
};

// One live run (DESIGN §1b: an engine as an object with small methods):
// placement (where the stages' kernels run, measured), the outputs and the
// thread's scheduling, the lanes with their shared input ring and write
// turn, the accounting of each block, and the latency report.
class LiveRun {
public:
  LiveRun(const Config& config, const RunOptions& options, Source& source, const Plan& plan,
          const std::optional<SinkFormat>& sink_format, RunReport report,
          std::chrono::steady_clock::time_point t0)
      : config_(config), options_(options), source_(source), plan_(plan), sink_format_(sink_format),
        report_(std::move(report)), t0_(t0), target_(*config.execution.latency_ms),
        block_(plan.chunk_frames), ch_(plan.channels),
        device_(config.execution.devices.empty() ? 0 : config.execution.devices.front()),
        redundant_(config.execution.redundant),
        busy_(config.execution.busy_poll || config.execution.redundant), excerpt_(plan) {
    late_story_.log = options.log;
  }

  RunReport run() {
    LiveKernels kernels = place();
    log_setup(kernels);
    open_outputs();
    place_thread();
    // execution.busy_poll: the waits for input and output spin on this
    // thread. Measured on the H100 VM (32 channels, K = 65536, 150 s): 12 late
    // blocks sleeping between blocks, 0 spinning (bench/RESULTS.md, stop 15).
    const BusyPollScope busy_poll(busy_);
    log_spin();
    progress_.emplace(0, plan_.output_rate, options_.progress);
    have_usage_ = [] {
      rusage u{};
      return getrusage(RUSAGE_THREAD, &u) == 0;
    }();
    metric_frames_.assign(plan_.metric_names.size(), 0);
    metric_rows_.assign(plan_.metric_names.size(), 0);
    tracing_ = trace_on();
    run_lanes(std::move(kernels));
    progress_->finish();
    report_latency();
    return finish();
  }

private:
  void log(const std::string& m) const {
    if (options_.log)
      options_.log(m);
  }

  // --- placement -----------------------------------------------------------

  // What one block costs here, measured on zeros through a chain of its own:
  // {mean, max} ms.
  [[nodiscard]] std::pair<double, double> measure_block(const LiveKernels& k) const {
    LiveChain warm = make_chain(plan_, k);
    const Planes zeros(static_cast<std::size_t>(ch_),
                       std::vector<float>(static_cast<std::size_t>(block_), 0.0f));
    // 30 blocks, 5 of them unmeasured; a block of a million samples or more
    // (a huge rate, latency or channel count) once, unskipped (30 of them
    // took minutes: found by fuzz_live, a 2.1 GHz WAV; counting frames alone
    // left a 257-channel WAV at 77 MHz six blocks of 40 M samples: 2.5 s).
    const int kWarm = static_cast<int>(std::clamp<std::int64_t>(
        (std::int64_t{1} << 20) / std::max<std::int64_t>(block_ * std::max(ch_, 1), 1), 1, 30));
    const int kSkip = kWarm > 5 ? 5 : 0;
    std::pair<double, double> mean_max{0.0, 0.0};
    for (int i = 0; i < kWarm; ++i) {
      const auto t = Clock::now();
      std::int64_t frames = 0;
      static_cast<void>(step(warm, zeros, block_, false, frames));
      const double ms = ms_since(t);
      if (i < kSkip)
        continue;
      mean_max.first += ms / (kWarm - kSkip);
      mean_max.second = std::max(mean_max.second, ms);
    }
    return mean_max;
  }

  // The first lane's kernels: where the config asks, or for auto the CPU
  // unless it cannot keep up and a GPU is there; the report learns each
  // stage's method and detail.
  LiveKernels place() {
    const BackendKind asked = config_.execution.backend;
    LiveKernels kernels =
        make_live_kernels(plan_, block_, asked == BackendKind::cuda ? device_ : -1);
    std::tie(warm_mean_, warm_max_) = measure_block(kernels);
#ifdef SIGSTREAM_HAVE_CUDA
    if (asked == BackendKind::automatic &&
        live_moves_to_gpu(warm_mean_, target_, !cuda_devices().empty())) {
      log("live: the CPU needs " + std::to_string(warm_mean_) +
          " ms a block; moving the FIR stages to CUDA device " + std::to_string(device_));
      try {
        LiveKernels gpu = make_live_kernels(plan_, block_, device_);
        std::tie(warm_mean_, warm_max_) = measure_block(gpu);
        kernels = std::move(gpu);
      } catch (const Error& e) {
        log("live: CUDA could not take the FIR stages (" + std::string(e.what()) +
            "); staying on the CPU");
      }
    }
#endif
    on_gpu_ = kernels.where.rfind("CUDA", 0) == 0;
    for (std::size_t j = 0; j < plan_.stages.size(); ++j) {
      const LiveKernel* k = kernels.per_stage[j].get();
      if (k == nullptr)
        continue;
      if (const auto m = k->method())
        report_.stages[j].as<FirPlan>().method = *m;
      if (const std::string d = k->detail(); !d.empty())
        report_.stages[j].detail += "; " + d;
    }
    where_ = kernels.where;
    return kernels;
  }

  void log_setup(const LiveKernels& kernels) const {
    const double delay_s = delays_s(plan_).back();
    std::ostringstream o;
    o << "live: blocks of " << block_ << " frames ("
      << static_cast<double>(block_) * 1000.0 / plan_.sample_rate << " ms at " << plan_.sample_rate
      << " Hz) on " << kernels.where;
    if (redundant_)
      o << ", twice (two redundant lanes)";
    for (const std::string& n : kernels.notes)
      o << "; " << n;
    o << "; inherent delay: the block";
    if (delay_s > 0)
      o << " + " << delay_s * 1000.0 << " ms of look-ahead (same-mode filters, resamplers)";
    o << "; compute " << warm_mean_ << " ms a block (max " << warm_max_ << ")";
    log(o.str());
    if (live_block_too_slow(warm_mean_, target_))
      log("warning: --latency " + std::to_string(target_) +
          " ms is below what this machine can hold for these stages (" +
          std::to_string(warm_mean_) + " ms of compute a block): expect late chunks");
  }

  // --- outputs and the thread ----------------------------------------------

  void open_outputs() {
    if (sink_format_)
      sink_.emplace(*config_.sink.file, *sink_format_, plan_.output_rate, plan_.output_channels);
    if (config_.stats.json)
      json_file_.emplace(*config_.stats.json);
    if (config_.stats.csv) {
      csv_file_.emplace(*config_.stats.csv);
      write_all(*csv_file_, stats_csv_header());
    }
    report_.setup_s = std::chrono::duration<double>(Clock::now() - t0_).count();
    report_.backend = on_gpu_ ? "cuda" : "cpu";
    report_.device = "live on " + where_;
#ifdef SIGSTREAM_HAVE_CUDA
    if (on_gpu_)
      for (const CudaDeviceInfo& d : cuda_devices())
        if (d.ordinal == device_)
          report_.device = d.name + " (live FIR stages; the rest on the CPU)";
#endif
  }

  // execution.redundant: two lanes (threads), each with its own chain,
  // compute every block; whichever reads a block first puts it in a ring
  // both take it from, and whichever finishes it first writes it. A lane
  // whose CPU stalls (a virtual machine's vCPU not run for a millisecond or
  // two) falls behind and catches up while the other writes. Both spin.
  //
  // Like JACK and BruteFIR: real-time priority for the live thread where the
  // system grants it (root, CAP_SYS_NICE or an rtprio limit), so that other
  // work does not preempt a block; without it, ordinary scheduling. Only for
  // a stream (a file would run flat out at that priority), and given back
  // at the end. Not with busy polling: a real-time thread that never sleeps
  // would starve everything else on its CPU (the producer, the consumer).
  void place_thread() {
    if (redundant_) {
      cpu_set_t cpus;
      CPU_ZERO(&cpus);
      if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < 4)
        log("warning: --redundant on " + std::to_string(CPU_COUNT(&cpus)) +
            " CPUs: its two spinning threads leave little room for the producer and the "
            "consumer; it pays off with four or more");
    }
    spins_ =
        busy_ && (source_.is_stream() || (config_.sink.file && is_std_stream(*config_.sink.file)));
    if (source_.is_stream() && !busy_) {
      pthread_getschedparam(pthread_self(), &priority_.policy, &priority_.param);
      sched_param sp{};
      sp.sched_priority = std::min(50, sched_get_priority_max(SCHED_FIFO));
      priority_.raised = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
      log(priority_.raised
              ? "live: real-time priority (SCHED_FIFO " + std::to_string(sp.sched_priority) + ")"
              : std::string("live: no real-time priority here (ordinary scheduling; blocks may "
                            "wait behind other work)"));
    }
  }

  void log_spin() const {
    if (redundant_)
      log("live: redundant: two threads compute every block, the first to finish writes it (two "
          "cores busy" +
          std::string(on_gpu_ ? ", the GPU work twice)" : ")"));
    else if (spins_)
      log("live: busy polling: the waits for the input and output pipes spin (one core busy, "
          "ordinary scheduling)");
    else if (config_.execution.busy_poll)
      log("live: busy polling has nothing to wait for here (a file in, a file out): it changes "
          "nothing");
  }

  // --- the lanes -------------------------------------------------------------

  void fail(std::exception_ptr e) {
    {
      const std::lock_guard<std::mutex> hold(error_mutex_);
      if (!first_error_)
        first_error_ = std::move(e);
    }
    stop_.store(true);
    source_.cancel(); // a lane waiting for input in a read gives up
  }

  void check_stop() const {
    throw_if_interrupted();
    if (stop_.load(std::memory_order_relaxed))
      throw StopLane{};
  }

  [[nodiscard]] std::int64_t slowest_lane() const {
    std::int64_t m = std::numeric_limits<std::int64_t>::max();
    for (const auto& lane : lanes_)
      m = std::min(m, lane->consumed.load(std::memory_order_acquire));
    return m;
  }

  // Block b's input: from the ring when a lane has read it, else read here.
  // With two lanes a lane takes the reader's turn only when the input is
  // there, so that a lane that stalls does not hold it while the other waits.
  const InputSlot& obtain(std::int64_t b) {
    InputSlot& slot = ring_[static_cast<std::size_t>(b % ring_size_)];
    for (;;) {
      if (blocks_read_.load(std::memory_order_acquire) > b)
        return slot;
      check_stop();
      if (lanes_.size() > 1 && !source_.ready_now(block_)) {
        cpu_relax();
        continue;
      }
      std::unique_lock<std::mutex> turn(reader_, std::try_to_lock);
      if (!turn.owns_lock()) {
        cpu_relax();
        continue;
      }
      if (blocks_read_.load(std::memory_order_acquire) > b)
        return slot;
      while (slowest_lane() <= b - ring_size_) { // the slot's last block is still to be taken
        check_stop();
        cpu_relax();
      }
      const auto read_start = Clock::now();
      const std::int64_t got = source_.read(slot.data, 0, block_);
      slot.info.arrived = Clock::now();
      slot.info.read_ms = ms_between(read_start, slot.info.arrived);
      slot.data.frames = got;
      slot.info.got = got;
      slot.info.ended = got < block_;
      excerpt_.source_block(slot.data, source_frames_);
      source_frames_ += got;
      if (slot.info.ended && source_frames_ == 0)
        throw io_error(source_.path() + ": holds no audio frames (the stream is empty)");
      blocks_read_.store(b + 1, std::memory_order_release);
      return slot;
    }
  }

  // The lane's output of a block (n > 0 frames) as the sink takes it, made
  // before the lane asks for the write turn.
  void interleave_output(Lane& lane, const Planes& y, std::int64_t n) const {
    HostBlock& out = lane.out_block;
    if (out.capacity < n)
      out = make_host_block(plan_.output_type, plan_.output_channels, n); // tails at the end
    out.frames = n;
    for (int c = 0; c < plan_.output_channels; ++c)
      lane.out_ptrs[static_cast<std::size_t>(c)] = y[static_cast<std::size_t>(c)].data();
    lane.clipped = kernels::cpu::interleave(lane.out_ptrs.data(), n, plan_.output_bits, out);
  }

  // Writes the lane's output of a block (n > 0 frames, interleaved) and
  // accounts for it; the caller holds the write turn.
  void write_output(Lane& lane, const Planes& y, std::int64_t n, const BlockInfo& in,
                    Clock::time_point ready) {
    const Clock::time_point arrived = in.arrived;
    const double compute_ms = ms_between(arrived, ready);
    double last_write_ms = 0.0;
    compute_.add(compute_ms);
    if (compute_ms > target_)
      ++late_in_compute_;
    if (!sink_) {
      excerpt_.output_planes(y, n, out_frames_);
    } else {
      const HostBlock& out = lane.out_block;
      report_.clipped_samples += lane.clipped;
      excerpt_.output_block(out, out_frames_); // outside the write's timing
      rusage before{}, after{};
      const bool watched = have_usage_ && getrusage(RUSAGE_THREAD, &before) == 0;
      const auto write_start = Clock::now();
      sink_->write(out);
      last_write_ms = ms_since(write_start);
      write_max_ms_ = std::max(write_max_ms_, last_write_ms);
      if (watched && compute_ms <= target_ && ms_since(arrived) > target_ &&
          getrusage(RUSAGE_THREAD, &after) == 0) {
        late_write_slept_ += after.ru_nvcsw > before.ru_nvcsw ? 1 : 0;
        late_write_faulted_ +=
            after.ru_minflt + after.ru_majflt > before.ru_minflt + before.ru_majflt ? 1 : 0;
      }
    }
    const double ms = ms_since(arrived);
    latency_.add(ms);
    if (ms > target_)
      ++late_;
    if (tracing_ && ms > target_ && late_story_.lines.size() < kMaxLate)
      late_story_.lines.push_back(late_block_story(lane, in, ms, compute_ms, last_write_ms));
    ++out_chunks_;
    out_frames_ += n;
    progress_->update(out_frames_);
  }

  // When its input came (CLOCK_MONOTONIC, to line it up with other clocks on
  // the machine), how long the read had waited, the stages' part and the GPU
  // step's parts, the write, and what the kernel did to the thread meanwhile.
  [[nodiscard]] std::string late_block_story(const Lane& lane, const BlockInfo& in, double ms,
                                             double compute_ms, double last_write_ms) const {
    rusage now{};
    static_cast<void>(getrusage(RUSAGE_THREAD, &now));
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(3);
    o << "late block " << out_chunks_ << ": input at "
      << std::chrono::duration<double>(in.arrived.time_since_epoch()).count()
      << " s (monotonic) after a " << in.read_ms << " ms read; " << ms << " ms: stages "
      << compute_ms << ", write " << last_write_ms << "; voluntary switches "
      << now.ru_nvcsw - lane.block_usage.ru_nvcsw << ", preempted "
      << now.ru_nivcsw - lane.block_usage.ru_nivcsw << ", page faults "
      << now.ru_minflt + now.ru_majflt - lane.block_usage.ru_minflt - lane.block_usage.ru_majflt;
    if (lanes_.size() > 1)
      o << " (since lane " << (lane.primary ? 1 : 2) << ", which wrote it, took it)";
    for (const auto& k : lane.kernels.per_stage)
      if (k)
        if (const std::string d = k->last_step(); !d.empty())
          o << "; " << d;
    return o.str();
  }

  // Block b's output from this lane: written if the lane takes the turn
  // first; else the other lane has it (written, or being written).
  // (late_covered is counted on a stream only: from a file the lanes run
  // flat out, and the one behind is late by its own clock all along.)
  void finish_block(Lane& lane, std::int64_t b, const Planes& y, std::int64_t n,
                    const BlockInfo& in, Clock::time_point ready) {
    const std::int64_t mine = 2 * b;
    if (n > 0 && sink_)
      interleave_output(lane, y, n);
    for (std::int64_t turn = write_turn_.load(std::memory_order_acquire);;) {
      if (turn > mine) {
        if (n > 0 && source_.is_stream() && ms_between(in.arrived, ready) > target_)
          ++lane.late_covered;
        return;
      }
      if (turn == mine &&
          write_turn_.compare_exchange_weak(turn, mine + 1, std::memory_order_acq_rel))
        break;
      if (turn < mine) { // the other lane is still writing the block before
        check_stop();
        cpu_relax();
        turn = write_turn_.load(std::memory_order_acquire);
      }
    }
    if (n > 0) {
      write_output(lane, y, n, in, ready);
      ++lane.written;
    }
    write_turn_.store(mine + 2, std::memory_order_release);
  }

  // A metrics block's rows of one step (the primary lane's).
  void record(int slot, std::int64_t n, const std::vector<ChannelMetrics>& m) {
    if (n == 0)
      return;
    MetricsReport& rep = report_.metrics[static_cast<std::size_t>(slot)];
    for (std::size_t c = 0; c < m.size(); ++c)
      rep.totals[c].merge(m[c]);
    const std::int64_t index = metric_rows_[static_cast<std::size_t>(slot)]++;
    const std::int64_t start = metric_frames_[static_cast<std::size_t>(slot)];
    metric_frames_[static_cast<std::size_t>(slot)] += n;
    if (csv_file_)
      write_all(*csv_file_,
                stats_csv_rows(rep.name, ChunkMetricsRow{index, start, n, m}, rep.paired));
  }

  void run_lane(Lane& lane) {
    rusage usage0{};
    const bool counted = getrusage(RUSAGE_THREAD, &usage0) == 0;
    std::vector<ChannelMetrics> row;
    for (std::int64_t b = 0;; ++b) {
      check_stop();
      const InputSlot& in = obtain(b);
      if (tracing_)
        static_cast<void>(getrusage(RUSAGE_THREAD, &lane.block_usage));
      const BlockInfo taken = in.info; // the slot may be read into again once taken
      const std::int64_t got = taken.got;
      const bool ended = taken.ended;
      if (got > 0)
        kernels::cpu::deinterleave(in.data, 0, got, lane.src_ptrs.data());
      lane.consumed.store(b + 1, std::memory_order_release);
      std::int64_t n = 0;
      const Planes& y = step(lane.chain, lane.src, got, ended, n);
      finish_block(lane, b, y, n, taken, Clock::now());
      if (lane.primary) {
        if (n > 0)
          lane.chain.output->measure(y, n);
        for (const auto& [m, slot] : lane.chain.metrics) {
          const std::int64_t k = m->take(row);
          record(slot, k, row);
        }
        const std::int64_t k = lane.chain.output->take(row);
        record(plan_.output_slot(), k, row);
      }
      if (ended)
        break;
    }
    rusage usage1{};
    if (counted && getrusage(RUSAGE_THREAD, &usage1) == 0)
      lane.preempted = usage1.ru_nivcsw - usage0.ru_nivcsw;
  }

  void lane_body(Lane& lane) {
    try {
      run_lane(lane);
    } catch (const StopLane&) { // the error that stopped it is the other lane's
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // The first lane on this thread; with execution.redundant a second on a
  // thread of its own. What the lanes share: the reader's turn (a mutex)
  // serializes the source, source_frames_ and the excerpt's source side; the
  // write turn (2b: block b's output is next, 2b + 1: a lane is writing it)
  // serializes the sink, the histograms, the counts, the progress and the
  // excerpt's output side.
  void run_lanes(LiveKernels kernels) {
    lanes_.push_back(std::make_unique<Lane>());
    init_lane(*lanes_.front(), plan_, std::move(kernels), true, block_);
    ring_size_ = redundant_ ? ring_blocks(target_, block_, ch_) : 1;
    ring_.resize(static_cast<std::size_t>(ring_size_));
    for (InputSlot& slot : ring_)
      slot.data = make_host_block(plan_.input_type, ch_, block_);
    // The second lane builds its own kernels on its thread (a CUDA device is
    // current per thread), warms them as the first's were, and is ready
    // before the first block is read. Its chain goes with its thread.
    std::promise<void> second_ready;
    std::thread second;
    struct Join {
      std::thread& t;
      std::atomic<bool>& stop;
      Source& source;
      ~Join() {
        if (!t.joinable())
          return;
        stop.store(true);
        source.cancel();
        t.join();
      }
    } join_second{second, stop_, source_};
    if (redundant_) {
      lanes_.push_back(std::make_unique<Lane>());
      Lane& lane = *lanes_.back();
      std::future<void> ready = second_ready.get_future();
      second = std::thread([&, device_for_lane = on_gpu_ ? device_ : -1] {
        const BusyPollScope spin(true);
        try {
          LiveKernels k = make_live_kernels(plan_, block_, device_for_lane);
          static_cast<void>(measure_block(k));
          init_lane(lane, plan_, std::move(k), false, block_);
          second_ready.set_value();
        } catch (const Error& e) {
          second_ready.set_exception(std::make_exception_ptr(Error(
              e.kind(), std::string("the second live lane (execution.redundant): ") + e.what())));
          return;
        } catch (...) {
          second_ready.set_exception(std::current_exception());
          return;
        }
        lane_body(lane);
        lane.chain = LiveChain{};
        lane.kernels = LiveKernels{};
      });
      ready.get(); // the second lane's setup error, if any
    }
    lane_body(*lanes_.front());
    // Every block has been written or is being written: the second lane
    // stops at its next look (after a write it holds), not after computing
    // the blocks it is behind by.
    stop_.store(true);
    if (second.joinable())
      second.join();
    if (first_error_)
      std::rethrow_exception(first_error_);
  }

  // --- the report ------------------------------------------------------------

  void report_latency() {
    report_.input_frames = source_frames_;
    report_.output_frames = out_frames_;
    report_.excerpt = excerpt_.result(source_frames_, out_frames_);
    LatencyReport lr;
    lr.target = target_;
    lr.p50 = latency_.quantile(0.50);
    lr.p99 = latency_.quantile(0.99);
    lr.max = latency_.max();
    lr.late_chunks = late_;
    lr.chunks = out_chunks_;
    lr.block_frames = block_;
    lr.compute_p99 = compute_.quantile(0.99);
    lr.compute_max = compute_.max();
    std::ostringstream o;
    o << "live: " << out_chunks_ << " blocks, added latency p50 " << lr.p50 << " ms, p99 " << lr.p99
      << " ms, max " << lr.max << " ms; " << late_ << " late (over " << target_
      << " ms); the stages' part p99 " << lr.compute_p99 << " ms, max " << lr.compute_max << " ms";
    if (late_ > 0)
      o << " (" << late_in_compute_
        << " of the late blocks late in the stages, the rest in the write; of those, "
        << late_write_slept_ << " slept in the kernel during the write and " << late_write_faulted_
        << " faulted pages in)";
    if (sink_)
      o << "; the slowest write " << write_max_ms_ << " ms";
    if (have_usage_ && lanes_.size() == 1)
      o << "; the live thread was preempted " << lanes_[0]->preempted << " times";
    log(o.str());
    if (lanes_.size() > 1) {
      std::ostringstream r;
      r << "live: redundant lanes: lane 1 wrote " << lanes_[0]->written << " blocks, lane 2 "
        << lanes_[1]->written << "; a lane's own result came over " << target_ << " ms on "
        << lanes_[0]->late_covered << " / " << lanes_[1]->late_covered
        << " blocks the other lane had written first";
      if (have_usage_)
        r << "; preempted " << lanes_[0]->preempted << " / " << lanes_[1]->preempted << " times";
      log(r.str());
      for (const auto& lane : lanes_)
        lr.lanes.push_back({lane->written, lane->late_covered});
    }
    report_.latency = lr;
    if (late_ > 0 && source_.is_stream() && !busy_ && !priority_.raised)
      log("live: hint: without real-time priority a thread that sleeps between blocks can wake "
          "late, on a virtual machine by milliseconds; --busy-poll (execution.busy_poll) keeps "
          "one core spinning instead");
  }

  // Spectra, the statistics, and the outputs committed.
  RunReport finish() {
    std::vector<SpectrumSums> sums(plan_.metric_names.size());
    for (const auto& [m, slot] : lanes_.front()->chain.metrics) {
      sums[static_cast<std::size_t>(slot)] = m->spectrum();
      if (std::optional<LoudnessReport> l = m->loudness())
        report_.metrics[static_cast<std::size_t>(slot)].loudness = *l;
    }
    finish_spectra(plan_, sums, report_);
    report_.wall_s = std::chrono::duration<double>(Clock::now() - t0_).count();
    if (json_file_)
      write_all(*json_file_, stats_json(report_));
    if (sink_)
      sink_->commit();
    if (json_file_)
      json_file_->commit();
    if (csv_file_)
      csv_file_->commit();
    return std::move(report_);
  }

  static constexpr std::size_t kMaxLate = 5000; // late blocks whose story the trace keeps

  const Config& config_;
  const RunOptions& options_;
  Source& source_;
  const Plan& plan_;
  const std::optional<SinkFormat>& sink_format_;
  RunReport report_;
  const std::chrono::steady_clock::time_point t0_;
  const double target_;
  const std::int64_t block_;
  const int ch_;
  const int device_;
  const bool redundant_;
  const bool busy_;
  // placement
  double warm_mean_ = 0.0, warm_max_ = 0.0;
  bool on_gpu_ = false;
  std::string where_;
  // outputs and the thread
  std::optional<AudioSink> sink_;
  std::optional<AtomicFile> json_file_, csv_file_;
  Priority priority_;
  bool spins_ = false;
  // accounting (under the write turn, or the reader's for source_frames_)
  LatencyHistogram latency_; // added latency
  LatencyHistogram compute_; // of it, the stages' part (read to output ready)
  std::int64_t late_ = 0, late_in_compute_ = 0, source_frames_ = 0, out_frames_ = 0,
               out_chunks_ = 0;
  // What a late write did in the kernel: slept (a voluntary switch: a lock,
  // a page allocation, a full pipe) or faulted pages in; and the slowest write.
  std::int64_t late_write_slept_ = 0, late_write_faulted_ = 0;
  double write_max_ms_ = 0.0;
  bool have_usage_ = false;
  std::vector<std::int64_t> metric_frames_, metric_rows_;
  std::optional<Progress> progress_;
  bool tracing_ = false;
  LateStory late_story_;
  ExcerptCapture excerpt_;
  // the lanes and what they share
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::int64_t ring_size_ = 1;
  std::vector<InputSlot> ring_;
  alignas(64) std::atomic<std::int64_t> blocks_read_{0};
  std::mutex reader_;
  alignas(64) std::atomic<std::int64_t> write_turn_{0};
  alignas(64) std::atomic<bool> stop_{false}; // a lane failed, or the first lane is done
  std::mutex error_mutex_;
  std::exception_ptr first_error_;
};

} // namespace

RunReport run_live(const Config& config, const RunOptions& options, Source& source,
                   const Plan& plan, const std::optional<SinkFormat>& sink_format, RunReport report,
                   std::chrono::steady_clock::time_point t0) {
  return LiveRun(config, options, source, plan, sink_format, std::move(report), t0).run();
}

} // namespace sigstream
