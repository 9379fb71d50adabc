"""Arrays in and out: NumPy on the host, CuPy and PyTorch (or any DLPack array
with an array-API namespace) on the GPU, without copies where none is needed.

The compiled core takes 2-D float32 arrays (rows x samples, unit stride along
a row). ``Batch`` turns the caller's array into that view: the processed
axis moved last, the leading axes flattened into rows, other dtypes cast to
float32. The output is allocated by the input's own library on the input's
device (so PyTorch's caching allocator and CuPy's memory pool hand it out,
stream-ordered on the current stream), filled in place, and given back in the
caller's shape and dtype.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

# NumPy's (and CuPy's) builtin dtype descriptors are singletons: identity is the cheapest test.
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _lib(x: Any) -> str:
    """'numpy', 'torch', 'cupy' or 'dlpack' (another GPU array library)."""
    if isinstance(x, np.ndarray):
        return "numpy"
    module = type(x).__module__
    if module.startswith("torch"):
        return "torch"
    if module.startswith("cupy"):
        return "cupy"
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device_type, _ = x.__dlpack_device__()
        if device_type == 1:  # kDLCPU
            return "numpy"
        if device_type == 2:  # kDLCUDA
            return "dlpack"
        raise TypeError(f"sigstream takes host or CUDA arrays; this {type(x).__name__} lives on DLPack device type {device_type}")
    return "numpy"  # lists, scalars, anything np.asarray takes


def _dtype_name(x: Any, lib: str) -> str:
    if lib == "torch":
        return str(x.dtype).removeprefix("torch.")
    return str(np.dtype(x.dtype)) if lib != "dlpack" else str(x.dtype)


@dataclass
class Batch:
    """A signal array seen as rows of samples (see the module's docstring)."""

    lib: str
    rows: Any  # 2-D float32 array of `lib`, unit stride along axis 1
    batch_shape: tuple[int, ...]
    axis: int  # the processed axis of the caller's array (non-negative)
    ndim: int
    dtype: str  # the caller's dtype name
    device: Any  # torch.device / cupy Device id / None for the host

    @property
    def on_gpu(self) -> bool:
        return self.lib != "numpy"

    def stream(self) -> int:
        """The caller's current CUDA stream on the array's device (0 on the host)."""
        if self.lib == "torch":
            torch = _torch()
            index = self.device.index if self.device.index is not None else torch.cuda.current_device()
            return _torch_stream(torch, index)
        if self.lib == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return int(cupy.cuda.get_current_stream().ptr)
        return 0  # the legacy default stream, which orders with every blocking stream

    def empty(self, n: int) -> Any:
        """A 2-D float32 output of len(rows) x n on the same device."""
        rows = int(self.rows.shape[0])
        if self.lib == "numpy":
            return np.empty((rows, n), dtype=np.float32)
        if self.lib == "torch":
            import torch

            return torch.empty((rows, n), dtype=torch.float32, device=self.device)
        if self.lib == "cupy":
            import cupy

            with cupy.cuda.Device(self.device):
                return cupy.empty((rows, n), dtype=cupy.float32)
        xp = self.rows.__array_namespace__()
        return xp.empty((rows, n), dtype=xp.float32, device=self.rows.device)

    def restore(self, out: Any) -> Any:
        """out (rows x n) in the caller's shape, axis and dtype."""
        n = int(out.shape[1])
        out = out.reshape(self.batch_shape + (n,))
        if self.axis != self.ndim - 1:
            out = _moveaxis(out, self.lib, -1, self.axis)
        if self.dtype == "float64":
            out = out.double() if self.lib == "torch" else out.astype("float64")
        return out


def _moveaxis(x: Any, lib: str, source: int, destination: int) -> Any:
    if lib == "torch":
        return x.movedim(source, destination)
    return _xp(x, lib).moveaxis(x, source, destination)


def _xp(x: Any, lib: str) -> Any:
    if lib == "numpy":
        return np
    if lib == "cupy":
        return sys.modules["cupy"]
    return x.__array_namespace__()


def as_batch(x: Any, axis: int, what: str) -> Batch:
    """The caller's array as rows (see Batch); raises TypeError/ValueError on arrays it cannot take."""
    lib = _lib(x)
    if lib == "numpy" and not isinstance(x, np.ndarray):
        x = np.asarray(x)
    dtype = _dtype_name(x, lib)
    if "complex" in dtype:
        raise TypeError(f"{what}: complex input ({dtype}) is not supported; filter the real and imaginary parts separately")
    if not dtype.startswith(("float", "bfloat", "int", "uint")):
        raise TypeError(f"{what}: expected a real numeric array, got dtype {dtype}")
    ndim = int(x.ndim)
    if ndim == 0:
        raise ValueError(f"{what}: expected an array of samples, got a 0-d array (a scalar)")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of range for an array of {ndim} dimensions")
    axis %= ndim
    device: Any = None
    if lib == "torch":
        if x.device.type != "cuda":
            if x.device.type != "cpu":
                raise TypeError(f"{what}: torch tensors on {x.device.type} are not supported (CPU or CUDA only)")
            # A CPU tensor: through NumPy, without a copy, and back to torch at the end.
            return _torch_cpu_batch(x, axis, what)
        device = x.device
        if x.dtype != _torch().float32:
            x = x.float()
        if axis != ndim - 1:
            x = x.movedim(axis, -1)
        rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
        if rows.shape[1] > 1 and rows.stride(1) != 1:
            rows = rows.contiguous()
    else:
        if lib == "cupy":
            device = x.device.id
        if dtype != "float32":
            x = x.astype("float32")
        if axis != ndim - 1:
            x = _moveaxis(x, lib, axis, -1)
        rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1]) if ndim != 2 else x
        if rows.shape[1] > 1 and rows.strides[1] != 4 and lib in ("numpy", "cupy"):
            rows = _xp(x, lib).ascontiguousarray(rows)
    batch_shape = tuple(int(s) for s in x.shape[:-1])
    return Batch(lib, rows, batch_shape, axis, ndim, dtype, device)


def _torch() -> Any:
    return sys.modules["torch"]


class _TorchCpuBatch(Batch):
    """A CPU tensor computed through a NumPy view; results go back as tensors."""

    def restore(self, out: Any) -> Any:
        return _torch().from_numpy(np.ascontiguousarray(super().restore(out)))


def _torch_cpu_batch(x: Any, axis: int, what: str) -> Batch:
    b = as_batch(x.detach().numpy(), axis, what)
    return _TorchCpuBatch(b.lib, b.rows, b.batch_shape, b.axis, b.ndim, b.dtype, b.device)


def as_taps(taps: Any) -> np.ndarray:
    """Taps from any 1-D array (host or GPU) or sequence, as a contiguous float64 NumPy array."""
    lib = _lib(taps)
    if lib == "torch":
        taps = taps.detach().cpu().numpy()
    elif lib == "cupy":
        taps = taps.get()
    elif lib == "dlpack":
        raise TypeError(f"taps: pass them as a NumPy array or a list (got a GPU {type(taps).__name__})")
    h = np.ascontiguousarray(taps, dtype=np.float64)
    if h.ndim != 1:
        raise ValueError(f"taps must be 1-D, got shape {h.shape}")
    if h.size == 0:
        raise ValueError("taps must not be empty")
    if not np.all(np.isfinite(h)):
        raise ValueError("taps must be finite (found NaN or Inf)")
    return h


def fir_length(mode: str, n: int, k: int) -> int:
    """Outputs of SPEC §3's modes for n inputs and k taps (the core's fir_length, without a call)."""
    if mode == "full":
        return n + k - 1
    if mode == "valid":
        return max(n - k + 1, 0)
    return n  # causal, same


def fast_fir(x: Any, taps: Any, mode: str, method: str, backend: str, axis: int, core: Any) -> Any:
    """filter() for the common case, or None: a C-contiguous 1-D/2-D float32 array
    (NumPy, a CUDA torch.Tensor or a CuPy array) filtered along its last axis, with
    float64 NumPy taps (or a list) and backend "auto". It skips the general path's views and
    conversions (the call overhead is most of a short clip's time); the result is
    the same bits.
    """
    if backend != "auto":
        return None
    if type(taps) is list:
        try:
            taps = np.array(taps, dtype=np.float64)
        except (TypeError, ValueError):
            return None  # the general path reports the array's errors first, then the taps'
    if type(taps) is not np.ndarray or taps.dtype is not _F64 or taps.ndim != 1 or not taps.flags.c_contiguous:
        return None  # the core checks that they are non-empty and finite
    kind = type(x)
    if kind is np.ndarray:
        ndim = x.ndim
        if x.dtype is not _F32 or not 1 <= ndim <= 2 or axis not in (-1, ndim - 1) or not x.flags.c_contiguous:
            return None
        rows = x if ndim == 2 else x.reshape(1, -1)
        out = np.empty((rows.shape[0], fir_length(mode, rows.shape[1], taps.shape[0])), dtype=np.float32)
        core.fir(rows, taps, mode, method, out, 0)
        return out if ndim == 2 else out.reshape(-1)
    torch = sys.modules.get("torch")
    if torch is not None and kind is torch.Tensor:
        if x.dtype is not torch.float32 or not x.is_cuda or x.requires_grad or not x.is_contiguous():
            return None
        shape = x.shape
        ndim = len(shape)
        if not 1 <= ndim <= 2 or axis not in (-1, ndim - 1):
            return None
        n = shape[-1]
        if n == 0:
            return None  # no input pointer to hand over: the general path
        count = shape[0] if ndim == 2 else 1
        n_out = fir_length(mode, n, taps.shape[0])
        # empty_like is torch's cheapest allocation (~1 us less than new_empty on the H100 host).
        out = torch.empty_like(x) if n_out == n else x.new_empty((count, n_out) if ndim == 2 else (n_out,))
        index = x.get_device()
        # Called for empty batches too: the core checks the taps either way.
        core.fir_device_pointers(x.data_ptr(), count, n, n, out.data_ptr(), n_out, index, taps, mode, method,
                                 _torch_stream(torch, index))
        return out
    cupy = sys.modules.get("cupy")
    if cupy is not None and kind is cupy.ndarray:
        ndim = x.ndim
        if x.dtype is not _F32 or not 1 <= ndim <= 2 or axis not in (-1, ndim - 1) or not x.flags.c_contiguous:
            return None
        device = x.device.id
        if device != cupy.cuda.runtime.getDevice():
            return None  # the general path switches devices
        shape = x.shape
        n = shape[-1]
        if n == 0:
            return None  # no input pointer to hand over: the general path
        count = shape[0] if ndim == 2 else 1
        n_out = fir_length(mode, n, taps.shape[0])
        out = cupy.empty((count, n_out) if ndim == 2 else (n_out,), dtype=np.float32)
        stream = cupy.cuda.get_current_stream().ptr
        core.fir_device_pointers(x.data.ptr, count, n, n, out.data.ptr, n_out, device, taps, mode, method, stream)
        return out
    return None


def _torch_stream(torch: Any, index: int) -> int:
    """The current CUDA stream's handle on device `index`, without building a Stream object."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # noqa: SLF001 - what torch's own Triton glue uses
    if raw is not None:
        return int(raw(index))
    return int(torch.cuda.current_stream(index).cuda_stream)
