"""sigstream from Python (SPEC §9): FIR filtering, resampling and metrics on
NumPy arrays and, in place on the GPU, on CuPy and PyTorch arrays; chunked
streams; and the CLI's YAML pipelines with their statistics as dicts.

    >>> import numpy as np, sigstream
    >>> h = sigstream.design("lowpass", 1000.0, 16000.0, taps=255)
    >>> y = sigstream.filter(np.random.default_rng(0).standard_normal(16000), h)

Arrays: the last axis (or ``axis``) holds the samples; the leading axes are a
batch (clips or channels), all filtered in one call. NumPy in gives NumPy
out; a CuPy array or CUDA tensor gives the same kind on the same device,
computed there without a host copy, on the caller's current stream
(asynchronous, like the library's own operations). float32 is computed as is;
float64 is computed in float32 (SPEC §3) and returned as float64; other real
dtypes are cast and returned as float32.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _core
from ._arrays import Batch, _lib, _TorchCpuBatch, as_batch, as_taps, fast_fir, fir_length
from ._choices import BACKENDS as _BACKENDS
from ._choices import check_choice as _check_choice
from ._pipelines import batch, run
from .errors import (
    KINDS,
    ConfigError,
    CudaError,
    CudaMemoryError,
    Error,
    InputError,
    InternalError,
    VerificationError,
)

__version__: str = _core.__version__
__all__ = [
    "ConfigError",
    "CudaError",
    "CudaMemoryError",
    "Error",
    "InputError",
    "InternalError",
    "Stream",
    "VerificationError",
    "batch",
    "build_info",
    "cuda_available",
    "design",
    "filter",
    "metrics",
    "resample",
    "run",
    "sosfilt",
    "spectrum",
]

_core.set_error_types(KINDS)


def __dir__() -> list[str]:
    """The public API only (PEP 562): not the modules and helpers this package uses."""
    return sorted([*__all__, "__version__", "distributed"])


def __getattr__(name: str) -> Any:
    """``sigstream.distributed`` after a plain ``import sigstream`` (PEP 562), as SPEC §10 writes
    ``sigstream.distributed.local_cluster(...)``: imported on first use (Dask itself only where a
    function of it needs Dask)."""
    if name == "distributed":
        import importlib

        return importlib.import_module(f"{__name__}.distributed")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

ArrayLike = Any  # numpy.ndarray, cupy.ndarray, torch.Tensor, or a sequence of numbers

_MODES = ("causal", "same", "full", "valid")
_METHODS = ("auto", "direct", "fft")


def build_info() -> dict[str, Any]:
    """How this sigstream was built, as ``sigstream --version`` says it.

    {"version", "cuda": the CUDA backend was compiled in, "fused_fft": the
    fused cuFFTDx FFT engine was (without it the GPU's FFT method runs on
    cuFFT's passes, 2-7x slower: the build found no nvidia-mathdx headers),
    "cpu_fft": the CPU's FFT library}.
    """
    return {"version": __version__, "cuda": bool(_core.has_cuda), "fused_fft": bool(_core.fused_fft),
            "cpu_fft": str(_core.cpu_fft)}


def cuda_available() -> bool:
    """Whether this build has the CUDA backend and a CUDA device is present."""
    return bool(_core.has_cuda) and _core.cuda_device_count() > 0


def design(
    kind: str,
    cutoff_hz: float | Sequence[float],
    rate: float,
    taps: int = 255,
    window: str | tuple[str, float] = "hamming",
) -> np.ndarray:
    """Windowed-sinc FIR taps as ``scipy.signal.firwin`` designs them (SPEC §2), float64.

    kind: "lowpass", "highpass", "bandpass" or "bandstop"; cutoff_hz one
    frequency, or two (low, high) for the band kinds; window a name
    ("hamming", "hann", "blackman", "rectangular") or "kaiser:BETA" / ("kaiser", BETA).
    """
    cutoffs = [float(c) for c in (cutoff_hz if isinstance(cutoff_hz, (list, tuple, np.ndarray)) else [cutoff_hz])]
    return np.asarray(_core.design(kind, cutoffs, float(rate), int(taps), _window(window)), dtype=np.float64)


def _window(window: str | tuple[str, float]) -> str:
    if isinstance(window, tuple):
        if len(window) != 2:
            raise ValueError(f"window tuple must be (name, parameter), got {window!r}")
        return f"{window[0]}:{float(window[1])!r}"
    return str(window)


def _check_backend(b: Batch, backend: str, what: str) -> None:
    _check_choice("backend", backend, _BACKENDS)
    if b.on_gpu and backend == "cpu":
        raise ValueError(f"{what}: a GPU array is computed on its GPU; use backend='auto' or 'cuda' "
                         "(or move it to the host first)")


def filter(  # noqa: A001 - the name users look for (scipy.signal has lfilter, torchaudio filtfilt, ...)
    x: ArrayLike,
    taps: ArrayLike,
    mode: str = "causal",
    method: str = "auto",
    backend: str = "auto",
    axis: int = -1,
) -> Any:
    """FIR-filter x with taps along ``axis`` (SPEC §3).

    mode: "causal" (= scipy.signal.lfilter(taps, 1, x), the default), "same"
    (= scipy.signal.convolve(x, taps, "same")), "full" or "valid" (numpy.convolve's).
    method: "direct" (exact, the CLI's bits on either backend), "fft"
    (overlap-save) or "auto" (the CLI's rule). backend: "auto" computes where
    the array lives; "cuda" sends a NumPy array through the GPU and back.
    """
    _check_choice("mode", mode, _MODES)
    _check_choice("method", method, _METHODS)
    done = fast_fir(x, taps, mode, method, backend, axis, _core)
    if done is not None:
        return done
    b = as_batch(x, axis, "filter")
    _check_backend(b, backend, "filter")
    h = as_taps(taps)
    n_out = fir_length(mode, int(b.rows.shape[1]), h.shape[0])
    out = b.empty(n_out)
    _fir_into(b, b.rows, h, mode, method, backend, out)
    return b.restore(out)


def _fir_into(b: Batch, rows: Any, taps: np.ndarray, mode: str, method: str, backend: str, out: Any) -> None:
    """FIR of rows (arrays of b's kind) into out: where they live, or a host batch through the GPU."""
    if backend == "cuda" and not b.on_gpu:
        _core.fir_host_on_cuda(rows, taps, mode, method, out)  # CudaError from a build without CUDA
    else:
        _core.fir(rows, taps, mode, method, out, b.stream())


def resample(
    x: ArrayLike,
    up: int,
    down: int,
    axis: int = -1,
    window: str | tuple[str, float] = ("kaiser", 5.0),
    half_taps_per_phase: int = 10,
    backend: str = "auto",
) -> Any:
    """``scipy.signal.resample_poly(x, up, down, axis, window)`` (SPEC §7): ceil(n·up/down) samples.

    The polyphase filter never evaluates the zero-stuffed samples; CPU and GPU
    give the same bits.
    """
    b = as_batch(x, axis, "resample")
    _check_backend(b, backend, "resample")
    if backend == "cuda" and not b.on_gpu:
        raise ValueError("resample: backend='cuda' takes GPU arrays (move a NumPy array with cupy.asarray first)")
    r = _resampler(int(up), int(down), int(half_taps_per_phase), _window(window))
    out = b.empty(r.length(int(b.rows.shape[1])))
    _core.resample(b.rows, r, out, b.stream())
    return b.restore(out)


@functools.lru_cache(maxsize=32)
def _resampler(up: int, down: int, half_taps_per_phase: int, window: str) -> Any:
    """The designed polyphase filter, made once per ratio and window (read-only; errors are not cached)."""
    return _core.Resampler(up, down, half_taps_per_phase, window)


def sosfilt(sos: ArrayLike, x: ArrayLike, zi: ArrayLike | None = None, axis: int = -1,
            backend: str = "auto") -> Any:
    """``scipy.signal.sosfilt(sos, x, axis, zi)`` (SPEC §12): y, or (y, zf) when zi is given.

    sos: (n_sections, 6) rows [b0, b1, b2, a0, a1, a2] (a0 is divided out).
    Each section runs in transposed direct form II with float64 state and
    arithmetic, as SciPy's, the CLI's iir kernel: float32 input gives
    float32(SciPy's float64 result), float64 NumPy input float64. zi (and
    zf): shape (n_sections, ..., 2, ...), x's shape with the axis replaced by
    2, as SciPy's; zf continues the filter on the next chunk. GPU arrays
    (CuPy, PyTorch, other DLPack CUDA arrays) are filtered on their device
    by the CLI's CUDA kernel, in parallel over time (float64 state; within
    ~1e-10 relative of the CPU's result, not bit-identical) and come back
    there; zf comes back as the array's kind (NumPy for DLPack arrays other
    than CuPy's and PyTorch's, whose zi must then be a host, CuPy or PyTorch
    array). backend: "auto" computes where
    the array lives, "cpu" takes GPU arrays through the host (the CPU's
    bits), "cuda" takes GPU arrays only.
    """
    _check_choice("backend", backend, _BACKENDS)
    s = np.ascontiguousarray(np.asarray(sos, dtype=np.float64))
    if s.ndim != 2 or s.shape[1] != 6 or s.shape[0] == 0:
        raise ValueError(f"sosfilt: sos must have shape (n_sections, 6), got {s.shape}")
    n_sections = int(s.shape[0])
    wide = isinstance(x, np.ndarray) and x.dtype == np.float64
    if wide:
        if x.ndim == 0:
            raise ValueError("sosfilt: expected an array of samples, got a 0-d array (a scalar)")
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"sosfilt: axis {axis} is out of range for an array of {x.ndim} dimensions")
        ax = axis % x.ndim
        moved = np.moveaxis(x, ax, -1)
        batch_shape = tuple(int(d) for d in moved.shape[:-1])
        rows = np.ascontiguousarray(moved.reshape(math.prod(batch_shape), moved.shape[-1]))
        b = None
    else:
        b = as_batch(x, axis, "sosfilt")
        batch_shape = b.batch_shape
        ax = b.axis
    if backend == "cuda" and (b is None or not b.on_gpu):
        raise ValueError("sosfilt: backend='cuda' takes GPU arrays (CuPy, PyTorch); NumPy arrays run on the CPU "
                         "(move one to the GPU with cupy.asarray first)")
    on_device = b is not None and b.on_gpu and backend != "cpu"
    if b is not None:
        if b.on_gpu and not on_device and b.lib == "dlpack":
            raise TypeError("sosfilt: backend='cpu' takes host arrays, CuPy's or PyTorch's")
        rows = b.rows if on_device else np.ascontiguousarray(_host(b.rows, b.lib), dtype=np.float32)
    n_rows = int(rows.shape[0])
    state = np.zeros((n_rows, 2 * n_sections), dtype=np.float64)
    if zi is not None:
        if _lib(zi) == "dlpack":
            raise TypeError("sosfilt: zi must be a NumPy, CuPy or PyTorch array (or a list)")
        z = np.asarray(_host(zi, _lib_of(zi)), dtype=np.float64)
        want = (n_sections,) + batch_shape[:ax] + (2,) + batch_shape[ax:]
        if z.shape != want:
            raise ValueError(f"sosfilt: zi must have shape {want} (n_sections, then x's shape with the axis "
                             f"replaced by 2), got {z.shape}")
        z = np.moveaxis(z, ax + 1, -1).reshape(n_sections, n_rows, 2)
        state[:] = z.transpose(1, 0, 2).reshape(n_rows, 2 * n_sections)
    if on_device:
        assert b is not None
        out = b.empty(int(rows.shape[1]))
        _core.sosfilt_gpu(rows, s, state, out, b.stream())  # CudaError from a build without CUDA
    else:
        out = np.empty_like(rows)
        _core.sosfilt(rows, s, state, out)
    if wide:
        y: Any = np.moveaxis(out.reshape(batch_shape + (rows.shape[1],)), -1, ax)
    else:
        assert b is not None
        y = b.restore(_to_lib(out, b) if b.on_gpu and not on_device else out)
    if zi is None:
        return y
    zf = state.reshape(n_rows, n_sections, 2).transpose(1, 0, 2).reshape((n_sections,) + batch_shape + (2,))
    zf = np.moveaxis(zf, -1, ax + 1)
    return y, (zf if b is None else _to_lib(zf, b))


def _lib_of(a: Any) -> str:
    mod = type(a).__module__.split(".")[0]
    return mod if mod in ("cupy", "torch") else "numpy"


def _host(a: Any, lib: str) -> Any:
    """A NumPy view or copy of a NumPy, CuPy or PyTorch array."""
    if lib == "cupy":
        import cupy

        return cupy.asnumpy(a)
    if lib == "torch":
        return a.detach().cpu().numpy()
    return np.asarray(a)


def _to_lib(a: np.ndarray, b: Batch) -> Any:
    """A host array (y, or zf) on b's device, as b's kind of array (NumPy: itself)."""
    if b.lib == "cupy":
        import cupy

        with cupy.cuda.Device(b.device):
            return cupy.asarray(a)
    if b.lib == "torch" or isinstance(b, _TorchCpuBatch):
        import torch

        return torch.from_numpy(np.ascontiguousarray(a)).to(b.device if b.lib == "torch" else "cpu")
    return a


def metrics(x: ArrayLike, reference: ArrayLike | None = None, axis: int = -1) -> dict[str, Any]:
    """SPEC §4's metrics of x along ``axis``, per row of the batch.

    Returns a dict of NumPy arrays shaped like x without ``axis`` (floats for
    1-D x): energy, rms, peak, mean, nonfinite and, with a reference signal of
    the same shape (the source), dot_input and correlation_input; "frames" is
    the samples per row. Sums are float64, NaN/Inf samples are counted in
    nonfinite and enter the sums as 0. Waits for the GPU (the values are host
    numbers).
    """
    b = as_batch(x, axis, "metrics")
    ref_rows = None
    if reference is not None:
        r = as_batch(reference, axis, "metrics reference")
        if r.lib != b.lib or tuple(r.rows.shape) != tuple(b.rows.shape):
            raise ValueError("metrics: reference must be the same kind of array as x, with the same shape")
        ref_rows = r.rows
    raw = _core.metrics(b.rows, ref_rows, b.stream())
    frames = int(raw.pop("frames"))
    out = {k: np.asarray(v, dtype=np.int64 if k == "nonfinite" else np.float64) for k, v in raw.items()}
    shape = b.batch_shape
    result: dict[str, Any] = {k: (v.reshape(shape) if shape else v.reshape(()).item()) for k, v in out.items()}
    result["frames"] = frames
    return result


def spectrum(
    x: ArrayLike,
    rate: float,
    nfft: int = 4096,
    overlap: float = 0.5,
    window: str | tuple[str, float] = "hann",
    axis: int = -1,
) -> tuple[np.ndarray, np.ndarray]:
    """Welch's power spectral density along ``axis`` (SPEC §8): ``(freq_hz, psd)``.

    Equals ``scipy.signal.welch(x, rate, window, nperseg=nfft,
    noverlap=int(nfft * overlap), detrend=False, scaling='density', axis=axis)``:
    segments of nfft samples every nfft - noverlap, the window periodic
    (``get_window``'s default), one-sided density in units²/Hz, summed in
    float64; psd has the frequency axis where ``axis`` was. x is computed in
    float32 (SPEC §3). Host (NumPy) arrays for now: the GPU's Welch is not
    built yet, and the core raises TypeError for GPU arrays.
    """
    nfft = int(nfft)
    if not 0.0 <= float(overlap) < 1.0:
        raise ValueError(f"spectrum: overlap must be in [0, 1) (got {overlap!r})")
    b = as_batch(x, axis, "spectrum")
    freq, psd = _core.spectrum(b.rows, float(rate), nfft, int(nfft * float(overlap)), _window(window))
    psd = psd.reshape(b.batch_shape + (psd.shape[1],))
    if b.axis != b.ndim - 1:
        psd = np.moveaxis(psd, -1, b.axis)
    return freq, psd


class Stream:
    """Chunk-by-chunk FIR filtering with the state carried between calls.

    ``process(chunk)`` returns the outputs the chunk completes and ``flush()``
    the rest; concatenated, they are ``filter`` of the whole signal, bit for
    bit with method "direct" (the default), within SPEC §3 with "fft". A chunk
    is shaped like the signal (the batch axes first, samples last, or along
    ``axis``), of any length (0 included); every chunk has the same batch
    shape, ``channels`` rows in all, and the same kind of array (NumPy, CuPy,
    PyTorch) on the same device.
    """

    def __init__(
        self,
        taps: ArrayLike,
        channels: int = 1,
        mode: str = "causal",
        method: str = "direct",
        backend: str = "auto",
        axis: int = -1,
    ) -> None:
        _check_choice("mode", mode, _MODES)
        _check_choice("method", method, _METHODS)
        _check_choice("backend", backend, _BACKENDS)
        if int(channels) < 1:
            raise ValueError(f"channels must be >= 1 (got {channels})")
        self._taps = as_taps(taps)
        self._channels = int(channels)
        self._mode = mode
        self._method = method
        self._backend = backend
        self._axis = axis
        k = len(self._taps)
        d = (k - 1) // 2
        # Outputs of the causal stream to drop at the start, zeros to feed at the end.
        self._skip = {"causal": 0, "same": d, "full": 0, "valid": k - 1}[mode]
        self._tail = {"causal": 0, "same": d, "full": k - 1, "valid": 0}[mode]
        self._history: Any = None  # the last K-1 input samples, rows x (K-1)
        self._first: Batch | None = None
        self._flushed = False

    def _start(self, b: Batch) -> None:
        rows = int(b.rows.shape[0])
        if rows != self._channels:
            raise ValueError(f"Stream: a chunk has {rows} rows (channels), the stream was made for {self._channels}")
        self._first = b
        self._history = b.empty(len(self._taps) - 1)
        self._fill_zero(self._history)

    @staticmethod
    def _fill_zero(a: Any) -> None:
        if hasattr(a, "zero_"):
            a.zero_()
        else:
            a.fill(0)

    def _concat(self, a: Any, c: Any) -> Any:
        assert self._first is not None
        if self._first.lib == "torch":
            import torch

            return torch.cat((a, c), dim=1)
        if self._first.lib == "numpy":
            return np.concatenate((a, c), axis=1)
        import cupy

        return cupy.concatenate((a, c), axis=1)

    def _run(self, rows: Any) -> Any:
        """Causal outputs for the new samples in rows (history prepended), minus the ones still to skip."""
        assert self._first is not None
        b = self._first
        k = len(self._taps)
        joined = self._concat(self._history, rows)
        n_new = int(rows.shape[1])
        self._history = joined[:, n_new:] if k > 1 else joined[:, :0]
        out = b.empty(n_new)
        if n_new > 0:
            _fir_into(b, joined, self._taps, "valid", self._method, self._backend, out)
        if self._skip > 0:
            drop = min(self._skip, n_new)
            self._skip -= drop
            out = out[:, drop:]
        return out

    def process(self, chunk: ArrayLike) -> Any:
        """The outputs this chunk completes (shaped like the chunk; fewer samples at the start of "same"/"valid")."""
        if self._flushed:
            raise ValueError("Stream: process() after flush(); make a new Stream")
        b = as_batch(chunk, self._axis, "Stream.process")
        if self._first is None:
            _check_backend(b, self._backend, "Stream")
            self._start(b)
        else:
            first = self._first
            if b.lib != first.lib or b.batch_shape != first.batch_shape or b.device != first.device:
                raise ValueError("Stream: every chunk must be the same kind of array, on the same device, with the "
                                 f"same batch shape {first.batch_shape} (got {b.lib}, {b.batch_shape})")
        return self._restore(b, self._run(b.rows))

    def flush(self) -> Any:
        """The outputs after the last sample ("same": the last (K-1)//2; "full": K-1; else none)."""
        if self._flushed:
            raise ValueError("Stream: flush() called twice")
        self._flushed = True
        if self._first is None:
            raise ValueError("Stream: flush() before any chunk (the stream does not know its array kind yet)")
        zeros = self._first.empty(self._tail)
        self._fill_zero(zeros)
        return self._restore(self._first, self._run(zeros))

    @staticmethod
    def _restore(b: Batch, out: Any) -> Any:
        if b.lib in ("numpy", "cupy") and out.shape[1] > 0 and out.strides[1] != 4:
            out = out.copy()
        return b.restore(out)
