// The GPU half of the array operations (array_ops.hpp): the CLI's kernels
// (kernels/cuda) on the caller's device memory and stream.
//
// Zero copy. fir_cuda hands the kernels the caller's input pointer with a
// FirInputSpan (the zeros before and after a clip are implied, not stored),
// and the caller's output pointer: no staging buffer, no host copy. Only the
// taps go to the device, once per filter (cached): a call with cached taps
// enqueues kernels and nothing else.
//
// State between calls, per device: taps on the device, cuFFT plans (FftFir)
// and the resampler's padded-input scratch. A cached FftFir or scratch is
// shared by every stream: each use records an event, and the next use on
// any stream first waits for it, so two streams never share one in flight.
// A mutex guards the caches (the binding releases the GIL during compute).
#include "array_ops.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <exception>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/int_math.hpp"
#include "kernels/cpu/resample.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_direct.cuh"
#include "kernels/cuda/fir_fft.cuh"
#include "kernels/cuda/iir.cuh"
#include "kernels/cuda/metrics.cuh"
#include "kernels/cuda/resample.cuh"
#include "kernels/cuda/resources.hpp"

namespace sigstream::py {

namespace kc = kernels::cuda;

namespace {

constexpr std::int64_t kMaxRowsPerLaunch = 65535; // gridDim.y

// Shared by every stream: the event of its last use orders the next one, and
// `in_use` keeps two host threads (the GIL is released) from enqueueing work
// on it at once. Waiting on an event never recorded returns at once.
template <typename T> struct Shared {
  explicit Shared(T v) : value(std::move(v)) {}
  T value;
  kc::Event last_use = kc::Event::create();
  std::mutex in_use;
};

// Holds a Shared for one enqueue on `stream`: after the work queued before on
// any stream, and recorded as its last use when the scope ends.
template <typename T> class SharedUse {
public:
  SharedUse(Shared<T>& shared, cudaStream_t stream)
      : shared_(shared), lock_(shared.in_use), stream_(stream) {
    SIGSTREAM_CUDA_TRY(cudaStreamWaitEvent(stream, shared.last_use.get(), 0));
  }
  ~SharedUse() { static_cast<void>(cudaEventRecord(shared_.last_use.get(), stream_)); }
  SharedUse(const SharedUse&) = delete;
  SharedUse& operator=(const SharedUse&) = delete;

private:
  Shared<T>& shared_;
  std::lock_guard<std::mutex> lock_;
  cudaStream_t stream_;
};

// A filter on a device; fft = 0 for its taps alone. The caches look keys up
// by a view of the caller's taps (no copy on a hit) and store a copy.
struct FilterKeyView {
  int device;
  int fft;
  std::span<const double> taps;
};
struct FilterKey {
  int device;
  int fft;
  std::vector<double> taps;
  [[nodiscard]] FilterKeyView view() const { return {device, fft, taps}; }
};
struct FilterKeyLess {
  using is_transparent = void;
  static bool less(const FilterKeyView& a, const FilterKeyView& b) {
    if (a.device != b.device)
      return a.device < b.device;
    if (a.fft != b.fft)
      return a.fft < b.fft;
    return std::lexicographical_compare(a.taps.begin(), a.taps.end(), b.taps.begin(), b.taps.end());
  }
  bool operator()(const FilterKey& a, const FilterKey& b) const { return less(a.view(), b.view()); }
  bool operator()(const FilterKey& a, const FilterKeyView& b) const { return less(a.view(), b); }
  bool operator()(const FilterKeyView& a, const FilterKey& b) const { return less(a, b.view()); }
};

// A filter's taps on one device. Uploaded in stream order (cudaMallocAsync and
// an asynchronous copy from `host`, which lives as long as the entry), so a
// call with new taps does not wait for the GPU either; other streams wait for
// `uploaded`. Freed only after a device synchronisation (trim), never at exit
// (the caches are never destroyed).
struct DeviceTaps {
  std::vector<float> host;
  float* d = nullptr;
  kc::Event uploaded = kc::Event::create();
  cudaStream_t stream = nullptr; // the upload's
  DeviceTaps() = default;
  DeviceTaps(const DeviceTaps&) = delete;
  DeviceTaps& operator=(const DeviceTaps&) = delete;
  ~DeviceTaps() {
    if (d != nullptr)
      static_cast<void>(cudaFree(d));
  }
};

struct Caches {
  std::mutex mutex;
  std::map<FilterKey, std::shared_ptr<DeviceTaps>, FilterKeyLess> taps;
  // FftFir per (device, taps, FFT size), with the largest calls it was built for.
  struct Fft {
    std::int64_t max_n;
    int max_rows;
    std::shared_ptr<Shared<kc::FftFir>> fir;
  };
  std::map<FilterKey, Fft, FilterKeyLess> fft;
  std::map<int, std::shared_ptr<Shared<kc::DeviceBuffer<float>>>> scratch;
  // sosfilt's cascades (their transition powers on the device), keyed by the
  // sections' five coefficients each; read-only, so every stream shares one.
  std::map<FilterKey, std::shared_ptr<const kc::IirCascade>, FilterKeyLess> iir;
  LastLaunch last;
};

Caches& caches() {
  static auto* c = new Caches; // never destroyed: device memory goes with the process
  return *c;
}

int current_device() {
  int d = 0;
  SIGSTREAM_CUDA_TRY(cudaGetDevice(&d));
  return d;
}

// Drops a cache's entries of the current device once it is full. Kernels in
// flight on any stream may still read them: the device finishes first.
template <typename Map> void trim(Map& map, std::size_t limit, int device) {
  if (map.size() < limit)
    return;
  SIGSTREAM_CUDA_TRY(cudaDeviceSynchronize());
  for (auto it = map.begin(); it != map.end();)
    it = it->first.device == device ? map.erase(it) : std::next(it);
}

// The taps on the current device, queued on `stream` the first time.
std::shared_ptr<DeviceTaps> device_taps(const std::vector<double>& h, cudaStream_t stream) {
  Caches& c = caches();
  const int device = current_device();
  std::lock_guard lock(c.mutex);
  auto it = c.taps.find(FilterKeyView{device, 0, h});
  if (it != c.taps.end()) {
    // Uploaded on another stream: this one waits for the upload.
    if (it->second->stream != stream)
      SIGSTREAM_CUDA_TRY(cudaStreamWaitEvent(stream, it->second->uploaded.get(), 0));
    return it->second;
  }
  trim(c.taps, 64, device); // many one-off filters: start again
  auto t = std::make_shared<DeviceTaps>();
  t->host.assign(h.begin(), h.end());
  t->stream = stream;
  SIGSTREAM_CUDA_TRY(
      cudaMallocAsync(reinterpret_cast<void**>(&t->d), t->host.size() * sizeof(float), stream));
  SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(t->d, t->host.data(), t->host.size() * sizeof(float),
                                     cudaMemcpyHostToDevice, stream));
  t->uploaded.record(stream);
  c.taps.emplace(FilterKey{device, 0, h}, t);
  return t;
}

std::shared_ptr<Shared<kc::FftFir>> fft_fir(const std::vector<double>& h, std::int64_t n,
                                            std::int64_t rows) {
  Caches& c = caches();
  const int device = current_device();
  const int k = static_cast<int>(h.size());
  const int channels = static_cast<int>(std::min(rows, kMaxRowsPerLaunch));
  const int fft = kc::fft_size_automatic(k, n);
  std::lock_guard lock(c.mutex);
  auto it = c.fft.find(FilterKeyView{device, fft, h});
  if (it != c.fft.end() && it->second.max_n >= n && it->second.max_rows >= channels)
    return it->second.fir;
  // A larger call than the cached plans cover: grow them (the old ones may
  // still run: wait for their last use before they go).
  std::int64_t max_n = n;
  int max_rows = channels;
  if (it != c.fft.end()) {
    max_n = std::max(max_n, it->second.max_n);
    max_rows = std::max(max_rows, it->second.max_rows);
    it->second.fir->last_use.synchronize();
    c.fft.erase(it);
  }
  trim(c.fft, 16, device);
  const std::vector<float> f(h.begin(), h.end());
  kc::FftFirOptions options;
  options.fft_size = fft;
  auto fir =
      std::make_shared<Shared<kc::FftFir>>(kc::FftFir(f.data(), k, max_n, max_rows, options));
  c.fft[FilterKey{device, fft, h}] = Caches::Fft{max_n, max_rows, fir};
  return fir;
}

// At least `count` floats of scratch on the current device.
std::shared_ptr<Shared<kc::DeviceBuffer<float>>> scratch(std::size_t count) {
  Caches& c = caches();
  const int device = current_device();
  std::lock_guard lock(c.mutex);
  auto& s = c.scratch[device];
  if (!s || s->value.size() < count) {
    if (s)
      s->last_use.synchronize(); // the old buffer may still be read
    s = std::make_shared<Shared<kc::DeviceBuffer<float>>>(kc::DeviceBuffer<float>(count));
  }
  return s;
}

} // namespace

CudaFftEngine cuda_fft_engine() {
  return kc::fused_fft_available(4096) ? CudaFftEngine::fused : CudaFftEngine::cufft;
}

void fir_cuda(const Rows& x, const std::vector<double>& h, Mode mode, FirMethod method, OutRows y,
              std::uintptr_t stream_handle) {
  if (h.empty())
    throw Error(ErrorKind::invalid_argument, "taps must not be empty");
  const int k = static_cast<int>(h.size());
  const FirShape shape = fir_shape(mode, x.n, k);
  if (x.rows == 0 || shape.n_out == 0)
    return;
  const FirMethod m = method == FirMethod::automatic
                          ? resolve_method(method, true, k, shape.n_out, x.rows, cuda_fft_engine())
                          : method;
  auto* stream = reinterpret_cast<cudaStream_t>(stream_handle);
  const kc::FirInputSpan span{shape.lead, x.n};
  if (m == FirMethod::fft) {
    auto fir = fft_fir(h, shape.n_out, x.rows);
    const SharedUse use(*fir, stream);
    for (std::int64_t r0 = 0; r0 < x.rows; r0 += kMaxRowsPerLaunch) {
      const int rows = static_cast<int>(std::min(kMaxRowsPerLaunch, x.rows - r0));
      fir->value.run(x.x + r0 * x.stride, shape.n_out, y.y + r0 * y.stride, rows, x.stride,
                     y.stride, stream, span);
    }
  } else {
    auto taps = device_taps(h, stream);
    for (std::int64_t r0 = 0; r0 < x.rows; r0 += kMaxRowsPerLaunch) {
      const int rows = static_cast<int>(std::min(kMaxRowsPerLaunch, x.rows - r0));
      kc::fir_direct(x.x + r0 * x.stride, shape.n_out, taps->d, k, y.y + r0 * y.stride, rows,
                     x.stride, y.stride, stream, span);
    }
  }
  std::lock_guard lock(caches().mutex);
  caches().last = LastLaunch{x.x, y.y, m == FirMethod::fft ? "fft" : "direct"};
}

void resample_cuda(const Rows& x, const Resampler& r, OutRows y, std::uintptr_t stream_handle) {
  auto* stream = reinterpret_cast<cudaStream_t>(stream_handle);
  const auto k = static_cast<std::int64_t>(r.taps.size());
  // The polyphase kernel reads a window around each output: give it the rows
  // zero-padded on the device, frames [lo, hi) (a device-to-device copy).
  const ResampleWindow w = resample_window(r, x.n);
  const std::int64_t delay = w.delay, m_out = w.m_out, lo = w.lo, hi = w.hi;
  if (m_out == 0 || x.rows == 0)
    return;
  const std::int64_t pitch = (hi - lo + 31) / 32 * 32;
  auto taps = device_taps(r.taps, stream);
  auto pad = scratch(static_cast<std::size_t>(pitch * x.rows));
  const SharedUse use(*pad, stream);
  float* d_pad = pad->value.data();
  SIGSTREAM_CUDA_TRY(
      cudaMemsetAsync(d_pad, 0, static_cast<std::size_t>(pitch * x.rows) * sizeof(float), stream));
  const std::int64_t a = std::max<std::int64_t>(lo, 0);
  const std::int64_t b = std::min<std::int64_t>(hi, x.n);
  if (a < b)
    SIGSTREAM_CUDA_TRY(
        cudaMemcpy2DAsync(d_pad + (a - lo), static_cast<std::size_t>(pitch) * sizeof(float),
                          x.x + a, static_cast<std::size_t>(x.stride) * sizeof(float),
                          static_cast<std::size_t>(b - a) * sizeof(float),
                          static_cast<std::size_t>(x.rows), cudaMemcpyDeviceToDevice, stream));
  kc::DevicePolyphase filter;
  filter.d_taps = taps->d;
  filter.taps = static_cast<int>(k);
  filter.up = static_cast<int>(r.up);
  filter.down = static_cast<int>(r.down);
  filter.delay = delay;
  filter.lookback = k - 1 - delay;
  for (std::int64_t r0 = 0; r0 < x.rows; r0 += kMaxRowsPerLaunch) {
    const int rows = static_cast<int>(std::min(kMaxRowsPerLaunch, x.rows - r0));
    kc::resample(d_pad + r0 * pitch, lo, pitch, y.y + r0 * y.stride, 0, y.stride, m_out, rows,
                 filter, stream);
  }
}

std::vector<ChannelMetrics> metrics_cuda(const Rows& y, const float* reference,
                                         std::int64_t reference_stride,
                                         std::uintptr_t stream_handle) {
  auto* stream = reinterpret_cast<cudaStream_t>(stream_handle);
  std::vector<ChannelMetrics> out(static_cast<std::size_t>(y.rows));
  if (y.rows == 0)
    return out;
  for (std::int64_t r0 = 0; r0 < y.rows; r0 += kMaxRowsPerLaunch) {
    const int rows = static_cast<int>(std::min(kMaxRowsPerLaunch, y.rows - r0));
    kc::DeviceBuffer<kc::MetricsPartial> partials(kc::metrics_partials_count(rows));
    kc::DeviceBuffer<kc::DeviceChannelMetrics> results(static_cast<std::size_t>(rows));
    kc::channel_metrics(y.x + r0 * y.stride, y.stride,
                        reference ? reference + r0 * reference_stride : nullptr, reference_stride,
                        y.n, rows, partials.data(), results.data(), stream);
    SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(out.data() + r0, results.data(), results.bytes(),
                                       cudaMemcpyDeviceToHost, stream));
    // The buffers go back to the allocator: wait while they are in use.
    SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(stream));
  }
  return out;
}

void fir_cuda_host(const Rows& x, const std::vector<double>& h, Mode mode, FirMethod method,
                   OutRows y) {
  const FirShape shape = fir_shape(mode, x.n, static_cast<int>(h.size()));
  if (x.rows == 0 || shape.n_out == 0)
    return;
  const kc::Stream stream = kc::Stream::create();
  kc::DeviceBuffer<float> d_x(static_cast<std::size_t>(x.rows * x.n));
  kc::DeviceBuffer<float> d_y(static_cast<std::size_t>(x.rows * shape.n_out));
  // On an error, the buffers go back only after the work queued on them.
  struct WaitOnUnwind {
    cudaStream_t s;
    ~WaitOnUnwind() {
      if (std::uncaught_exceptions() > 0)
        static_cast<void>(cudaStreamSynchronize(s));
    }
  } wait_on_unwind{stream.get()};
  SIGSTREAM_CUDA_TRY(cudaMemcpy2DAsync(d_x.data(), static_cast<std::size_t>(x.n) * sizeof(float),
                                       x.x, static_cast<std::size_t>(x.stride) * sizeof(float),
                                       static_cast<std::size_t>(x.n) * sizeof(float),
                                       static_cast<std::size_t>(x.rows), cudaMemcpyHostToDevice,
                                       stream.get()));
  fir_cuda(Rows{d_x.data(), x.rows, x.n, x.n}, h, mode, method, OutRows{d_y.data(), shape.n_out},
           reinterpret_cast<std::uintptr_t>(stream.get()));
  SIGSTREAM_CUDA_TRY(
      cudaMemcpy2DAsync(y.y, static_cast<std::size_t>(y.stride) * sizeof(float), d_y.data(),
                        static_cast<std::size_t>(shape.n_out) * sizeof(float),
                        static_cast<std::size_t>(shape.n_out) * sizeof(float),
                        static_cast<std::size_t>(x.rows), cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();
}

LastLaunch last_cuda_launch() {
  std::lock_guard lock(caches().mutex);
  return caches().last;
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return 0;
  }
  return n;
}

namespace {

// The cascade of `sections` on the current device, made (and its powers
// uploaded) the first time only.
std::shared_ptr<const kc::IirCascade>
iir_cascade(const std::vector<kernels::cpu::Biquad>& sections) {
  std::vector<double> key;
  key.reserve(5 * sections.size());
  for (const kernels::cpu::Biquad& q : sections)
    key.insert(key.end(), {q.b0, q.b1, q.b2, q.a1, q.a2});
  Caches& c = caches();
  const int device = current_device();
  std::lock_guard lock(c.mutex);
  if (auto it = c.iir.find(FilterKeyView{device, 0, key}); it != c.iir.end())
    return it->second;
  trim(c.iir, 64, device); // many one-off filters: start again
  auto cascade = std::make_shared<const kc::IirCascade>(sections);
  c.iir.emplace(FilterKey{device, 0, std::move(key)}, cascade);
  return cascade;
}

} // namespace

void sosfilt_cuda(const Rows& x, const std::vector<kernels::cpu::Biquad>& sections, double* state,
                  OutRows y, std::uintptr_t stream) {
  if (x.rows == 0 || x.n == 0)
    return;
  if (x.rows > std::numeric_limits<int>::max())
    throw Error(ErrorKind::invalid_argument, "sosfilt: more than 2^31 - 1 rows");
  const auto s = reinterpret_cast<cudaStream_t>(stream);
  const std::shared_ptr<const kc::IirCascade> shared = iir_cascade(sections);
  const kc::IirCascade& cascade = *shared;
  const std::size_t doubles =
      static_cast<std::size_t>(x.rows) * static_cast<std::size_t>(cascade.state_size());
  kc::DeviceBuffer<double> d_state(doubles);
  kc::DeviceBuffer<double> d_work(cascade.workspace_doubles(static_cast<int>(x.rows), x.n));
  try {
    SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(d_state.data(), state, doubles * sizeof(double),
                                       cudaMemcpyHostToDevice, s));
    cascade.run(x.x, x.stride, y.y, y.stride, static_cast<int>(x.rows), x.n, d_state.data(),
                d_work.data(), s);
    SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(state, d_state.data(), doubles * sizeof(double),
                                       cudaMemcpyDeviceToHost, s));
    SIGSTREAM_CUDA_TRY(cudaStreamSynchronize(s));
  } catch (...) {
    // The buffers go back to the cache only once nothing queued uses them.
    static_cast<void>(cudaStreamSynchronize(s));
    throw;
  }
}

} // namespace sigstream::py
