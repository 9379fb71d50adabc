// sigstream.sosfilt's compiled half: rows of float32 samples through a
// cascade of second-order sections (kernels/cpu/iir.hpp, the CLI's iir
// kernel), each row's float64 state in and out. Host arrays here; CUDA
// arrays go to module.cpp's sosfilt_cuda (array_ops_cuda.cpp).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "array_ops.hpp"
#include "core/thread_pool.hpp"
#include "kernels/cpu/iir.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace sigstream::py {

namespace {

template <typename T>
using HostRows = nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
template <typename T> using HostOut = nb::ndarray<T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Sos = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using State = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

ThreadPool& iir_pool() {
  static ThreadPool p(hardware_threads());
  return p;
}

// x (rows, n) -> y (rows, n) in float32 or float64; state (rows, 2 *
// sections), updated.
template <typename T>
void sosfilt(const HostRows<T>& x, const Sos& sos, const State& state, const HostOut<T>& y) {
  if (sos.shape(1) != 6 || sos.shape(0) == 0)
    throw nb::value_error("sos must have shape (n_sections, 6)");
  const auto rows = static_cast<std::int64_t>(x.shape(0));
  const auto n = static_cast<std::int64_t>(x.shape(1));
  const auto sections = static_cast<std::size_t>(sos.shape(0));
  if (static_cast<std::int64_t>(y.shape(0)) != rows || static_cast<std::int64_t>(y.shape(1)) != n)
    throw nb::value_error("output: wrong shape");
  if (static_cast<std::int64_t>(state.shape(0)) != rows || state.shape(1) != 2 * sections)
    throw nb::value_error("state: wrong shape");
  const std::vector<kernels::cpu::Biquad> s = sos_sections(sos.data(), sections);
  // Rows in groups a task each (a row's samples are serial; rows are not).
  auto run_rows = [&](std::int64_t r0, std::int64_t r1) {
    std::vector<const T*> xs;
    std::vector<T*> ys;
    std::vector<double*> zs;
    for (std::int64_t r = r0; r < r1; ++r) {
      xs.push_back(x.data() + r * n);
      ys.push_back(y.data() + r * n);
      zs.push_back(state.data() + r * static_cast<std::int64_t>(2 * sections));
    }
    kernels::cpu::sosfilt(s, std::span<double* const>(zs), std::span<const T* const>(xs),
                          std::span<T* const>(ys), n);
  };
  const std::int64_t work = rows * n * static_cast<std::int64_t>(sections);
  const std::int64_t tasks =
      work < 4'000'000 ? 1 : std::min<std::int64_t>(rows, hardware_threads());
  nb::gil_scoped_release unlocked;
  if (tasks <= 1) {
    run_rows(0, rows);
    return;
  }
  const std::int64_t per = (rows + tasks - 1) / tasks;
  run_tasks(iir_pool(), tasks, [&](std::int64_t t) {
    if (t * per < rows)
      run_rows(t * per, std::min(rows, (t + 1) * per));
  });
}

} // namespace

void bind_iir(nb::module_& m) {
  m.def("sosfilt", &sosfilt<float>, "x"_a.noconvert(), "sos"_a.noconvert(), "state"_a.noconvert(),
        "y"_a.noconvert());
  m.def("sosfilt", &sosfilt<double>, "x"_a.noconvert(), "sos"_a.noconvert(), "state"_a.noconvert(),
        "y"_a.noconvert());
}

} // namespace sigstream::py
