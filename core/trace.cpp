#include "core/trace.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sigstream {

namespace {

// The process start, read once from /proc/self/stat would be exact; the first
// call from main() is close enough (static initialisation runs before it).
const auto g_t0 = std::chrono::steady_clock::now();
const bool g_on = [] {
  const char* v = std::getenv("SIGSTREAM_TRACE");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}();

} // namespace

bool trace_on() noexcept {
  return g_on;
}

void trace(const char* what) noexcept {
  if (!g_on)
    return;
  // Each thread's number in the order of its first line, so that concurrent
  // workers' timelines can be told apart ("t3").
  static std::atomic<int> threads{0};
  thread_local const int self = threads.fetch_add(1, std::memory_order_relaxed);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_t0).count();
  std::fprintf(stderr, "sigstream: trace %9.3f ms t%-3d %s\n", ms, self, what);
}

} // namespace sigstream
