// What a CUDA process pays before and after its work, with no work: the
// driver's start (cudaGetDeviceCount), a context on each named device (made
// at once, one thread each, as `sigstream batch` makes them), and optionally
// pinned host memory as a batch's lanes hold it. The process's own wall
// (timed by its caller, bench/batch_bench.py) adds the start of the program
// and the release of the contexts at exit: the fixed cost that a batch of
// few files cannot amortise (SPEC §10, issue P11). `--pinned-mb N` pins N MiB
// in each device's context (its thread, after the context). `--release`:
// `exit` (default) leaves the contexts and the memory to the process's exit;
// `reset` destroys every device's context (cudaDeviceReset, which frees its
// pinned memory) before main returns, one thread a device, at once;
// `reset-serial` one device after another. The process then leaves with
// _Exit, as sigstream does.
//
//   bench_gpu_start [--devices 0,1,...] [--pinned-mb N] [--release exit|reset|reset-serial]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess)
    return true;
  std::fprintf(stderr, "bench_gpu_start: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

} // namespace

int main(int argc, char** argv) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> devices;
  std::size_t pinned_mb = 0;
  std::string release = "exit";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      std::string s = argv[++i];
      for (std::size_t p = 0; p <= s.size();) {
        const std::size_t q = s.find(',', p);
        devices.push_back(std::atoi(s.substr(p, q - p).c_str()));
        if (q == std::string::npos)
          break;
        p = q + 1;
      }
    } else if (std::strcmp(argv[i], "--pinned-mb") == 0 && i + 1 < argc) {
      pinned_mb = static_cast<std::size_t>(std::atol(argv[++i]));
    } else if (std::strcmp(argv[i], "--release") == 0 && i + 1 < argc) {
      release = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_gpu_start [--devices 0,1,...] [--pinned-mb N] "
                           "[--release exit|reset|reset-serial]\n");
      return 2;
    }
  }
  if (release != "exit" && release != "reset" && release != "reset-serial") {
    std::fprintf(stderr, "bench_gpu_start: --release exit, reset or reset-serial\n");
    return 2;
  }
  if (devices.empty())
    devices.push_back(0);

  int count = 0;
  if (!check(cudaGetDeviceCount(&count), "cudaGetDeviceCount"))
    return 1;
  const double driver_ms = since(t0);

  std::vector<int> ok(devices.size(), 0);
  std::vector<double> up_ms(devices.size(), 0.0), pinned_ms(devices.size(), 0.0);
  {
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < devices.size(); ++k)
      threads.emplace_back([&, k] {
        ok[k] = check(cudaSetDevice(devices[k]), "cudaSetDevice") &&
                check(cudaFree(nullptr), "context");
        up_ms[k] = since(t0);
        if (ok[k] && pinned_mb > 0) {
          const auto p0 = std::chrono::steady_clock::now();
          void* pinned = nullptr; // released with the context or the process
          ok[k] =
              check(cudaHostAlloc(&pinned, pinned_mb << 20, cudaHostAllocDefault), "cudaHostAlloc");
          if (ok[k])
            std::memset(pinned, 0, pinned_mb << 20);
          pinned_ms[k] = since(p0);
        }
      });
    for (std::thread& t : threads)
      t.join();
  }
  for (int v : ok)
    if (!v)
      return 1;

  double release_ms = 0.0;
  if (release != "exit") {
    const auto r0 = std::chrono::steady_clock::now();
    const auto reset = [&](std::size_t k) {
      ok[k] = check(cudaSetDevice(devices[k]), "cudaSetDevice") &&
              check(cudaDeviceReset(), "cudaDeviceReset");
    };
    if (release == "reset") {
      std::vector<std::thread> threads;
      for (std::size_t k = 0; k < devices.size(); ++k)
        threads.emplace_back(reset, k);
      for (std::thread& t : threads)
        t.join();
    } else {
      for (std::size_t k = 0; k < devices.size(); ++k)
        reset(k);
    }
    release_ms = since(r0);
    for (int v : ok)
      if (!v)
        return 1;
  }

  std::printf("%d device(s) found; driver up %.1f ms", count, driver_ms);
  for (std::size_t k = 0; k < devices.size(); ++k) {
    std::printf("; context %d up %.1f ms", devices[k], up_ms[k]);
    if (pinned_mb > 0)
      std::printf(" (%zu MiB pinned in %.1f ms)", pinned_mb, pinned_ms[k]);
  }
  if (release != "exit")
    std::printf("; %s in %.1f ms", release.c_str(), release_ms);
  std::printf("; main returns at %.1f ms\n", since(t0));
  // What is left is released by the process's exit, as sigstream's caches
  // are: _Exit, as app/main.cpp leaves (no atexit teardown of the runtime).
  std::fflush(stdout);
  std::_Exit(0);
}
