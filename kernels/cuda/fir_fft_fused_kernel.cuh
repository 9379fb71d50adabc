#pragma once
// The fused overlap-save kernel as a template over the FFT length L and the
// elements per thread (0: cuFFTDx's suggestion), for fir_fft_fused.cu, which
// instantiates the sizes FftFir runs, and for bench/gpu_fused_tune.cu, which
// times other shapes. Needs the cuFFTDx headers (SIGSTREAM_HAVE_CUFFTDX).
// The algorithm is described at the top of fir_fft_fused.cu.
#include <cufftdx.hpp>

#include <cstdint>

namespace sigstream::kernels::cuda::detail {

namespace dx = cufftdx;

template <unsigned L, unsigned EPT = 0> struct FusedFft {
  template <dx::fft_type T, dx::fft_direction D> static auto describe() {
    using Base = decltype(dx::Block() + dx::Size<L>() + dx::Precision<float>() + dx::SM<900>() +
                          dx::Type<T>() + dx::Direction<D>() +
                          dx::RealFFTOptions<dx::complex_layout::natural, dx::real_mode::folded>() +
                          dx::FFTsPerBlock<1>());
    if constexpr (EPT == 0)
      return Base();
    else
      return decltype(Base() + dx::ElementsPerThread<EPT>())();
  }
  using R2C = decltype(describe<dx::fft_type::r2c, dx::fft_direction::forward>());
  using C2R = decltype(describe<dx::fft_type::c2r, dx::fft_direction::inverse>());
  static_assert(R2C::block_dim.x == C2R::block_dim.x && R2C::stride == C2R::stride,
                "the R2C and C2R must share one thread layout");
  static_assert(R2C::storage_size == C2R::storage_size && R2C::output_ept == C2R::input_ept);
  static_assert(!R2C::requires_workspace && !C2R::requires_workspace);
  static_assert(R2C::input_length == L / 2 && R2C::input_length == R2C::stride * R2C::input_ept,
                "every pair of inputs has one thread");
  static constexpr unsigned threads = R2C::max_threads_per_block;
  static constexpr unsigned shared_bytes = R2C::shared_memory_size > C2R::shared_memory_size
                                               ? R2C::shared_memory_size
                                               : C2R::shared_memory_size;
};

template <unsigned L, unsigned EPT = 0>
__global__ void __launch_bounds__(FusedFft<L, EPT>::threads)
    fused_fft_fir_kernel(const float* __restrict__ d_x, std::int64_t x_stride, std::int64_t x_lead,
                         std::int64_t x_len, std::int64_t seg_per_channel, int block, int taps,
                         const float2* __restrict__ spectrum, std::int64_t n,
                         float* __restrict__ d_y, std::int64_t y_stride, std::int64_t q0) {
  using R2C = typename FusedFft<L, EPT>::R2C;
  using C2R = typename FusedFft<L, EPT>::C2R;
  using complex_type = typename R2C::value_type;
  extern __shared__ __align__(16) unsigned char shared[];
  auto* smem = reinterpret_cast<complex_type*>(shared);

  const std::int64_t q = q0 + blockIdx.x;
  const std::int64_t c = q / seg_per_channel;
  const std::int64_t s = q - c * seg_per_channel;
  const std::int64_t start = s * block;
  const float* row = d_x + c * x_stride;  // virtual x[i] is row[i - x_lead], i in [x_lead, x_len)
  const std::int64_t lo = x_lead - start; // segment positions e in [lo, avail) hold data
  const std::int64_t avail = x_len - start;
  const std::int64_t shift = start - x_lead; // row index of segment position 0
  const unsigned t = threadIdx.x;

  complex_type v[R2C::storage_size];
#pragma unroll
  for (unsigned i = 0; i < R2C::input_ept; ++i) {
    const std::int64_t e = 2 * static_cast<std::int64_t>(t + i * R2C::stride);
    v[i].x = e >= lo && e < avail ? __ldg(row + (shift + e)) : 0.0f;
    v[i].y = e + 1 >= lo && e + 1 < avail ? __ldg(row + (shift + e + 1)) : 0.0f;
  }
  R2C().execute(v, smem);
#pragma unroll
  for (unsigned i = 0; i < R2C::output_ept; ++i) {
    const unsigned f = t + i * R2C::stride;
    if (f < R2C::output_length) {
      const float2 w = __ldg(spectrum + f);
      const float re = fmaf(v[i].x, w.x, -v[i].y * w.y);
      const float im = fmaf(v[i].x, w.y, v[i].y * w.x);
      v[i].x = re;
      v[i].y = im;
    }
  }
  __syncthreads(); // the C2R reuses the shared memory the R2C's last exchange read
  C2R().execute(v, smem);

  float* dst = d_y + c * y_stride + start;
  const std::int64_t left = n - start;
  const std::int64_t count = left < block ? left : block;
#pragma unroll
  for (unsigned i = 0; i < C2R::output_ept; ++i) {
    const std::int64_t o = 2 * static_cast<std::int64_t>(t + i * C2R::stride) - (taps - 1);
    if (o >= 0 && o < count)
      dst[o] = v[i].x;
    if (o + 1 >= 0 && o + 1 < count)
      dst[o + 1] = v[i].y;
  }
}

} // namespace sigstream::kernels::cuda::detail
