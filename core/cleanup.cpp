#include "core/cleanup.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

#include "core/error.hpp"

namespace sigstream {

namespace {

constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
std::array<std::atomic<bool>, kSlots> g_used{};  // slot claimed
std::array<std::atomic<bool>, kSlots> g_ready{}; // path fully written
std::array<std::array<char, kPathMax>, kSlots> g_paths{};
std::atomic<int> g_signal{0};
std::array<std::atomic<int>, kSlots> g_children{}; // pids; 0 = free

extern "C" void on_signal(int sig) {
  if (g_signal.exchange(sig) != 0) {
    // Second signal: the user wants out now. unlink and _exit are async-signal-safe.
    for (int i = 0; i < kSlots; ++i)
      if (g_ready[i].load())
        ::unlink(g_paths[i].data());
    for (int i = 0; i < kSlots; ++i) // kill is async-signal-safe too
      if (const int pid = g_children[i].load(); pid > 0)
        ::kill(pid, SIGKILL);
    ::_exit(128 + sig);
  }
}

} // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; // no SA_RESTART: blocking reads return so the flag is seen
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() noexcept {
  return g_signal.load(std::memory_order_relaxed) != 0;
}

void throw_if_interrupted() {
  if (const int sig = g_signal.load(); sig != 0)
    throw Error(ErrorKind::interrupted, std::string("interrupted by ") +
                                            (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                                            ": no output written");
}

int register_temp_path(const std::string& path) noexcept {
  if (path.size() >= kPathMax)
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_used[i].compare_exchange_strong(expected, true))
      continue;
    std::memcpy(g_paths[i].data(), path.c_str(), path.size() + 1);
    g_ready[i].store(true);
    return i;
  }
  return -1;
}

int register_child(int pid) noexcept {
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_children[i].compare_exchange_strong(expected, pid))
      return i;
  }
  return -1;
}

void unregister_child(int slot) noexcept {
  if (slot >= 0 && slot < kSlots)
    g_children[slot].store(0);
}

void unregister_temp_path(int slot) noexcept {
  if (slot < 0 || slot >= kSlots)
    return;
  g_ready[slot].store(false);
  g_used[slot].store(false);
}

} // namespace sigstream
