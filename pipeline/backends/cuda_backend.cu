// Over 600 lines (~690) and one file on purpose: prepare, adopt, submit,
// enqueue and retire share the Lane type and the plan's buffer geometry;
// split off would be the device listing at the end, should it grow.
// The CUDA backend: the semantics of cpu_backend.cpp (same plan, same chunk
// geometry, same arithmetic, so the direct method gives the same bits), run
// on S lanes. Chunk i goes to lane i % S; a lane owns a stream, its device
// buffers (raw interleaved in/out, planar source and two ping-pong planes,
// metrics results and scratch, clip counter), pinned host mirrors for the
// small results, events, and each stage's step (stages/cuda_steps.cuh: what
// the stage keeps on the device, e.g. a FIR's taps or its cuFFT plans), all
// allocated in prepare(). Per chunk, all async on the lane's stream:
//   H2D (narrow type) -> deinterleave -> stages (each step, then zero outside
//   the defined frames; observers: metrics) -> output metrics ->
//   interleave/quantize -> D2H -> done event.
// retire() waits on the oldest chunk's done event only: no device-wide sync,
// no CUDA allocation in the chunk loop (pinned output blocks come from the
// process-wide pinned cache, warmed in prepare() for as many chunks as the
// plan has, up to the lanes + 4; it grows only if the caller holds many
// results or a kept backend gets a file of more chunks).
#include "pipeline/backends/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/trace.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/layout.cuh"
#include "kernels/cuda/loudness.cuh"
#include "kernels/cuda/metrics.cuh"
#include "kernels/cuda/resources.hpp"
#include "kernels/cuda/welch.cuh"
#include "pipeline/backends/chain_walk.hpp"
#include "pipeline/backends/chunk_math.hpp"
#include "pipeline/resource_limits.hpp"
#include "stages/cuda_steps.cuh"
#include "stages/metrics/spec.hpp"

namespace sigstream {

namespace {

namespace kc = kernels::cuda;

Error cuda_error(const std::string& m) {
  return Error(ErrorKind::cuda, m);
}

ChannelMetrics to_channel_metrics(const kc::DeviceChannelMetrics& d) {
  ChannelMetrics m;
  m.energy = d.energy;
  m.sum = d.sum;
  m.peak = d.peak;
  m.dot = d.dot;
  m.source_energy = d.source_energy;
  m.nonfinite = d.nonfinite;
  m.frames = d.frames;
  return m;
}

// Page-locked host memory handed out as shared_ptr<std::byte>: it returns to
// the process-wide pinned cache (memory_cache.hpp) when its last user drops
// it, so blocks may outlive the backend and the next file's backend reuses them.
std::shared_ptr<std::byte> pinned_block(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  try {
    return {static_cast<std::byte*>(kc::pinned_alloc(bytes)),
            [bytes](std::byte* p) { kc::pinned_free(p, bytes); }};
  } catch (const Error& e) {
    throw cuda_error("cuda backend: cannot allocate " + std::to_string(bytes) +
                     " bytes of pinned host memory: " + e.what());
  }
}

// One stream and everything a chunk in flight on it uses.
struct Lane {
  kc::Stream stream;
  kc::DeviceBuffer<std::byte> d_in_raw;  // interleaved input block, input type
  kc::DeviceBuffer<std::byte> d_out_raw; // interleaved output, output type
  kc::DeviceBuffer<float> d_src;         // planar source (kept for metrics' dot)
  kc::DeviceBuffer<float> d_ping;        // planar stage outputs
  kc::DeviceBuffer<float> d_pong;
  kc::DeviceBuffer<kc::DeviceChannelMetrics> d_metrics; // [slot][channel]
  kc::DeviceBuffer<kc::MetricsPartial> d_partials;
  kc::DeviceBuffer<unsigned long long> d_clipped;
  kc::PinnedBuffer<kc::DeviceChannelMetrics> h_metrics;
  kc::PinnedBuffer<unsigned long long> h_clipped;
  kc::PinnedBuffer<float> h_float;                   // planar float output (keep_float_output)
  std::vector<kc::Event> marks;                      // timing: before each stage, after the last
  std::vector<std::unique_ptr<CudaStageStep>> steps; // per stage (null for observers)
  // Per metrics slot with a spectrum: its Welch step, its power sums
  // ([channel][bin], on the device and copied back) and the chunk's segments.
  struct Spectrum {
    std::unique_ptr<kc::DeviceWelch> welch;
    kc::DeviceBuffer<double> d_power;
    kc::PinnedBuffer<double> h_power;
    std::int64_t segments = 0;
  };
  std::vector<Spectrum> spectra; // [slot]
  // Per metrics slot with loudness: its step energies and peaks (null elsewhere).
  std::vector<std::unique_ptr<kc::DeviceLoudness>> loudness; // [slot]
  std::vector<FrameWindow> windows; // the chunk's windows (Plan::windows), per signal
  kc::Event done;
  // The chunk in flight.
  bool busy = false;
  std::int64_t index = 0, start = 0, frames = 0, source_frames = 0;
  HostBlock input;  // held until retired: the H2D copy reads it
  HostBlock output; // the D2H copy writes it
};

// cudaGetDeviceProperties, once per device for the process (a batch prepares
// a backend per file).
cudaDeviceProp device_properties(int device) {
  static std::mutex mutex;
  static std::map<int, cudaDeviceProp> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(device); it != known.end())
    return it->second;
  cudaDeviceProp p{};
  SIGSTREAM_CUDA_TRY(cudaGetDeviceProperties(&p, device));
  known.emplace(device, p);
  return p;
}

// A plan whose stage carries state runs on one lane: its chunks in order.
int lanes_for(const Plan& plan, const BackendOptions& options) {
  return plan.carries_state() ? 1 : options.streams;
}

constexpr std::int64_t kPlaneAlign = 32; // floats: each channel plane starts on 128 bytes

class CudaBackend final : public Backend {
public:
  CudaBackend() = default;

  // Work still in flight (an error path) must not outlive the memory it uses.
  ~CudaBackend() override {
    for (const Lane& lane : lanes_)
      if (lane.stream.get() != nullptr)
        static_cast<void>(cudaStreamSynchronize(lane.stream.get()));
  }

  [[nodiscard]] std::string name() const override { return "cuda"; }

  [[nodiscard]] std::string device_name() const override {
    if (!device_name_.empty())
      return device_name_;
    try {
      return device_properties(options_.device).name;
    } catch (const Error&) {
      static_cast<void>(cudaGetLastError());
      return "cuda device " + std::to_string(options_.device);
    }
  }

  void prepare(const Plan& plan, const BackendOptions& options) override {
    if (prepared_)
      throw internal_error("cuda backend: prepare() called twice");
    plan_ = plan;
    options_ = options;
    options_.streams = lanes_for(plan, options);
    if (options.streams < 1)
      throw Error(ErrorKind::config,
                  "execution.streams: must be >= 1 (got " + std::to_string(options.streams) + ")");
    if (plan.channels < 1 || plan.max_channels > 65535 || plan.output_channels < 1)
      throw Error(ErrorKind::invalid_argument, "cuda backend: channels must be in 1..65535 (got " +
                                                   std::to_string(plan.max_channels) + ")");
    if (plan.chunk_frames < 1)
      throw Error(ErrorKind::config, "execution.chunk_frames: must be >= 1 (got " +
                                         std::to_string(plan.chunk_frames) + ")");
    int count = 0;
    if (const cudaError_t st = cudaGetDeviceCount(&count); st != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      throw cuda_error("cuda backend: no usable CUDA device: " + kc::cuda_error_text(st));
    }
    if (options.device < 0 || options.device >= count)
      throw cuda_error("cuda backend: device " + std::to_string(options.device) +
                       " does not exist (" + std::to_string(count) + " CUDA device(s) found)");
    try {
      const auto t0 = std::chrono::steady_clock::now();
      SIGSTREAM_CUDA_TRY(cudaSetDevice(options.device));
      SIGSTREAM_CUDA_TRY(cudaFree(nullptr)); // creates the context here, so it can be timed
      const auto t1 = std::chrono::steady_clock::now();
      trace("cuda: context created");
      const cudaDeviceProp props = device_properties(options.device);
      device_name_ = props.name;
      std::ostringstream d;
      d << "cuda backend: " << props.name << " (device " << options.device << ", sm_" << props.major
        << props.minor << ", " << props.multiProcessorCount << " SMs), " << options_.streams
        << " stream" << (options_.streams == 1 ? "" : "s");
      if (options_.streams != options.streams)
        d << " (a stage carries state: its chunks run in order)";
      // The lanes' buffers against the GPU's free memory, before any is
      // allocated (memory parked in the process-wide cache counts as free).
      const std::int64_t lane_bytes = lane_device_bytes(plan);
      auto free_memory = [] {
        std::size_t free_b = 0, total_b = 0;
        SIGSTREAM_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
        return std::pair{static_cast<std::int64_t>(free_b), static_cast<std::int64_t>(total_b)};
      };
      auto [free_b, total_b] = free_memory();
      if (!fits_device_memory(lane_bytes, options_.streams, free_b)) {
        kc::release_cached_memory();
        std::tie(free_b, total_b) = free_memory();
      }
      check_device_memory(lane_bytes, options_.streams, plan.chunk_frames, free_b, total_b,
                          whole_signal_stage(plan));
      // Memory parked in the process-wide cache (earlier files of a batch,
      // other sizes) may be what is missing, including to cuFFT's plans,
      // which allocate on their own: a first failure gives it back and tries
      // once more. Out of memory again, with the estimate within bounds
      // (cuFFT's plans or another process took the rest), is exit 1 with the
      // sizes and what to set.
      for (int attempt = 0;; ++attempt) {
        try {
          allocate();
          break;
        } catch (const Error& e) {
          // Work a lane queued (a step's upload) ends before its memory goes.
          for (const Lane& lane : lanes_)
            if (lane.stream.get() != nullptr)
              static_cast<void>(cudaStreamSynchronize(lane.stream.get()));
          lanes_.clear();
          // Only running out of memory is worth a second try: any other
          // failure is reported as it came (a retry would hide it behind
          // the next call's error).
          if (e.kind() != ErrorKind::cuda_memory)
            throw;
          kc::release_cached_memory();
          if (attempt == 0)
            continue;
          std::tie(free_b, total_b) = free_memory();
          throw Error(ErrorKind::cuda_memory,
                      "out of GPU memory for " + std::to_string(options_.streams) +
                          " stream(s) of " + std::to_string(plan.chunk_frames) +
                          "-frame chunks x " + std::to_string(plan.max_channels) + " channel(s) (" +
                          e.what() + "); " + std::to_string(free_b >> 20) + " MiB of " +
                          std::to_string(total_b >> 20) +
                          " MiB free now: set execution.streams or execution.chunk_frames lower");
        }
      }
      const auto t2 = std::chrono::steady_clock::now();
      trace("cuda: lanes allocated");
      for (const auto& step : lanes_.front().steps)
        if (step && !step->describe().empty())
          d << "; " << step->describe();
      auto ms = [](auto a, auto b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
      };
      d << "; start-up " << static_cast<int>(ms(t0, t1)) << " ms context + "
        << static_cast<int>(ms(t1, t2)) << " ms buffers";
      describe_ = d.str();
    } catch (const Error& e) {
      throw Error(e.kind(), std::string("cuda backend: prepare on device ") +
                                std::to_string(options.device) + ": " + e.what());
    }
    stage_ms_.assign(plan.stages.size(), 0.0);
    prepared_ = true;
  }

  // The lanes, steps and buffers stay: a plan of the same shape whose
  // windows fit those they were sized for runs on them as it would on new
  // ones (the per-chunk work reads only the plan and the chunk's own length).
  [[nodiscard]] bool adopt(const Plan& plan, const BackendOptions& options) override {
    if (!prepared_ || !in_flight_.empty() || options.device != options_.device ||
        lanes_for(plan, options) != options_.streams ||
        options.keep_float_output != options_.keep_float_output ||
        !fits_prepared(plan, plan_, max_chunk_, capacity_))
      return false;
    for (const Lane& lane : lanes_)
      for (std::size_t j = 0; j < lane.steps.size(); ++j)
        if (lane.steps[j] &&
            !lane.steps[j]->serves(
                {std::max<std::int64_t>(1, plan.max_window[j + 1]), plan.stages[j].channels_in}))
          return false;
    // The steps hold references to plan_'s stages: those objects stay, with
    // the new plan's values (the same but for the lengths).
    std::vector<PlannedStage> stages = std::move(plan_.stages);
    plan_ = plan;
    for (std::size_t j = 0; j < stages.size(); ++j)
      stages[j] = plan_.stages[j];
    plan_.stages = std::move(stages);
    for (Lane& lane : lanes_)
      for (const auto& step : lane.steps)
        if (step)
          step->restart();
    std::lock_guard lock(stats_mutex_);
    stage_ms_.assign(plan.stages.size(), 0.0);
    return true;
  }

  [[nodiscard]] int depth() const override { return static_cast<int>(lanes_.size()); }

  [[nodiscard]] HostBlock make_block(SampleType type, int channels, std::int64_t frames) override {
    if (channels < 0 || frames < 0)
      throw Error(ErrorKind::invalid_argument, "cuda backend: make_block: negative size");
    SIGSTREAM_CUDA_TRY(cudaSetDevice(options_.device));
    HostBlock b;
    b.type = type;
    b.channels = channels;
    b.capacity = frames;
    b.frames = 0;
    b.data = pinned_block(static_cast<std::size_t>(frames) * static_cast<std::size_t>(channels) *
                          sample_bytes(type));
    b.pinned = true;
    return b;
  }

  void submit(ChunkJob job) override {
    if (!prepared_)
      throw internal_error("cuda backend: submit() before prepare()");
    if (job.index < 0)
      throw internal_error("cuda backend: negative chunk index");
    const auto lane_id =
        static_cast<std::size_t>(job.index % static_cast<std::int64_t>(lanes_.size()));
    Lane& lane = lanes_[lane_id];
    if (lane.busy)
      throw internal_error("cuda backend: chunk " + std::to_string(job.index) + ": lane " +
                           std::to_string(lane_id) + " still holds chunk " +
                           std::to_string(lane.index) + " (more than depth() chunks in flight)");
    check_job(job);
    SIGSTREAM_CUDA_TRY(cudaSetDevice(options_.device));
    lane.index = job.index;
    lane.start = job.start;
    lane.frames = job.frames;
    lane.source_frames = job.source_frames;
    lane.input = std::move(job.input);
    lane.output = HostBlock{};
    lane.busy = true;
    try {
      enqueue(lane);
    } catch (...) {
      // The stream may hold part of the chunk: let it finish before the lane is reused.
      static_cast<void>(cudaStreamSynchronize(lane.stream.get()));
      lane.busy = false;
      lane.input = HostBlock{};
      lane.output = HostBlock{};
      throw;
    }
    in_flight_.push_back(lane_id);
  }

  // cudaErrorNotReady is the only "not yet"; any other answer (done, or an
  // error) lets retire() run and report it.
  [[nodiscard]] bool oldest_ready() const override {
    if (in_flight_.empty())
      return false;
    const cudaError_t st = cudaEventQuery(lanes_[in_flight_.front()].done.get());
    if (st == cudaErrorNotReady) {
      static_cast<void>(cudaGetLastError());
      return false;
    }
    return true;
  }

  ChunkResult retire() override {
    if (in_flight_.empty())
      throw internal_error("cuda backend: retire() with no chunk in flight");
    const std::size_t lane_id = in_flight_.front();
    in_flight_.pop_front();
    Lane& lane = lanes_[lane_id];
    lane.busy = false;
    const int ch = plan_.output_channels;
    ChunkResult r;
    try {
      SIGSTREAM_CUDA_TRY(cudaSetDevice(options_.device));
      lane.done.synchronize();
      r.index = lane.index;
      r.start = lane.start;
      r.frames = lane.frames;
      r.source_frames = lane.source_frames;
      r.output = std::move(lane.output);
      r.output.frames = lane.frames;
      r.metrics = empty_metrics(plan_);
      for (std::size_t slot = 0; slot < r.metrics.size(); ++slot)
        for (std::size_t c = 0; c < r.metrics[slot].size(); ++c)
          r.metrics[slot][c] =
              to_channel_metrics(lane.h_metrics[static_cast<std::size_t>(slot_offset_[slot]) + c]);
      r.clipped = static_cast<std::int64_t>(lane.h_clipped[0]);
      r.spectra.assign(r.metrics.size(), SpectrumSums{});
      for (std::size_t slot = 0; slot < lane.spectra.size(); ++slot) {
        const Lane::Spectrum& sp = lane.spectra[slot];
        if (!sp.welch)
          continue;
        r.spectra[slot].power.assign(sp.h_power.data(), sp.h_power.data() + sp.h_power.size());
        r.spectra[slot].segments = sp.segments;
      }
      r.measured.resize(r.metrics.size());
      for (std::size_t slot = 0; slot < lane.loudness.size(); ++slot)
        if (const auto& l = lane.loudness[slot]) {
          ChunkResult::MeasuredLoudness& m = r.measured[slot];
          l->read(m.first, m.frames, m.energy, m.sample_peak, m.true_peak);
        }
      if (options_.keep_float_output) {
        r.output_f32.resize(static_cast<std::size_t>(ch));
        for (int c = 0; c < ch; ++c) {
          const float* p = lane.h_float.data() + static_cast<std::size_t>(c * lane.frames);
          r.output_f32[static_cast<std::size_t>(c)].assign(p, p + lane.frames);
        }
        r.input = std::move(lane.input);
      }
      std::lock_guard lock(stats_mutex_);
      for (std::size_t j = 0; j < plan_.stages.size(); ++j)
        stage_ms_[j] += static_cast<double>(lane.marks[j + 1].elapsed_ms_since(lane.marks[j]));
    } catch (const Error& e) {
      lane.input = HostBlock{};
      lane.output = HostBlock{};
      throw Error(e.kind(), "cuda backend: chunk " + std::to_string(lane.index) + ": " + e.what());
    }
    lane.input = HostBlock{};
    return r;
  }

  // Per-stage time from events recorded in each lane's stream around the
  // stage (so with several lanes it includes time shared with other lanes'
  // work), summed over chunks, in ms.
  [[nodiscard]] std::vector<double> stage_ms() const override {
    std::lock_guard lock(stats_mutex_);
    return stage_ms_;
  }

  [[nodiscard]] std::string describe() const override { return describe_; }

private:
  void allocate() {
    const Plan& p = plan_;
    const auto ch = static_cast<std::size_t>(p.max_channels);
    // Where each metrics slot's channels start in a lane's metrics buffers.
    slot_offset_.clear();
    int metric_count = 0;
    for (const int n : p.metric_channels()) {
      slot_offset_.push_back(metric_count);
      metric_count += n;
    }
    const auto metrics_n = static_cast<std::size_t>(metric_count);
    // The longest chunk, its source block (chunk + halo) and the longest
    // window of any signal (what a plane holds).
    max_chunk_ = p.max_chunk_frames();
    max_block_ = p.max_window.front();
    capacity_ = p.max_window;
    const std::int64_t longest = *std::max_element(p.max_window.begin(), p.max_window.end());
    stride_ = (longest + kPlaneAlign - 1) / kPlaneAlign * kPlaneAlign;
    const std::size_t plane_floats = ch * static_cast<std::size_t>(stride_);
    const std::size_t slots = p.metric_names.size();

    lanes_.clear();
    lanes_.resize(static_cast<std::size_t>(options_.streams));
    for (Lane& lane : lanes_) {
      lane.stream = kc::Stream::create();
      lane.d_in_raw = kc::DeviceBuffer<std::byte>(static_cast<std::size_t>(max_block_) *
                                                  static_cast<std::size_t>(p.channels) *
                                                  sample_bytes(p.input_type));
      lane.d_out_raw = kc::DeviceBuffer<std::byte>(static_cast<std::size_t>(max_chunk_) *
                                                   static_cast<std::size_t>(p.output_channels) *
                                                   sample_bytes(p.output_type));
      lane.d_src = kc::DeviceBuffer<float>(plane_floats);
      lane.d_ping = kc::DeviceBuffer<float>(plane_floats);
      lane.d_pong = kc::DeviceBuffer<float>(plane_floats);
      lane.d_metrics = kc::DeviceBuffer<kc::DeviceChannelMetrics>(metrics_n);
      lane.d_partials =
          kc::DeviceBuffer<kc::MetricsPartial>(kc::metrics_partials_count(p.max_channels));
      lane.d_clipped = kc::DeviceBuffer<unsigned long long>(1);
      lane.h_metrics = kc::PinnedBuffer<kc::DeviceChannelMetrics>(metrics_n);
      lane.h_clipped = kc::PinnedBuffer<unsigned long long>(1);
      if (options_.keep_float_output)
        lane.h_float = kc::PinnedBuffer<float>(static_cast<std::size_t>(max_chunk_) *
                                               static_cast<std::size_t>(p.output_channels));
      lane.marks.clear();
      for (std::size_t j = 0; j <= p.stages.size(); ++j)
        lane.marks.push_back(kc::Event::create(/*timing=*/true));
      lane.done = kc::Event::create(/*timing=*/false, /*blocking_sync=*/true);
      lane.spectra.clear();
      lane.spectra.resize(slots);
      lane.loudness.clear();
      lane.loudness.resize(slots);
      for (std::size_t j = 0; j < p.stages.size(); ++j) {
        const PlannedStage& st = p.stages[j];
        const MetricsPlan* mp = st.params.find<MetricsPlan>();
        if (mp && mp->loudness) {
          const kernels::cpu::Bs1770Meter meter(st.channels_in, std::lround(mp->loudness_rate));
          auto& l = lane.loudness[static_cast<std::size_t>(st.metrics_slot)];
          l = std::make_unique<kc::DeviceLoudness>(meter, st.channels_in, p.max_window[j]);
          if (l->look_back() > st.lookback)
            throw internal_error("cuda backend: stage '" + st.name + "': loudness needs " +
                                 std::to_string(l->look_back()) +
                                 " frames of look-back, the plan gives " +
                                 std::to_string(st.lookback));
        }
        if (!mp || mp->spectrum_window.empty())
          continue;
        Lane::Spectrum& sp = lane.spectra[static_cast<std::size_t>(st.metrics_slot)];
        // A chunk's call holds at most the stage's longest input window.
        sp.welch = std::make_unique<kc::DeviceWelch>(
            mp->spectrum_window, mp->spectrum_hop,
            kc::DeviceWelch::segments_for(p.max_window[j], mp->spectrum_hop), st.channels_in);
        sp.d_power = kc::DeviceBuffer<double>(static_cast<std::size_t>(st.channels_in) *
                                              static_cast<std::size_t>(sp.welch->bins()));
        sp.h_power = kc::PinnedBuffer<double>(sp.d_power.size());
      }
      lane.steps.clear();
      for (std::size_t j = 0; j < p.stages.size(); ++j) {
        const PlannedStage& st = p.stages[j];
        // The longest output window a chunk asks of this stage (see enqueue()).
        const std::int64_t max_n = std::max<std::int64_t>(1, p.max_window[j + 1]);
        try {
          lane.steps.push_back(make_cuda_step(st, CudaStepShape{max_n, st.channels_in}));
        } catch (const Error& e) {
          throw Error(e.kind(), "stage '" + st.name + "' (" + std::string(to_string(st.type)) +
                                    "): " + e.what());
        }
      }
    }
    // Output blocks for the lanes and for results the caller still holds,
    // but no more than the plan has chunks (a 30 s file has 2): pinning costs
    // the host ~0.65 ms a MiB now and ~0.2 at exit (1 x H100 host,
    // bench/RESULTS.md stop 42), and a batch pins this for every file in
    // flight. A longer file later gets its further blocks as it needs them;
    // a source of unknown length is planned as very long (all the blocks).
    const auto warm_blocks =
        static_cast<int>(std::min<std::int64_t>(options_.streams + 4, p.num_chunks));
    std::vector<HostBlock> warm;
    for (int i = 0; i < warm_blocks; ++i)
      warm.push_back(make_block(p.output_type, p.output_channels, max_chunk_));
  }

  void check_job(const ChunkJob& job) const {
    auto bad = [&](const std::string& m) {
      return Error(ErrorKind::invalid_argument,
                   "cuda backend: chunk " + std::to_string(job.index) + ": " + m);
    };
    if (job.frames < 0 || job.frames > max_chunk_)
      throw bad("frames " + std::to_string(job.frames) + " outside 0.." +
                std::to_string(max_chunk_));
    const HostBlock& in = job.input;
    if (in.channels != plan_.channels || in.type != plan_.input_type)
      throw bad("input block has " + std::to_string(in.channels) +
                " channels of another sample type than the plan's");
    const std::int64_t want = plan_.source_window(job.start, job.frames).size();
    if (in.frames != want)
      throw bad("input block holds " + std::to_string(in.frames) + " frames, expected " +
                std::to_string(want) + " (the chunk's source window: chunk + halo)");
    if (in.frames > 0 && !in.data)
      throw bad("input block has no data");
  }

  void enqueue(Lane& lane) {
    const Plan& p = plan_;
    const cudaStream_t s = lane.stream.get();
    const int ch = p.channels;
    const int out_ch = p.output_channels;
    const std::int64_t P = stride_;
    const std::int64_t len = lane.input.frames;
    // Error context ("cuda backend: stage 'lp' (fir), chunk 12: ...") is
    // composed only when something fails: no host allocation per chunk.
    auto in_phase = [&](auto&& phase, auto&& body) {
      try {
        body();
      } catch (const Error& e) {
        throw Error(e.kind(), "cuda backend: " + std::string(phase()) + ", chunk " +
                                  std::to_string(lane.index) + " (" + std::to_string(lane.frames) +
                                  " frames x " + std::to_string(ch) + " channels): " + e.what());
      }
    };

    lane.output = make_block(p.output_type, out_ch, max_chunk_);
    lane.output.frames = lane.frames;
    in_phase([] { return "upload"; },
             [&] {
               if (lane.input.bytes() > 0)
                 SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(lane.d_in_raw.data(), lane.input.data.get(),
                                                    lane.input.bytes(), cudaMemcpyHostToDevice, s));
               kc::deinterleave(lane.d_in_raw.data(), p.input_type, ch, 0, len, lane.d_src.data(),
                                P, s);
             });

    const float* src = lane.d_src.data();
    const float* cur = src;
    p.windows(lane.start, lane.frames, lane.windows); // no allocation after the first chunk
    const std::vector<FrameWindow>& w = lane.windows;
    float* planes[2] = {lane.d_ping.data(), lane.d_pong.data()};
    int next = 0;
    // Each stage's turn, timed by an event before it, with its name in any error.
    auto turn = [&](const PlannedStage& st, std::size_t j, auto&& body) {
      in_phase([&] { return "stage '" + st.name + "' (" + std::string(to_string(st.type)) + ")"; },
               [&] {
                 lane.marks[j].record(s);
                 body();
               });
    };
    walk_chunk(
        p, w, lane.start, lane.frames, lane.source_frames,
        [&](const ObserverVisit& v) {
          turn(v.stage, v.index, [&] {
            const PlannedStage& st = v.stage;
            kc::channel_metrics(
                cur + v.offset, P, v.paired ? src + v.source_offset : nullptr, P, v.frames,
                st.channels_in, lane.d_partials.data(),
                lane.d_metrics.data() + slot_offset_[static_cast<std::size_t>(st.metrics_slot)], s);
            Lane::Spectrum& sp = lane.spectra[static_cast<std::size_t>(st.metrics_slot)];
            if (sp.welch) { // the segments ending in its frames; its look-back lies before them
              const std::int64_t back = sp.welch->nfft() - 1;
              sp.segments =
                  sp.welch->sums(cur + v.offset - back, P, v.first_frame - back, v.frames + back,
                                 v.first_frame, v.first_frame + v.frames, sp.d_power.data(), s);
              SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(sp.h_power.data(), sp.d_power.data(),
                                                 sp.d_power.bytes(), cudaMemcpyDeviceToHost, s));
            }
            // Its K-weighting settles in the look-back before its frames.
            if (const auto& l = lane.loudness[static_cast<std::size_t>(st.metrics_slot)])
              l->measure(cur + v.offset, P, v.first_frame, v.frames, s);
            cur += v.pass_on; // it passes its input on
          });
        },
        [&](const StepVisit& v) {
          turn(v.stage, v.index, [&] {
            float* out = planes[next];
            lane.steps[v.index]->run(cur, v.x_first, P, out + v.valid.lo, v.first + v.valid.lo, P,
                                     v.valid.hi - v.valid.lo, v.stage.channels_in, s);
            kc::zero_outside(out, P, v.stage.channels_out, v.length, v.valid.lo, v.valid.hi, s);
            cur = out;
            next ^= 1;
          });
        });

    in_phase(
        [] { return "output"; },
        [&] {
          lane.marks[p.stages.size()].record(s);
          kc::channel_metrics(
              cur, P, p.paired(p.stages.size()) ? src + (lane.start - w[0].lo) : nullptr, P,
              lane.frames, out_ch, lane.d_partials.data(),
              lane.d_metrics.data() + slot_offset_[static_cast<std::size_t>(p.output_slot())], s);
          SIGSTREAM_CUDA_TRY(
              cudaMemsetAsync(lane.d_clipped.data(), 0, sizeof(unsigned long long), s));
          kc::interleave(cur, P, out_ch, lane.frames, p.output_type, p.output_bits,
                         lane.d_out_raw.data(), lane.d_clipped.data(), s);
          if (lane.output.bytes() > 0)
            SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(lane.output.data.get(), lane.d_out_raw.data(),
                                               lane.output.bytes(), cudaMemcpyDeviceToHost, s));
          SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(lane.h_metrics.data(), lane.d_metrics.data(),
                                             lane.d_metrics.bytes(), cudaMemcpyDeviceToHost, s));
          SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(lane.h_clipped.data(), lane.d_clipped.data(),
                                             sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                             s));
          if (options_.keep_float_output && lane.frames > 0)
            SIGSTREAM_CUDA_TRY(cudaMemcpy2DAsync(
                lane.h_float.data(), static_cast<std::size_t>(lane.frames) * sizeof(float), cur,
                static_cast<std::size_t>(P) * sizeof(float),
                static_cast<std::size_t>(lane.frames) * sizeof(float),
                static_cast<std::size_t>(out_ch), cudaMemcpyDeviceToHost, s));
          lane.done.record(s);
        });
  }

  Plan plan_;
  BackendOptions options_;
  bool prepared_ = false;
  std::string device_name_;
  std::string describe_;
  std::int64_t max_chunk_ = 0;
  std::int64_t max_block_ = 0;
  std::int64_t stride_ = 0;
  std::vector<std::int64_t> capacity_; // the windows the lanes were sized for (Plan::max_window)
  std::vector<int> slot_offset_;       // each metrics slot's first entry in a lane's metrics
  std::vector<Lane> lanes_;
  std::deque<std::size_t> in_flight_;
  mutable std::mutex stats_mutex_;
  std::vector<double> stage_ms_;
};

} // namespace

std::vector<CudaDeviceInfo> cuda_devices() {
  std::vector<CudaDeviceInfo> out;
  try {
    int count = 0;
    trace("cuda: counting devices");
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      return out;
    }
    trace("cuda: driver initialised");
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp p{};
      try {
        p = device_properties(i);
      } catch (const Error&) {
        static_cast<void>(cudaGetLastError());
        continue;
      }
      CudaDeviceInfo d;
      d.ordinal = i;
      d.name = p.name;
      d.memory_bytes = p.totalGlobalMem;
      d.major = p.major;
      d.minor = p.minor;
      d.multiprocessors = p.multiProcessorCount;
      out.push_back(std::move(d));
    }
  } catch (...) {
    // Out of host memory while listing: report what was found.
  }
  return out;
}

std::unique_ptr<Backend> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

void cuda_start_devices(const std::vector<int>& devices) {
  std::vector<std::thread> threads;
  for (const int d : devices) {
    try {
      threads.emplace_back([d] {
        if (cudaSetDevice(d) == cudaSuccess)
          static_cast<void>(cudaFree(nullptr));
        static_cast<void>(cudaGetLastError());
      });
    } catch (const std::system_error&) {
      break; // no thread to spare: the workers make the rest
    }
  }
  for (std::thread& t : threads)
    t.join();
}

} // namespace sigstream
