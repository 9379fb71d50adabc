#pragma once
// Uniformly partitioned overlap-save FIR on the GPU for live mode (the GPU
// counterpart of kernels/cpu/fir_partitioned.hpp), one block of P new samples
// per channel a step:
//
//   y[n] = sum_{k=0}^{K-1} h[k] * x[n-k]
//
// Blocks are short (48 samples at 1 ms and 48 kHz), so the 2P-point
// transforms are plain DFT sums from a twiddle table (about 2P^2 FMAs a
// channel, less than launching an FFT library's kernels), while the work that
// grows with K, the multiply-accumulate over the M = ceil(K/P) partitions of
// the frequency-domain delay line, is spread over the whole GPU.
//
// The ring of spectra has its newest slot in device memory (*d_head), so
// every launch of a step has the same arguments and a step can be captured
// once in a CUDA graph and replayed. Deterministic: fixed summation orders,
// no atomics. Within ~1e-6 relative of the float64 sum.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace sigstream::kernels::cuda {

// Host-side: the spectra of the M partitions of `h` (K taps) for blocks of
// P, with the inverse transform's 1/(2P) folded in: M x (P+1) complex values
// (interleaved re, im), partition-major. And the twiddle table
// (cos, sin)(pi m / P), m = 0 .. 2P-1.
std::vector<float> partitioned_spectra(const float* h, int taps, int block);
std::vector<float> partitioned_twiddles(int block);

// How many slices the multiply-accumulate splits the partitions into
// (each slice's sum is a partial the inverse step adds in order).
[[nodiscard]] int partitioned_splits(int partitions) noexcept;

// One step, all asynchronous on `stream` (throws Error(cuda) on a failed launch):
//  forward: X = DFT of [d_prev | d_new] (2P samples) per channel into ring slot
//           *d_head; then d_prev = d_new. Channel c's samples at c * P.
//  mac:     partial[c][s][k] = sum over slice s of the partitions j of
//           X_{slot(*d_head + j)}[k] * H_j[k].
//  inverse: Y = sum_s partial[c][s]; d_y[c * P + n] = the last P samples of the
//           inverse DFT of Y; then *d_head moves back one slot for the next step.
// d_fdl: partitions x channels x (P+1) complex; d_partial: channels x splits x (P+1) complex.
void partitioned_forward(const float* d_new, float* d_prev, int channels, int block, float* d_fdl,
                         const int* d_head, const float* d_twiddle, cudaStream_t stream);
void partitioned_mac(const float* d_fdl, const float* d_spectra, const int* d_head, int channels,
                     int block, int partitions, float* d_partial, cudaStream_t stream);
void partitioned_inverse(const float* d_partial, int channels, int block, int partitions,
                         const float* d_twiddle, float* d_y, int* d_head, cudaStream_t stream);

} // namespace sigstream::kernels::cuda
