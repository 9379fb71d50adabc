#pragma once
// What the mix stage's QA tests (test_mix.cpp, test_mix_cuda.cu) share.
#include <cstdint>
#include <random>
#include <vector>

namespace sigstream::test {

// An out x in matrix of gains in [-1.5, 1.5), from `seed`.
inline std::vector<std::vector<double>> random_matrix(int out, int in, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1.5, 1.5);
  std::vector<std::vector<double>> m(static_cast<std::size_t>(out),
                                     std::vector<double>(static_cast<std::size_t>(in)));
  for (auto& row : m)
    for (double& g : row)
      g = d(rng);
  return m;
}

} // namespace sigstream::test
