// sigstream._core: the nanobind binding under the Python package (python/sigstream).
// Thin on purpose: arrays arrive here 2-D float32 (rows x samples, unit
// stride along a row) and already allocated for the output, on the device
// the Python layer checked; this file turns them into array_ops calls with
// the GIL released, and sigstream::Error into the Python exception classes
// the package registers (set_error_types). The host sosfilt has its own file
// (iir_binding.cpp), the YAML pipelines' (run, batch and a distributed
// batch's parts) theirs (pipeline_binding.cpp); the work is in array_ops*.cpp.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "array_ops.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "kernels/cpu/fir_fft.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/config.hpp"
#include "pipeline/pipeline.hpp"
#ifdef SIGSTREAM_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/check.hpp"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace sigstream::py {
namespace {

// A 2-D float32 array on any device: rows along axis 0, samples along axis 1.
using Array = nb::ndarray<float, nb::ndim<2>>;
using ConstArray = nb::ndarray<const float, nb::ndim<2>>;

// Taps: a float64 vector in host memory (the package passes NumPy arrays:
// no per-element conversion of a Python list).
using Taps = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

std::vector<double> taps_of(const Taps& t) {
  if (t.shape(0) == 0)
    throw nb::value_error("taps must not be empty");
  std::vector<double> h(t.data(), t.data() + t.shape(0));
  for (const double v : h)
    if (!std::isfinite(v))
      throw nb::value_error("taps must be finite (found NaN or Inf)");
  return h;
}

// The Python classes for each ErrorKind (set once by the package).
std::array<PyObject*, 9> g_error_types{};

enum class Where { cpu, cuda };

template <typename A> Where where(const A& a, const char* what) {
  if (a.device_type() == nb::device::cpu::value)
    return Where::cpu;
  if (a.device_type() == nb::device::cuda::value)
    return Where::cuda;
  throw nb::value_error(
      (std::string(what) + ": arrays must be in host memory or on a CUDA device").c_str());
}

template <typename A> std::int64_t row_stride(const A& a, const char* what) {
  if (a.shape(1) > 1 && a.stride(1) != 1)
    throw nb::value_error(
        (std::string(what) + ": samples must be contiguous along the last axis").c_str());
  return a.shape(0) > 1 ? a.stride(0) : static_cast<std::int64_t>(a.shape(1));
}

Rows rows_of(const ConstArray& x) {
  return Rows{x.data(), static_cast<std::int64_t>(x.shape(0)),
              static_cast<std::int64_t>(x.shape(1)), row_stride(x, "input")};
}

OutRows out_of(const Array& y, std::int64_t rows, std::int64_t n) {
  if (static_cast<std::int64_t>(y.shape(0)) != rows || static_cast<std::int64_t>(y.shape(1)) != n)
    throw nb::value_error("output: wrong shape");
  return OutRows{y.data(), row_stride(y, "output")};
}

void same_device(const ConstArray& x, const Array& y) {
  if (x.device_type() != y.device_type() || x.device_id() != y.device_id())
    throw nb::value_error("input and output must be on the same device");
}

#ifdef SIGSTREAM_HAVE_CUDA
// Makes the array's device current for the call, and restores the caller's.
class DeviceGuard {
public:
  explicit DeviceGuard(int device) : device_(device) {
    SIGSTREAM_CUDA_TRY(cudaGetDevice(&previous_));
    if (device != previous_)
      SIGSTREAM_CUDA_TRY(cudaSetDevice(device));
  }
  ~DeviceGuard() {
    if (device_ != previous_)
      static_cast<void>(cudaSetDevice(previous_));
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
  int device_ = 0;
  int previous_ = 0;
};
#endif

[[noreturn, maybe_unused]] void no_cuda() {
  throw Error(ErrorKind::cuda,
              "this sigstream was built without CUDA (no nvcc at build time): GPU arrays need a "
              "build with the CUDA toolkit");
}

// Runs cpu() for a host array, else gpu() with the array's device current;
// the GIL released either way.
template <typename Cpu, typename Gpu>
auto compute(Where w, int device, Cpu&& cpu, [[maybe_unused]] Gpu&& gpu) {
  nb::gil_scoped_release release;
  if (w == Where::cpu)
    return cpu();
#ifdef SIGSTREAM_HAVE_CUDA
  const DeviceGuard guard(device);
  return gpu();
#else
  static_cast<void>(device);
  no_cuda();
#endif
}

void fir(const ConstArray& x, const Taps& t, const std::string& mode, const std::string& method,
         const Array& y, [[maybe_unused]] std::uintptr_t stream) {
  const std::vector<double> taps = taps_of(t);
  const Mode m = parse_mode(mode);
  const FirMethod fm = parse_method(method);
  same_device(x, y);
  const Rows in = rows_of(x);
  const OutRows out = out_of(y, in.rows, fir_shape(m, in.n, static_cast<int>(taps.size())).n_out);
  compute(
      where(x, "filter"), x.device_id(), [&] { fir_cpu(in, taps, m, fm, out); },
      [&] {
#ifdef SIGSTREAM_HAVE_CUDA
        fir_cuda(in, taps, m, fm, out, stream);
#endif
      });
}

// The GPU fast path's entry (sigstream.filter on a contiguous float32 CUDA
// tensor or CuPy array): raw device pointers the package took from the
// caller's array and its freshly allocated output, so no DLPack export is
// paid per call. rows x n inputs at x + r * x_stride, outputs likewise.
void fir_device_pointers([[maybe_unused]] std::uintptr_t x, [[maybe_unused]] std::int64_t rows,
                         [[maybe_unused]] std::int64_t n, [[maybe_unused]] std::int64_t x_stride,
                         [[maybe_unused]] std::uintptr_t y, [[maybe_unused]] std::int64_t y_stride,
                         [[maybe_unused]] int device, const Taps& t, const std::string& mode,
                         const std::string& method, [[maybe_unused]] std::uintptr_t stream) {
  const std::vector<double> taps = taps_of(t);
  const Mode m = parse_mode(mode);
  const FirMethod fm = parse_method(method);
  if (rows < 0 || n < 0)
    throw nb::value_error("fir_device_pointers: bad arguments");
  if (rows == 0 || fir_shape(m, n, static_cast<int>(taps.size())).n_out == 0)
    return; // nothing to compute
  if (x == 0 || y == 0)
    throw nb::value_error("fir_device_pointers: null pointer");
  compute(
      Where::cuda, device, [] {},
      [&] {
#ifdef SIGSTREAM_HAVE_CUDA
        fir_cuda(Rows{reinterpret_cast<const float*>(x), rows, n, x_stride}, taps, m, fm,
                 OutRows{reinterpret_cast<float*>(y), y_stride}, stream);
#endif
      });
}

void fir_host_on_cuda(const ConstArray& x, const Taps& t, const std::string& mode,
                      const std::string& method, const Array& y) {
  const std::vector<double> taps = taps_of(t);
  const Mode m = parse_mode(mode);
  const FirMethod fm = parse_method(method);
  if (where(x, "filter") != Where::cpu || where(y, "filter") != Where::cpu)
    throw nb::value_error("fir_host_on_cuda takes host arrays");
  const Rows in = rows_of(x);
  const OutRows out = out_of(y, in.rows, fir_shape(m, in.n, static_cast<int>(taps.size())).n_out);
  nb::gil_scoped_release release;
#ifdef SIGSTREAM_HAVE_CUDA
  fir_cuda_host(in, taps, m, fm, out);
#else
  no_cuda();
#endif
}

// sigstream.sosfilt on CUDA arrays (the package calls it for CuPy, PyTorch
// and other DLPack GPU arrays): the rows in place on their device, the
// state (rows x 2 sections, float64) in host memory, updated.
using Sos = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using SosState = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

void sosfilt_gpu(const ConstArray& x, const Sos& sos, const SosState& state, const Array& y,
                 [[maybe_unused]] std::uintptr_t stream) {
  if (sos.shape(1) != 6 || sos.shape(0) == 0)
    throw nb::value_error("sos must have shape (n_sections, 6)");
  same_device(x, y);
  if (where(x, "sosfilt") != Where::cuda)
    throw nb::value_error("sosfilt_gpu takes CUDA arrays");
  const Rows in = rows_of(x);
  const OutRows out = out_of(y, in.rows, in.n);
  if (static_cast<std::int64_t>(state.shape(0)) != in.rows || state.shape(1) != 2 * sos.shape(0))
    throw nb::value_error("state: wrong shape");
  const std::vector<kernels::cpu::Biquad> s = sos_sections(sos.data(), sos.shape(0));
  compute(
      Where::cuda, x.device_id(), [] {},
      [&] {
#ifdef SIGSTREAM_HAVE_CUDA
        sosfilt_cuda(in, s, state.data(), out, stream);
#endif
      });
}

void resample(const ConstArray& x, const Resampler& r, const Array& y,
              [[maybe_unused]] std::uintptr_t stream) {
  same_device(x, y);
  const Rows in = rows_of(x);
  const OutRows out = out_of(y, in.rows, resampled_length(r, in.n));
  compute(
      where(x, "resample"), x.device_id(), [&] { resample_cpu(in, r, out); },
      [&] {
#ifdef SIGSTREAM_HAVE_CUDA
        resample_cuda(in, r, out, stream);
#endif
      });
}

// Per row, SPEC §4's names: energy, rms, peak, mean, nonfinite, and with a
// reference dot_input and correlation_input; frames.
nb::dict metrics(const ConstArray& y, std::optional<ConstArray> reference,
                 [[maybe_unused]] std::uintptr_t stream) {
  const Rows in = rows_of(y);
  const float* ref = nullptr;
  std::int64_t ref_stride = 0;
  if (reference) {
    if (reference->device_type() != y.device_type() || reference->device_id() != y.device_id())
      throw nb::value_error("metrics: x and reference must be on the same device");
    if (reference->shape(0) != y.shape(0) || reference->shape(1) != y.shape(1))
      throw nb::value_error("metrics: x and reference must have the same shape");
    ref = reference->data();
    ref_stride = row_stride(*reference, "reference");
  }
  const std::vector<ChannelMetrics> m = compute(
      where(y, "metrics"), y.device_id(), [&] { return metrics_cpu(in, ref, ref_stride); },
      [&]() -> std::vector<ChannelMetrics> {
#ifdef SIGSTREAM_HAVE_CUDA
        return metrics_cuda(in, ref, ref_stride, stream);
#else
        return {};
#endif
      });
  // Columns over the rows; rms, mean and correlation as ChannelMetrics defines them.
  std::vector<double> energy, rms, peak, mean, dot, correlation;
  std::vector<std::int64_t> nonfinite;
  for (const ChannelMetrics& c : m) {
    energy.push_back(c.energy);
    rms.push_back(c.rms());
    peak.push_back(c.peak);
    mean.push_back(c.mean());
    dot.push_back(c.dot);
    correlation.push_back(c.correlation());
    nonfinite.push_back(c.nonfinite);
  }
  nb::dict d;
  d["energy"] = energy;
  d["rms"] = rms;
  d["peak"] = peak;
  d["mean"] = mean;
  d["nonfinite"] = nonfinite;
  if (reference) {
    d["dot_input"] = dot;
    d["correlation_input"] = correlation;
  }
  d["frames"] = in.n;
  return d;
}

// Welch's PSD per row of a host array: (freq_hz, psd rows x bins), both float64 NumPy.
nb::tuple spectrum(const ConstArray& x, double rate, int nfft, int noverlap,
                   const std::string& window) {
  if (where(x, "spectrum") != Where::cpu)
    throw nb::type_error(
        "spectrum: takes host (NumPy) arrays in this version; the GPU's Welch is not built yet "
        "(move the array to the host first, e.g. x.get() or x.cpu().numpy())");
  const Rows in = rows_of(x);
  Spectrum s;
  {
    nb::gil_scoped_release release;
    s = spectrum_cpu(in, rate, nfft, noverlap, window);
  }
  auto numpy = [](std::vector<double>&& v, std::initializer_list<std::size_t> shape) {
    auto* owned = new std::vector<double>(std::move(v));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
    return nb::ndarray<nb::numpy, double>(owned->data(), shape, owner);
  };
  const auto bins = static_cast<std::size_t>(s.bins);
  return nb::make_tuple(numpy(std::move(s.freq_hz), {bins}),
                        numpy(std::move(s.psd), {static_cast<std::size_t>(in.rows), bins}));
}

} // namespace
} // namespace sigstream::py

namespace sigstream::py {
void bind_iir(nb::module_& m);       // iir_binding.cpp
void bind_pipelines(nb::module_& m); // pipeline_binding.cpp
} // namespace sigstream::py

NB_MODULE(_core, m) {
  using namespace sigstream;
  using namespace sigstream::py;
  m.doc() = "sigstream's compiled core (use the sigstream package, not this module)";
  m.attr("__version__") = kVersion;
  m.attr("fused_fft") = fused_fft_engine_built();
  m.attr("cpu_fft") = std::string(kernels::cpu::FirFft::library());
#ifdef SIGSTREAM_HAVE_CUDA
  m.attr("has_cuda") = true;
  m.def("cuda_device_count", &cuda_device_count);
  m.def("last_cuda_launch", [] {
    const LastLaunch l = last_cuda_launch();
    return std::make_tuple(reinterpret_cast<std::uintptr_t>(l.x),
                           reinterpret_cast<std::uintptr_t>(l.y), l.method);
  });
#else
  m.attr("has_cuda") = false;
  m.def("cuda_device_count", [] { return 0; });
#endif

  m.def("auto_files_per_device", static_cast<int (*)(int, int)>(&auto_files_per_device),
        "cpu_threads"_a, "devices"_a);
  m.def("set_error_types", [](nb::dict types) {
    // kind name -> class; kept for the life of the process.
    const std::pair<const char*, ErrorKind> kinds[] = {
        {"config", ErrorKind::config},
        {"invalid_argument", ErrorKind::invalid_argument},
        {"io", ErrorKind::io},
        {"cuda", ErrorKind::cuda},
        {"verification", ErrorKind::verification},
        {"interrupted", ErrorKind::interrupted},
        {"output_closed", ErrorKind::output_closed},
        {"internal", ErrorKind::internal},
        {"cuda_memory", ErrorKind::cuda_memory}};
    for (const auto& [name, kind] : kinds) {
      if (!types.contains(name))
        continue;
      nb::object t = types[name];
      PyObject*& slot = g_error_types[static_cast<std::size_t>(kind)];
      Py_XDECREF(slot);
      slot = t.release().ptr();
    }
  });
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = g_error_types[static_cast<std::size_t>(e.kind())];
      if (type == nullptr)
        type = PyExc_RuntimeError;
      // U+FFFD for the odd bytes of a name that is not UTF-8 (PyErr_SetString
      // decodes strictly: the exception had lost its whole message).
      PyObject* message =
          PyUnicode_DecodeUTF8(e.what(), static_cast<Py_ssize_t>(std::strlen(e.what())), "replace");
      if (message == nullptr) {
        PyErr_Clear();
        PyErr_SetString(type, "(a message that could not be decoded)");
        return;
      }
      PyErr_SetObject(type, message);
      Py_DECREF(message);
    }
  });

  m.def("spectrum", &spectrum, "x"_a.noconvert(), "rate"_a, "nfft"_a, "noverlap"_a, "window"_a);
  m.def("design", &design, "kind"_a, "cutoff_hz"_a, "rate"_a, "taps"_a, "window"_a);
  m.def("fir_length", [](const std::string& mode, std::int64_t n, int taps) {
    return fir_shape(parse_mode(mode), n, taps).n_out;
  });
  m.def("resolve_method",
        [](const std::string& method, bool cuda, int taps, std::int64_t n_out, std::int64_t rows) {
          CudaFftEngine engine = CudaFftEngine::cufft;
#ifdef SIGSTREAM_HAVE_CUDA
          if (cuda)
            engine = cuda_fft_engine();
#endif
          return std::string(
              to_string(resolve_method(parse_method(method), cuda, taps, n_out, rows, engine)));
        });
  m.def("fir", &fir, "x"_a.noconvert(), "taps"_a.noconvert(), "mode"_a, "method"_a,
        "out"_a.noconvert(), "stream"_a);
  m.def("fir_device_pointers", &fir_device_pointers, "x"_a, "rows"_a, "n"_a, "x_stride"_a, "y"_a,
        "y_stride"_a, "device"_a, "taps"_a.noconvert(), "mode"_a, "method"_a, "stream"_a);
  m.def("fir_host_on_cuda", &fir_host_on_cuda, "x"_a.noconvert(), "taps"_a.noconvert(), "mode"_a,
        "method"_a, "out"_a.noconvert());

  nb::class_<Resampler>(m, "Resampler")
      .def(nb::new_([](std::int64_t up, std::int64_t down, int half, const std::string& window) {
             return make_resampler(up, down, half, window);
           }),
           "up"_a, "down"_a, "half_taps_per_phase"_a, "window"_a)
      .def_ro("up", &Resampler::up)
      .def_ro("down", &Resampler::down)
      .def_prop_ro("taps", [](const Resampler& r) { return r.taps; })
      .def("length", [](const Resampler& r, std::int64_t n) { return resampled_length(r, n); });
  m.def("resample", &resample, "x"_a.noconvert(), "resampler"_a, "out"_a.noconvert(), "stream"_a);
  bind_iir(m);
  m.def("sosfilt_gpu", &sosfilt_gpu, "x"_a.noconvert(), "sos"_a.noconvert(), "state"_a.noconvert(),
        "y"_a.noconvert(), "stream"_a);
  m.def("metrics", &metrics, "x"_a.noconvert(), "reference"_a.noconvert().none(), "stream"_a);
  bind_pipelines(m);
}
