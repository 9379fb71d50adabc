// FIR convolution by FFT overlap-save: one cuFFTDx kernel (fir_fft_fused.cu)
// where it runs, else cuFFT in five passes.
//
// Engines. The fused engine reads each segment, transforms, multiplies and
//   transforms back in one thread block and writes its outputs: the input is
//   read from DRAM about once and the output written once. It runs the
//   powers of two 1024 .. 65536 on compute capability 9.0 (the architecture
//   built for); FftFirOptions::engine forces either. The rest of this note
//   describes the cuFFT engine, the fallback.
//
// Strategy
// --------
// Segments. With FFT length L and K taps, a segment yields B = L - K + 1 new
//   outputs: segment s of channel c transforms the L inputs x[c][s*B ..
//   s*B + L) (zeros past the n + K - 1 given), and its circular convolution
//   with h is the linear one at positions K-1 .. L-1, which are outputs
//   s*B .. s*B + B - 1. A call has S = ceil(n / B) segments per channel;
//   segment q = c * S + s (channel-major: neighbours share their K - 1
//   overlapping inputs through L2).
// Groups. Segments go through cuFFT in groups of G (the plans' batch): the
//   segment buffer holds G rows of L + 2 floats, the in-place R2C/C2R layout
//   (a row is L reals, or L/2 + 1 complex bins). G covers every segment of
//   the longest call (a chunk) unless that passes group_bytes (1 GiB): on an
//   H100 groups sized to stay in L2 (16-48 MB) were no faster than one group
//   (more launches, smaller grids), so each pass streams through DRAM at
//   close to its bandwidth. Per group, all on the caller's stream:
//     1. gather:   rows <- x (float2 stores, zeros past the input; the K - 1
//                  inputs neighbouring rows share are read twice, from L2)
//     2. cuFFT R2C in place
//     3. multiply: bins *= H (the taps' spectrum, scaled by 1/L, computed
//                  once in float64 and rounded to float), one complex fma
//                  pair per bin, H held in a register across 8 rows
//     4. cuFFT C2R in place
//     5. scatter:  y <- row[K-1 .. K-1+B) (the last segment: fewer)
//   A partial last group gathers, multiplies and scatters only its active
//   rows; the plans still transform all G rows (the others hold old, finite
//   data, or the zeros written at construction), which never reach y.
// Plans. R2C and C2R are made once (cufftMakePlanMany64, auto allocation off)
//   and share one work area owned here; the taps' spectrum is a one-off D2Z.
//   Out of place (FftFirOptions::in_place = false, 1.2x-1.4x slower on an
//   H100) the bins live in a second buffer and rows of both are 16-byte
//   aligned. There are no cuFFT callbacks: they need the static cuFFT (legacy)
//   or JIT-linked LTO-IR; the multiply is its own pass instead.
// Sizes. fft_size_for(): L = the measured best multiple of the taps' power of
//   two (the fraction B/L of each FFT that is new output against cuFFT's
//   cost per point, which grows with L: flat to 8192, +10% at 16384, about
//   2x at 65536 where cuFFT takes two passes), capped by one segment
//   covering the call. Time per pass on an H100 at 2^26 samples, K = 4095,
//   L = 16384 (1.19 ms): gather 0.22, R2C 0.27, multiply 0.27, C2R 0.25,
//   scatter 0.19 ms, each close to DRAM bandwidth.
#include "kernels/cuda/fir_fft.cuh"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/check.hpp"
#include "kernels/cuda/fir_fft_fused.cuh"

namespace sigstream::kernels::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4; // gather and scatter: items per thread
constexpr int kRowsPerMultiplyBlock = 8;
constexpr int kMaxGroup = 65535; // rows per group: gridDim.y of the row kernels
constexpr int kMinFft = 64;
constexpr int kMaxFft = 1 << 24;

Error bad_argument(const std::string& m) {
  return Error(ErrorKind::invalid_argument, "fir_fft: " + m);
}

std::int64_t next_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

// Row q0 + blockIdx.y: x[c][s*B + j], j in [0, L), as L/2 float2 pairs; a
// block covers kThreads * kItems pairs, all loads issued before the stores.
// x[c][i] is data[c][i - x_lead] for i in [x_lead, x_len), else 0.
__global__ void __launch_bounds__(kThreads)
    fft_gather_kernel(const float* __restrict__ d_x, std::int64_t x_stride, std::int64_t x_lead,
                      std::int64_t x_len, std::int64_t seg_per_channel, int block, int fft,
                      std::int64_t q0, float* __restrict__ rows, int row_stride) {
  const std::int64_t q = q0 + blockIdx.y;
  const std::int64_t c = q / seg_per_channel;
  const std::int64_t s = q - c * seg_per_channel;
  const float* src = d_x + c * x_stride - x_lead + s * block; // virtual: read only in [lo, avail)
  const std::int64_t avail = x_len - s * block;
  const std::int64_t lo = x_lead - s * block;
  auto* dst = reinterpret_cast<float2*>(rows + static_cast<std::int64_t>(blockIdx.y) * row_stride);
  const int pairs = fft / 2;
  const int base = static_cast<int>(blockIdx.x) * kThreads * kItems + static_cast<int>(threadIdx.x);
  float2 v[kItems];
#pragma unroll
  for (int u = 0; u < kItems; ++u) {
    const int j = 2 * (base + u * kThreads);
    v[u].x = j >= lo && j < avail && j < fft ? __ldg(src + j) : 0.0f;
    v[u].y = j + 1 >= lo && j + 1 < avail && j < fft ? __ldg(src + j + 1) : 0.0f;
  }
#pragma unroll
  for (int u = 0; u < kItems; ++u)
    if (base + u * kThreads < pairs)
      dst[base + u * kThreads] = v[u];
}

// bins[r][f] *= h[f] for the block's kRowsPerMultiplyBlock rows: h[f] is
// loaded once, the rows' loads all issued before the stores.
__global__ void __launch_bounds__(kThreads)
    fft_multiply_kernel(float2* __restrict__ bins, const float2* __restrict__ h, int nbins,
                        int rows, int row_stride) {
  const int f = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (f >= nbins)
    return;
  const float2 w = __ldg(h + f);
  const int r0 = static_cast<int>(blockIdx.y) * kRowsPerMultiplyBlock;
  float2* p = bins + static_cast<std::int64_t>(r0) * row_stride + f;
  float2 z[kRowsPerMultiplyBlock];
#pragma unroll
  for (int u = 0; u < kRowsPerMultiplyBlock; ++u)
    if (r0 + u < rows)
      z[u] = p[static_cast<std::int64_t>(u) * row_stride];
#pragma unroll
  for (int u = 0; u < kRowsPerMultiplyBlock; ++u) {
    if (r0 + u < rows) {
      float2 o;
      o.x = fmaf(z[u].x, w.x, -z[u].y * w.y);
      o.y = fmaf(z[u].x, w.y, z[u].y * w.x);
      p[static_cast<std::int64_t>(u) * row_stride] = o;
    }
  }
}

// y[c][s*B + j] = row[K-1 + j] for j < min(B, n - s*B); kItems per thread.
__global__ void __launch_bounds__(kThreads)
    fft_scatter_kernel(const float* __restrict__ rows, int row_stride, int taps, int block,
                       std::int64_t seg_per_channel, std::int64_t n, std::int64_t q0,
                       float* __restrict__ d_y, std::int64_t y_stride) {
  const std::int64_t q = q0 + blockIdx.y;
  const std::int64_t c = q / seg_per_channel;
  const std::int64_t s = q - c * seg_per_channel;
  const float* src = rows + static_cast<std::int64_t>(blockIdx.y) * row_stride + (taps - 1);
  float* dst = d_y + c * y_stride + s * block;
  const std::int64_t left = n - s * block;
  const int count = left < block ? static_cast<int>(left) : block;
  const int base = static_cast<int>(blockIdx.x) * kThreads * kItems + static_cast<int>(threadIdx.x);
  float v[kItems];
#pragma unroll
  for (int u = 0; u < kItems; ++u)
    v[u] = base + u * kThreads < count ? src[base + u * kThreads] : 0.0f;
#pragma unroll
  for (int u = 0; u < kItems; ++u)
    if (base + u * kThreads < count)
      dst[base + u * kThreads] = v[u];
}

__global__ void fft_spectrum_kernel(const double2* __restrict__ in, float2* __restrict__ out,
                                    int nbins, double scale) {
  const int f = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (f < nbins)
    out[f] = make_float2(static_cast<float>(in[f].x * scale), static_cast<float>(in[f].y * scale));
}

// Blocks along a row for `items` work items, kItems per thread (at least one).
unsigned row_blocks(std::int64_t items) {
  const std::int64_t per_block = static_cast<std::int64_t>(kThreads) * kItems;
  return static_cast<unsigned>(std::max<std::int64_t>(1, (items + per_block - 1) / per_block));
}

} // namespace

CufftPlan CufftPlan::create() {
  CufftPlan p;
  SIGSTREAM_CUFFT_TRY(cufft().create(&p.handle_));
  p.valid_ = true;
  return p;
}

std::int64_t fft_default_group_bytes() {
  return std::int64_t{1} << 30;
}

bool fused_fft_available(int fft) {
  return detail::fused_fft_supported(fft);
}

bool fused_fft_built() noexcept {
  return detail::fused_fft_built();
}

int fft_size_for(int taps, std::int64_t max_n, bool fused) {
  if (taps < 1)
    throw bad_argument("taps must be >= 1 (got " + std::to_string(taps) + ")");
  const std::int64_t k2 = next_pow2(taps);
  // cuFFT engine, measured on an H100 (bench_gpu_fir --fft-tune, 2^26
  // samples, one group): best L per K: 4096-8192 (a tie) for K = 255, 16384
  // for 1023 .. 4095, 65536 for 16383 (1.62 ms against 1.91 at 32768 and
  // 2.5-2.7 at 131072+). L = 16 K for short filters, 4 K from 2048 taps on;
  // 2^a 3^b sizes were 1.3x-2x slower and out-of-place transforms 1.2x-1.4x
  // slower.
  // Fused engine: its cost is the FFT arithmetic and shared-memory exchange
  // per new output, L log L / (L - K + 1), and larger L hold fewer blocks per
  // SM. Measured on an H100 (bench_gpu_fir --fft-tune, 2^26 samples), ms:
  //   K = 255:   L = 1024 0.340, 4096 0.326, 8192 0.388, 16384 0.674
  //   K = 1023:  L = 2048 0.784, 4096 0.395, 8192 0.419, 16384 0.698
  //   K = 4095:  L = 8192 0.666, 16384 0.845, 32768 0.654, 65536 1.528
  //   K = 16383: L = 32768 0.999, 65536 1.785 (65536 spills registers)
  // L = 4 K (at least 4096) to 2048 taps, then 2 K (short calls waste less
  // of a segment than at the tie 8 K).
  const std::int64_t preferred =
      fused        ? std::min<std::int64_t>(65536,
                                     k2 <= 2048 ? std::max<std::int64_t>(4096, 4 * k2) : 2 * k2)
      : k2 <= 1024 ? std::max<std::int64_t>(4096, 16 * k2)
                   : std::max<std::int64_t>(16384, 4 * k2);
  const std::int64_t cover =
      std::max<std::int64_t>(kMinFft, next_pow2(std::max<std::int64_t>(max_n, 1) + taps - 1));
  return static_cast<int>(
      std::min<std::int64_t>({std::max<std::int64_t>(preferred, k2), cover, kMaxFft}));
}

namespace {

// Whether the fused kernel runs length `fft` for `taps`: a length it runs,
// and (unless the caller chose the length) a filter of at most 32768 taps,
// whose preferred length 2 K' (K' the taps' power of two) yields at least K
// new outputs a segment; longer filters take cuFFT's longer transforms
// (at 65536 taps the longest fused length would leave one output a segment).
bool fused_for(int taps, int fft, bool length_chosen) {
  if (fft < taps)
    return false;
  if (!length_chosen && next_pow2(taps) > 32768)
    return false;
  return fused_fft_available(fft);
}

} // namespace

int fft_size_automatic(int taps, std::int64_t max_n) {
  const int fused = fft_size_for(taps, max_n, true);
  return fused_for(taps, fused, false) ? fused : fft_size_for(taps, max_n);
}

FftFirLayout FftFir::layout_for(int taps, std::int64_t max_n, int max_channels,
                                const FftFirOptions& options) {
  if (taps < 1)
    throw bad_argument("taps must be >= 1 (got " + std::to_string(taps) + ")");
  if (max_n < 1)
    throw bad_argument("max_n must be >= 1 (got " + std::to_string(max_n) + ")");
  if (max_channels < 1 || max_channels > 65535)
    throw bad_argument("channels must be in 1..65535 (got " + std::to_string(max_channels) + ")");
  // The engine: fused where it runs the length asked for (or its own
  // preferred length), else cuFFT with cuFFT's preferred length.
  int fft = options.fft_size;
  bool fused = false;
  if (options.engine != FftEngine::cufft) {
    const int fused_fft = fft > 0 ? fft : fft_size_for(taps, max_n, true);
    fused = fused_for(taps, fused_fft, fft > 0 || options.engine == FftEngine::fused);
    if (fused)
      fft = fused_fft;
    if (!fused && options.engine == FftEngine::fused)
      throw bad_argument(detail::fused_fft_built()
                             ? "the fused engine runs powers of two 1024..65536 >= taps on a "
                               "compute capability 9.0 device (FFT size " +
                                   std::to_string(fused_fft) + ")"
                             : std::string("this build has no fused engine (no cuFFTDx headers)"));
  }
  if (fft <= 0)
    fft = fft_size_for(taps, max_n);
  if (fft < taps || fft % 2 != 0 || fft > kMaxFft)
    throw bad_argument("FFT size " + std::to_string(fft) + " must be even, >= taps (" +
                       std::to_string(taps) + ") and <= " + std::to_string(kMaxFft));
  const std::int64_t group_bytes =
      options.group_bytes > 0 ? options.group_bytes : fft_default_group_bytes();
  FftFirLayout l;
  l.fft = fft;
  l.fused = fused;
  l.block = fft - taps + 1;
  const int nbins = fft / 2 + 1;
  // In place: a row is L + 2 floats, reals or bins. Out of place: L reals
  // (16-byte aligned rows) and L/2 + 2 bins (one of padding, same reason).
  l.real_stride = options.in_place ? fft + 2 : fft;
  l.complex_stride = options.in_place ? nbins : nbins + 1;
  const std::int64_t row_bytes =
      static_cast<std::int64_t>(l.real_stride) * 4 + (options.in_place ? 0 : l.complex_stride * 8);
  const std::int64_t segments_max =
      (max_n + l.block - 1) / l.block * static_cast<std::int64_t>(max_channels);
  l.group = fused ? 0
                  : static_cast<int>(std::clamp<std::int64_t>(
                        std::min(group_bytes / row_bytes, segments_max), 1, kMaxGroup));
  return l;
}

bool FftFir::serves(std::int64_t max_n, int max_channels) const {
  if (!valid() || max_n > max_n_ || max_channels > max_channels_)
    return false;
  const FftFirLayout mine{fft_, fused_, block_, group_, real_stride_, complex_stride_};
  return layout_for(taps_, max_n, max_channels, options_) == mine;
}

FftFir::FftFir(const float* h_taps, int taps, std::int64_t max_n, int max_channels,
               FftFirOptions options) {
  if (h_taps == nullptr)
    throw bad_argument("null taps");
  const FftFirLayout l = layout_for(taps, max_n, max_channels, options);
  options_ = options;
  taps_ = taps;
  fft_ = l.fft;
  block_ = l.block;
  group_ = l.group;
  max_n_ = max_n;
  max_channels_ = max_channels;
  skip_ = options.skip_passes;
  fused_ = l.fused;
  real_stride_ = l.real_stride;
  complex_stride_ = l.complex_stride;
  if (l.fused)
    detail::fused_fft_prepare(l.fft);
  else
    make_cufft_plans(options.in_place);
  compute_spectrum(h_taps);
}

void FftFir::make_cufft_plans(bool in_place) {
  const int fft = fft_;
  const int real_stride = real_stride_;
  const int complex_stride = complex_stride_;
  const long long group = group_;

  // Batched plans: row r's reals at r * real_stride, its bins at r * complex_stride.
  long long n_fft = fft;
  long long real_embed = real_stride;
  long long complex_embed = complex_stride;
  std::size_t ws_r2c = 0, ws_c2r = 0;
  const std::lock_guard lock(cufft_plan_mutex());
  r2c_ = CufftPlan::create();
  SIGSTREAM_CUFFT_TRY(cufft().set_auto_allocation(r2c_.get(), 0));
  SIGSTREAM_CUFFT_TRY(cufft().make_plan_many64(r2c_.get(), 1, &n_fft, &real_embed, 1, real_stride,
                                               &complex_embed, 1, complex_stride, CUFFT_R2C, group,
                                               &ws_r2c));
  c2r_ = CufftPlan::create();
  SIGSTREAM_CUFFT_TRY(cufft().set_auto_allocation(c2r_.get(), 0));
  SIGSTREAM_CUFFT_TRY(cufft().make_plan_many64(c2r_.get(), 1, &n_fft, &complex_embed, 1,
                                               complex_stride, &real_embed, 1, real_stride,
                                               CUFFT_C2R, group, &ws_c2r));
  work_ = DeviceBuffer<std::byte>(std::max<std::size_t>({ws_r2c, ws_c2r, 1}));
  SIGSTREAM_CUFFT_TRY(cufft().set_work_area(r2c_.get(), work_.data()));
  SIGSTREAM_CUFFT_TRY(cufft().set_work_area(c2r_.get(), work_.data()));
  segments_ =
      DeviceBuffer<float>(static_cast<std::size_t>(group) * static_cast<std::size_t>(real_stride));
  if (!in_place)
    bins_ = DeviceBuffer<float2>(static_cast<std::size_t>(group) *
                                 static_cast<std::size_t>(complex_stride));
}

namespace {

// The taps' spectrum, in float64: D2Z of the zero-padded taps, times 1/fft,
// into a new buffer. The upload is pageable: copy on our stream and wait
// (the lanes' non-blocking streams would not wait for a legacy-stream copy).
// The caller holds cufft_plan_mutex().
DeviceBuffer<float2> make_taps_spectrum(const float* h_taps, int taps, int fft) {
  const int nbins = fft / 2 + 1;
  long long n_fft = fft;
  std::vector<double> padded(static_cast<std::size_t>(fft), 0.0);
  for (int k = 0; k < taps; ++k)
    padded[static_cast<std::size_t>(k)] = h_taps[k];
  const Stream stream = Stream::create();
  // Work queued below must be over before any buffer goes back to the memory
  // cache on an error path (a cached block can be handed out at once).
  struct WaitOnUnwind {
    cudaStream_t s;
    ~WaitOnUnwind() {
      if (std::uncaught_exceptions() > 0)
        static_cast<void>(cudaStreamSynchronize(s));
    }
  };
  DeviceBuffer<float2> spectrum(static_cast<std::size_t>(nbins));
  DeviceBuffer<double> d_real(padded.size());
  DeviceBuffer<double2> d_bins(static_cast<std::size_t>(nbins));
  DeviceBuffer<std::byte> d2z_work; // before the plan that uses it: destroyed after it
  CufftPlan d2z = CufftPlan::create();
  std::size_t ws_d2z = 0;
  SIGSTREAM_CUFFT_TRY(cufft().set_auto_allocation(d2z.get(), 0));
  SIGSTREAM_CUFFT_TRY(cufft().set_stream(d2z.get(), stream.get()));
  SIGSTREAM_CUFFT_TRY(cufft().make_plan_many64(d2z.get(), 1, &n_fft, nullptr, 1, fft, nullptr, 1,
                                               nbins, CUFFT_D2Z, 1, &ws_d2z));
  d2z_work = DeviceBuffer<std::byte>(std::max<std::size_t>(ws_d2z, 1));
  SIGSTREAM_CUFFT_TRY(cufft().set_work_area(d2z.get(), d2z_work.data()));
  const WaitOnUnwind wait_on_unwind{stream.get()}; // declared after the buffers: runs first
  SIGSTREAM_CUDA_TRY(cudaMemcpyAsync(d_real.data(), padded.data(), d_real.bytes(),
                                     cudaMemcpyHostToDevice, stream.get()));
  SIGSTREAM_CUFFT_TRY(cufft().exec_d2z(d2z.get(), d_real.data(),
                                       reinterpret_cast<cufftDoubleComplex*>(d_bins.data())));
  fft_spectrum_kernel<<<(nbins + kThreads - 1) / kThreads, kThreads, 0, stream.get()>>>(
      d_bins.data(), spectrum.data(), nbins, 1.0 / fft);
  SIGSTREAM_CUDA_CHECK_LAUNCH("fft_spectrum_kernel");
  stream.synchronize();
  return spectrum;
}

} // namespace

std::recursive_mutex& cufft_plan_mutex() {
  static std::recursive_mutex m;
  return m;
}

std::shared_ptr<const DeviceBuffer<float2>> taps_spectrum(const float* h_taps, int taps, int fft) {
  // Every lane of every file of a batch filters with the same taps: one
  // spectrum per device, taps and length, alive while a filter holds it.
  using Key = std::tuple<int, int, std::vector<float>>;
  static std::map<Key, std::weak_ptr<const DeviceBuffer<float2>>> cache;
  int device = 0;
  SIGSTREAM_CUDA_TRY(cudaGetDevice(&device));
  Key key{device, fft, std::vector<float>(h_taps, h_taps + taps)};
  const std::lock_guard lock(cufft_plan_mutex());
  if (auto it = cache.find(key); it != cache.end()) {
    if (auto held = it->second.lock())
      return held;
  }
  auto made = std::make_shared<const DeviceBuffer<float2>>(make_taps_spectrum(h_taps, taps, fft));
  // Entries whose spectrum has gone are dropped as new ones come.
  for (auto it = cache.begin(); it != cache.end();)
    it = it->second.expired() ? cache.erase(it) : std::next(it);
  cache[std::move(key)] = made;
  return made;
}

void FftFir::compute_spectrum(const float* h_taps) {
  spectrum_ = taps_spectrum(h_taps, taps_, fft_);
  // cuFFT engine: rows a partial last group leaves alone are transformed
  // anyway: start finite.
  if (segments_.size() == 0 && bins_.size() == 0)
    return;
  const Stream stream = Stream::create();
  if (segments_.size() > 0)
    SIGSTREAM_CUDA_TRY(cudaMemsetAsync(segments_.data(), 0, segments_.bytes(), stream.get()));
  if (bins_.size() > 0)
    SIGSTREAM_CUDA_TRY(cudaMemsetAsync(bins_.data(), 0, bins_.bytes(), stream.get()));
  stream.synchronize();
}

void FftFir::run(const float* d_x, std::int64_t n, float* d_y, int channels, std::int64_t x_stride,
                 std::int64_t y_stride, cudaStream_t stream, FirInputSpan span) {
  if (!valid())
    throw bad_argument("run() on an empty FftFir");
  if (n < 0 || n > max_n_)
    throw bad_argument("n must be in 0.." + std::to_string(max_n_) + " (got " + std::to_string(n) +
                       ")");
  if (channels < 0 || channels > max_channels_)
    throw bad_argument("channels must be in 0.." + std::to_string(max_channels_) + " (got " +
                       std::to_string(channels) + ")");
  if (n == 0 || channels == 0)
    return;
  if (d_x == nullptr || d_y == nullptr)
    throw bad_argument("null pointer");
  if (channels > 1 && (y_stride < n || x_stride < 0))
    throw bad_argument("y_stride " + std::to_string(y_stride) + " < n " + std::to_string(n));

  const std::int64_t seg_per_channel = (n + block_ - 1) / block_;
  const std::int64_t total = seg_per_channel * channels;
  const auto [x_lead, x_len] = input_range(span, n, taps_, "fir_fft");
  if (fused_) {
    detail::fused_fft_run({d_x, x_stride, x_lead, x_len, seg_per_channel, total, block_, taps_,
                           fft_, spectrum_->data(), n, d_y, y_stride},
                          stream);
    return;
  }
  const int nbins = fft_ / 2 + 1;
  auto* bins = bins_.size() > 0 ? reinterpret_cast<cufftComplex*>(bins_.data())
                                : reinterpret_cast<cufftComplex*>(segments_.data());
  SIGSTREAM_CUFFT_TRY(cufft().set_stream(r2c_.get(), stream));
  SIGSTREAM_CUFFT_TRY(cufft().set_stream(c2r_.get(), stream));
  for (std::int64_t q0 = 0; q0 < total; q0 += group_) {
    const auto active = static_cast<unsigned>(std::min<std::int64_t>(group_, total - q0));
    if ((skip_ & 1u) == 0) {
      fft_gather_kernel<<<dim3(row_blocks(fft_ / 2), active), kThreads, 0, stream>>>(
          d_x, x_stride, x_lead, x_len, seg_per_channel, block_, fft_, q0, segments_.data(),
          real_stride_);
      SIGSTREAM_CUDA_CHECK_LAUNCH("fft_gather_kernel");
    }
    if ((skip_ & 2u) == 0)
      SIGSTREAM_CUFFT_TRY(cufft().exec_r2c(r2c_.get(), segments_.data(), bins));
    if ((skip_ & 4u) == 0) {
      const dim3 mgrid(static_cast<unsigned>((nbins + kThreads - 1) / kThreads),
                       (active + kRowsPerMultiplyBlock - 1) / kRowsPerMultiplyBlock);
      fft_multiply_kernel<<<mgrid, kThreads, 0, stream>>>(
          reinterpret_cast<float2*>(bins), spectrum_->data(), nbins, static_cast<int>(active),
          complex_stride_);
      SIGSTREAM_CUDA_CHECK_LAUNCH("fft_multiply_kernel");
    }
    if ((skip_ & 8u) == 0)
      SIGSTREAM_CUFFT_TRY(cufft().exec_c2r(c2r_.get(), bins, segments_.data()));
    if ((skip_ & 16u) != 0)
      continue;
    fft_scatter_kernel<<<dim3(row_blocks(block_), active), kThreads, 0, stream>>>(
        segments_.data(), real_stride_, taps_, block_, seg_per_channel, n, q0, d_y, y_stride);
    SIGSTREAM_CUDA_CHECK_LAUNCH("fft_scatter_kernel");
  }
}

std::size_t FftFir::device_bytes() const noexcept {
  return segments_.bytes() + bins_.bytes() + (spectrum_ ? spectrum_->bytes() : 0) + work_.bytes();
}

std::string FftFir::describe() const {
  std::ostringstream o;
  o << "fft overlap-save L=" << fft_ << " (" << block_ << " outputs/segment), ";
  if (fused_)
    o << "one fused cuFFTDx kernel";
  else
    o << group_ << " segments per cuFFT call" << (bins_.size() > 0 ? "" : " (in place)");
  o << ", " << (device_bytes() + (1 << 19)) / (1 << 20) << " MB";
  return o.str();
}

} // namespace sigstream::kernels::cuda
