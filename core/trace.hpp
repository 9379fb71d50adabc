#pragma once
// A start-up and run timeline for measurements: with SIGSTREAM_TRACE=1 in the
// environment, trace("what") prints "sigstream: trace    12.345 ms t3   what" on
// stderr (milliseconds since the process started; t3: the calling thread,
// numbered by its first line). Otherwise it costs one
// relaxed load. Used by bench/e2e_gpu.py to split end-to-end time.
namespace sigstream {

void trace(const char* what) noexcept;
// Whether SIGSTREAM_TRACE is on (for traces that cost more than a load).
[[nodiscard]] bool trace_on() noexcept;

} // namespace sigstream
