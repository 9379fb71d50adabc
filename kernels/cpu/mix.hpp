#pragma once
// Channel mixing (SPEC §11): output plane c is a weighted sum of the input
// planes, y[c][i] = Σ_j g[c·in + j] · x[j][i], summed in ascending j from 0
// with one fma a term, in float32 (what the CPU backend runs) or float64
// (the reference). A term whose gain is 0 is left out: an input a row does
// not use is not read, so an Inf or NaN there does not reach that output (a
// mixer's "not connected", as SoX's remix and FFmpeg's pan), and a row of
// zeros gives +0. The CUDA kernel (kernels/cuda/mix.cuh) does the same fmas
// in the same order, so both backends give the same bits.
#include <cstdint>
#include <span>

namespace sigstream::kernels::cpu {

// x: the input planes (x.size() = in), read from element x_offset on; y:
// the output planes (y.size() = out), gains: out x in, row-major; frames
// [0, n) of each. No plane of y may be a plane of x.
void mix(std::span<const float* const> x, const float* gains, std::span<float* const> y,
         std::int64_t n, std::int64_t x_offset = 0);
void mix(std::span<const double* const> x, const double* gains, std::span<double* const> y,
         std::int64_t n, std::int64_t x_offset = 0);

} // namespace sigstream::kernels::cpu
