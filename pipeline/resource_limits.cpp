#include "pipeline/resource_limits.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/thread_pool.hpp"

namespace sigstream {

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// MemAvailable of /proc/meminfo in bytes, or -1 where it cannot be read.
std::int64_t available_host_memory() noexcept {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:")
      return static_cast<std::int64_t>(kib) * 1024;
  return -1;
}

// The sizes a chunk's buffers follow: channels, the source block (chunk +
// halo) and the longest window of any signal (what a plane holds).
struct ChunkSpan {
  std::int64_t channels, source, widest, output;
};

ChunkSpan chunk_span(const Plan& plan) noexcept {
  ChunkSpan c{std::max<std::int64_t>(plan.max_channels, 1),
              plan.max_window.empty() ? 0 : plan.max_window.front(), 0, plan.max_chunk_frames()};
  for (const std::int64_t w : plan.max_window)
    c.widest = std::max(c.widest, w);
  return c;
}

// Host bytes one chunk in flight of `plan` holds (its source block, its
// output block, and the planes its stages work in), an estimate.
std::int64_t chunk_host_bytes(const Plan& plan) noexcept {
  const ChunkSpan c = chunk_span(plan);
  // Source block (at most 4 bytes a sample as read) and its float planes,
  // two ping-pong planes of the widest signal, the float output and its
  // interleaved block (at most 8 bytes a sample).
  return c.channels * (c.source * 4 + c.source * 4 + 2 * c.widest * 4 + c.output * (4 + 8));
}

// The largest power of two p <= limit (1 for limit < 2).
std::int64_t floor_pow2(double limit) noexcept {
  std::int64_t p = 1;
  while (static_cast<double>(p) * 2.0 <= limit && p < (std::int64_t{1} << 40))
    p *= 2;
  return p;
}

} // namespace

void check_execution_limits(const ExecutionSpec& e) {
  const int hw = hardware_threads();
  const long long most = static_cast<long long>(kThreadsPerHardwareThread) * hw;
  if (e.threads > most)
    throw config_error("execution.threads: " + std::to_string(e.threads) + " is more than " +
                       std::to_string(kThreadsPerHardwareThread) +
                       " per hardware thread of this machine (" + std::to_string(hw) +
                       ", so at most " + std::to_string(most) +
                       "); set 0 for one per hardware thread");
  if (e.streams > kMaxStreams)
    throw config_error("execution.streams: " + std::to_string(e.streams) +
                       " CUDA streams is more than " + std::to_string(kMaxStreams) +
                       " (each holds a chunk's buffers on the GPU); 2-8 keep a GPU busy");
  // Not a bound, but checked where run and batch both look, before any work.
  if (e.busy_poll && !e.latency_ms)
    throw config_error(
        "execution.busy_poll (--busy-poll) is for live mode: set execution.latency_ms "
        "(--latency MS) too");
  if (e.redundant && !e.latency_ms)
    throw config_error(
        "execution.redundant (--redundant) is for live mode: set execution.latency_ms "
        "(--latency MS) too");
}

std::string whole_signal_stage(const Plan& plan) {
  for (const PlannedStage& st : plan.stages)
    if (st.whole_signal)
      return st.name;
  return {};
}

void check_chunk_memory(const Plan& plan, int in_flight) {
  const std::int64_t available = available_host_memory();
  if (available <= 0)
    return;
  const double need = static_cast<double>(chunk_host_bytes(plan)) * std::max(in_flight, 1);
  // Leave a quarter of what is available to everything else.
  const double budget = 0.75 * static_cast<double>(available);
  if (need <= budget)
    return;
  if (const std::string whole = whole_signal_stage(plan); !whole.empty())
    throw config_error("stage '" + whole + "': zero_phase holds the whole signal (" +
                       std::to_string(plan.max_chunk_frames()) + " frames x " +
                       std::to_string(plan.max_channels) + " channels): about " + gib(need) +
                       " of host memory, more than this machine can spare (" +
                       gib(static_cast<double>(available)) +
                       " available); split the file, or filter it without zero_phase");
  // The chunk that would fit, rounded down to a power of two.
  const double per_frame =
      need / static_cast<double>(std::max<std::int64_t>(plan.max_chunk_frames(), 1));
  const std::int64_t fit = floor_pow2(budget / per_frame);
  throw config_error("execution.chunk_frames: " + std::to_string(plan.chunk_frames) + " frames x " +
                     std::to_string(plan.max_channels) + " channels x " +
                     std::to_string(in_flight) + " chunks in flight need about " + gib(need) +
                     " of host memory, more than this machine can "
                     "spare (" +
                     gib(static_cast<double>(available)) +
                     " available); set chunk_frames to at most " + std::to_string(fit) +
                     " (or fewer threads/streams)");
}

std::int64_t lane_device_bytes(const Plan& plan) noexcept {
  const ChunkSpan c = chunk_span(plan);
  // A stage with state keeps its own planes on the device (stages/iir/cuda.cu):
  // two float planes of its last frames (~8 bytes a frame and channel, with
  // the scan's scratch ~12); zero phase a float64 padded copy, the scratch
  // and, past eight sections, a float64 plane between groups (~24).
  std::int64_t per_frame = 0;
  for (const PlannedStage& st : plan.stages)
    if (st.carries_state)
      per_frame += st.whole_signal ? 24 : 12;
  return c.channels * (c.source * static_cast<std::int64_t>(sample_bytes(plan.input_type)) +
                       c.output * static_cast<std::int64_t>(sample_bytes(plan.output_type)) +
                       3 * c.widest * 4 + per_frame * c.widest);
}

bool fits_device_memory(std::int64_t lane_bytes, int streams, std::int64_t free_bytes) noexcept {
  // A tenth of what is free stays for cuFFT's plans and the CUDA runtime.
  return static_cast<double>(lane_bytes) * std::max(streams, 1) <=
         0.9 * static_cast<double>(free_bytes);
}

void check_device_memory(std::int64_t lane_bytes, int streams, std::int64_t chunk_frames,
                         std::int64_t free_bytes, std::int64_t total_bytes,
                         const std::string& whole_signal) {
  if (fits_device_memory(lane_bytes, streams, free_bytes))
    return;
  const double budget = 0.9 * static_cast<double>(free_bytes);
  const double need = static_cast<double>(lane_bytes) * std::max(streams, 1);
  const std::string have = gib(static_cast<double>(free_bytes)) + " of the GPU's " +
                           gib(static_cast<double>(total_bytes)) + " are free";
  if (!whole_signal.empty())
    throw config_error("stage '" + whole_signal + "': zero_phase holds the whole signal (" +
                       std::to_string(chunk_frames) + " frames) on the GPU: about " + gib(need) +
                       " and " + have + "; run it on the CPU (--backend cpu) or split the file");
  const auto lanes_fit =
      static_cast<std::int64_t>(budget / std::max<double>(static_cast<double>(lane_bytes), 1.0));
  if (lanes_fit >= 1)
    throw config_error("execution.streams: " + std::to_string(streams) + " CUDA streams of " +
                       std::to_string(chunk_frames) + "-frame chunks need about " + gib(need) +
                       " of GPU memory and " + have + "; set streams to at most " +
                       std::to_string(lanes_fit) + " (or a smaller chunk_frames)");
  const double per_frame = static_cast<double>(lane_bytes) /
                           static_cast<double>(std::max<std::int64_t>(chunk_frames, 1));
  throw config_error("execution.chunk_frames: one chunk of " + std::to_string(chunk_frames) +
                     " frames needs about " + gib(static_cast<double>(lane_bytes)) +
                     " of GPU memory and " + have + "; set chunk_frames to at most " +
                     std::to_string(floor_pow2(budget / per_frame)) +
                     " (with streams: 1) or run on the CPU (--backend cpu)");
}

} // namespace sigstream
