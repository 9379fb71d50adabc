#pragma once
// Chunk jobs as the pipeline's reader makes them, for tests that drive a
// Backend directly: chunk c's input block holds the source frames
// [start - back, start + frames + ahead), zeros outside the source, in a
// block from the backend's make_block (pinned for CUDA).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "pipeline/backends/backend.hpp"
#include "pipeline/plan.hpp"

namespace sigstream::test {

// `source`: the whole source, interleaved, in plan.input_type.
inline ChunkJob make_chunk_job(Backend& backend, const Plan& plan, const HostBlock& source,
                               std::int64_t c) {
  const std::size_t frame_bytes =
      static_cast<std::size_t>(plan.channels) * sample_bytes(plan.input_type);
  ChunkJob job = chunk_job(plan, c);
  const std::int64_t lo = job.start - plan.back;
  const std::int64_t hi = job.start + job.frames + plan.ahead;
  HostBlock block = backend.make_block(plan.input_type, plan.channels,
                                       plan.chunk_frames + plan.back + plan.ahead);
  block.frames = hi - lo;
  auto* dst = reinterpret_cast<unsigned char*>(block.data.get());
  std::memset(dst, 0, static_cast<std::size_t>(hi - lo) * frame_bytes);
  const std::int64_t a = std::max<std::int64_t>(lo, 0);
  const std::int64_t b = std::min(hi, plan.source_frames);
  if (b > a)
    std::memcpy(dst + (a - lo) * frame_bytes,
                reinterpret_cast<const unsigned char*>(source.data.get()) + a * frame_bytes,
                static_cast<std::size_t>(b - a) * frame_bytes);
  job.input = std::move(block);
  return job;
}

// Runs every chunk of `plan` through a prepared `backend` the way the
// pipeline does (at most depth() chunks in flight) and hands each result to
// take(ChunkResult) in retirement order.
template <typename Take>
void run_all_chunks(Backend& backend, const Plan& plan, const HostBlock& source, Take&& take) {
  int in_flight = 0;
  for (std::int64_t c = 0; c < plan.num_chunks; ++c) {
    ChunkJob job = make_chunk_job(backend, plan, source, c);
    while (in_flight >= backend.depth()) {
      take(backend.retire());
      --in_flight;
    }
    backend.submit(std::move(job));
    ++in_flight;
  }
  while (in_flight-- > 0)
    take(backend.retire());
}

} // namespace sigstream::test
