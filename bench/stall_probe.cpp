// A stall probe for the live-latency runs (issue P5): is a late block the
// filter's own doing, or did the whole machine stop?
//
//   bench_stall_probe --cpus 2,9 --seconds 150 --threshold-us 200 > gaps.txt
//
// One thread per listed CPU, pinned there, reads CLOCK_MONOTONIC in a tight
// loop and records every gap between two reads longer than the threshold:
// time the thread did not run (preempted, interrupted, or its virtual CPU
// descheduled by the hypervisor). Prints "cpu start_s gap_ms" a line, start
// on CLOCK_MONOTONIC (the clock of sigstream's SIGSTREAM_TRACE lines), then a
// summary line per CPU. Gaps that several probe CPUs see at once, at the
// moment a block was late, are stalls of the machine, not of the filter.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A whole number >= 0 (the whole string), or -1.
long long whole(const std::string& s) {
  if (s.empty())
    return -1;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return *end == '\0' && v >= 0 ? v : -1;
}

constexpr std::size_t kMaxGaps = 100000; // per CPU; the summary says when more came

struct Gap {
  std::int64_t start_ns;
  std::int64_t length_ns;
};

struct Probe {
  int cpu = 0;
  bool pinned = false;
  std::vector<Gap> gaps;
  std::int64_t reads = 0;
  std::int64_t dropped = 0; // gaps past kMaxGaps
};

void spin(Probe& p, std::int64_t seconds, std::int64_t threshold_ns) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(p.cpu, &set);
  p.pinned = pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
  p.gaps.reserve(kMaxGaps);
  const std::int64_t end = now_ns() + seconds * 1000000000;
  std::int64_t last = now_ns();
  for (;;) {
    const std::int64_t t = now_ns();
    ++p.reads;
    if (t - last > threshold_ns) {
      if (p.gaps.size() < kMaxGaps)
        p.gaps.push_back({last, t - last});
      else
        ++p.dropped;
    }
    last = t;
    if (t >= end)
      break;
  }
}

} // namespace

int main(int argc, char** argv) {
  std::vector<int> cpus;
  std::int64_t seconds = 60;
  std::int64_t threshold_us = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_stall_probe: %s needs a value\n", a.c_str());
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--cpus") {
      for (std::size_t at = 0; at < v.size();) {
        const std::size_t comma = v.find(',', at);
        const long long cpu = whole(v.substr(at, comma - at));
        if (cpu < 0 || cpu >= CPU_SETSIZE) {
          std::fprintf(stderr,
                       "bench_stall_probe: --cpus %s: expected CPU numbers separated by commas\n",
                       v.c_str());
          return 2;
        }
        cpus.push_back(static_cast<int>(cpu));
        at = comma == std::string::npos ? v.size() : comma + 1;
      }
    } else if (a == "--seconds") {
      seconds = whole(v);
    } else if (a == "--threshold-us") {
      threshold_us = whole(v);
    } else {
      std::fprintf(stderr, "bench_stall_probe: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (cpus.empty() || seconds <= 0 || threshold_us <= 0) {
    std::fprintf(stderr, "usage: bench_stall_probe --cpus A,B --seconds S [--threshold-us U]\n");
    return 2;
  }
  std::vector<Probe> probes(cpus.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    probes[i].cpu = cpus[i];
    threads.emplace_back(spin, std::ref(probes[i]), seconds, threshold_us * 1000);
  }
  for (std::thread& t : threads)
    t.join();
  for (const Probe& p : probes)
    for (const Gap& g : p.gaps)
      std::printf("%d %.6f %.3f\n", p.cpu, static_cast<double>(g.start_ns) * 1e-9,
                  static_cast<double>(g.length_ns) * 1e-6);
  for (const Probe& p : probes) {
    double worst = 0.0;
    for (const Gap& g : p.gaps)
      worst = std::max(worst, static_cast<double>(g.length_ns) * 1e-6);
    std::printf(
        "# cpu %d%s: %zu gaps over %lld us in %lld s, the longest %.3f ms, %lld clock reads", p.cpu,
        p.pinned ? "" : " (not pinned)", p.gaps.size() + static_cast<std::size_t>(p.dropped),
        static_cast<long long>(threshold_us), static_cast<long long>(seconds), worst,
        static_cast<long long>(p.reads));
    if (p.dropped > 0)
      std::printf(" (only the first %zu listed)", kMaxGaps);
    std::printf("\n");
  }
  return 0;
}
