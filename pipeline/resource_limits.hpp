#pragma once
// Sizes a config sets, checked against this machine before anything is
// allocated or started (issue P10): a typo such as threads: 100000 must give
// a clear error, never take the host down. Each check throws Error(config)
// naming the key, the limit on this machine and what to set instead.
#include <cstdint>
#include <string>

#include "pipeline/config.hpp"
#include "pipeline/plan.hpp"

namespace sigstream {

// CPU worker threads above this many per hardware thread are refused (more
// only adds switching: the work is compute-bound).
inline constexpr int kThreadsPerHardwareThread = 4;
// CUDA lanes (chunks in flight on one GPU) above this are refused: past a
// few, more only holds memory.
inline constexpr int kMaxStreams = 64;

// execution.threads and execution.streams against the machine.
void check_execution_limits(const ExecutionSpec& e);

// The host memory the chunks in flight of `plan` need (`in_flight` chunks)
// against what the machine has available (Linux: MemAvailable), with a
// chunk_frames that would fit. No-op where the amount is not known.
void check_chunk_memory(const Plan& plan, int in_flight);

// GPU memory one CUDA lane (one chunk in flight) of `plan` holds, from its
// buffers' sizes: the raw source and output blocks and three float planes of
// the longest window (cuFFT plans and work areas come on top).
[[nodiscard]] std::int64_t lane_device_bytes(const Plan& plan) noexcept;

// Whether `streams` lanes of `lane_bytes` fit in 90% of `free_bytes`.
[[nodiscard]] bool fits_device_memory(std::int64_t lane_bytes, int streams,
                                      std::int64_t free_bytes) noexcept;

// `streams` lanes of `lane_bytes` against `free_bytes` of the GPU's memory
// (`total_bytes` in all): throws Error(config) naming execution.streams (or
// execution.chunk_frames where one lane does not fit) and what would fit.
// With `whole_signal` (the name of a zero-phase stage: the plan is one chunk
// of the whole file) the message names it instead: the CPU or a shorter file.
void check_device_memory(std::int64_t lane_bytes, int streams, std::int64_t chunk_frames,
                         std::int64_t free_bytes, std::int64_t total_bytes,
                         const std::string& whole_signal = {});

// The name of the plan's stage that needs the whole signal, or "".
[[nodiscard]] std::string whole_signal_stage(const Plan& plan);

} // namespace sigstream
