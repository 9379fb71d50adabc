"""GPU arrays (CuPy, PyTorch): same kind, device, dtype and shape out; computed in place on the caller's
stream without host copies; equal to the CPU result. Skipped without a CUDA device or GPU library."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sigstream
from conftest import gpu_libs

LIBS = gpu_libs()
pytestmark = pytest.mark.skipif(not LIBS, reason="no CUDA device, CUDA build, CuPy or PyTorch here")


def to_gpu(lib: str, a: np.ndarray) -> Any:
    if lib == "cupy":
        import cupy

        return cupy.asarray(a)
    import torch

    return torch.from_numpy(np.ascontiguousarray(a)).cuda()


def to_host(lib: str, a: Any) -> np.ndarray:
    return a.get() if lib == "cupy" else a.cpu().numpy()


def pointer(lib: str, a: Any) -> int:
    return int(a.data.ptr) if lib == "cupy" else int(a.data_ptr())


@pytest.fixture(params=LIBS or ["none"])
def lib(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("mode", ["causal", "same", "full", "valid"])
@pytest.mark.parametrize("taps,method", [(63, "direct"), (1023, "direct"), (4095, "direct"), (255, "fft"),
                                         (4095, "fft")])
def test_equal_to_cpu(lib: str, rng: np.random.Generator, mode: str, taps: int, method: str) -> None:
    x = rng.standard_normal((2, 3, 20011)).astype(np.float32)
    h = rng.standard_normal(taps)
    g = sigstream.filter(to_gpu(lib, x), h, mode=mode, method=method)
    assert type(g).__module__.split(".")[0] == lib
    cpu = sigstream.filter(x, h, mode=mode, method=method)
    assert tuple(g.shape) == cpu.shape
    got = to_host(lib, g)
    assert got.dtype == np.float32
    if method == "direct":
        np.testing.assert_array_equal(got, cpu)  # the same fma chain on both backends
    else:
        assert np.linalg.norm(got - cpu) / np.linalg.norm(cpu) <= 1e-5


def test_kind_device_dtype_axis(lib: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((997, 2))
    h = rng.standard_normal(31)
    g = sigstream.filter(to_gpu(lib, x), h, axis=0)  # float64 in
    assert tuple(g.shape) == (997, 2)
    assert "float64" in str(g.dtype)
    if lib == "torch":
        assert g.is_cuda
    np.testing.assert_allclose(to_host(lib, g), sigstream.filter(x, h, axis=0), rtol=0, atol=0)
    r = sigstream.resample(to_gpu(lib, x.astype(np.float32)), 160, 147, axis=0)
    np.testing.assert_array_equal(to_host(lib, r), sigstream.resample(x.astype(np.float32), 160, 147, axis=0))
    m_gpu = sigstream.metrics(to_gpu(lib, x.T.copy()), reference=to_gpu(lib, x.T.copy()))
    m_cpu = sigstream.metrics(x.T.copy(), reference=x.T.copy())
    for k in ("energy", "peak", "dot_input"):
        np.testing.assert_allclose(m_gpu[k], m_cpu[k], rtol=1e-12)


def test_input_read_in_place_and_output_is_the_returned_array(lib: str, rng: np.random.Generator) -> None:
    x = to_gpu(lib, rng.standard_normal((256, 4000)).astype(np.float32))
    for method in ("direct", "fft"):
        y = sigstream.filter(x, np.ones(63) / 63, method=method)
        x_ptr, y_ptr, ran = sigstream._core.last_cuda_launch()
        assert ran == method
        assert x_ptr == pointer(lib, x), "the kernel read a copy, not the caller's array"
        assert y_ptr == pointer(lib, y)


def test_no_host_copies_in_a_cupti_trace(rng: np.random.Generator) -> None:
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    x = torch.from_numpy(rng.standard_normal((64, 16000)).astype(np.float32)).cuda()
    h = np.hanning(255)
    for method in ("direct", "fft"):
        sigstream.filter(x, h, method=method)  # warm-up: taps and plans go to the device once
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for method in ("direct", "fft"):
            sigstream.filter(x, h, method=method)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    assert any("fir_direct" in n for n in names), "the trace must see sigstream's kernels"
    assert any("fft" in n.lower() for n in names)
    copies = [n for n in names if "memcpy" in n.lower() and ("htod" in n.lower() or "dtoh" in n.lower())]
    assert copies == [], f"host copies in the trace: {copies}"


def test_runs_on_the_callers_stream_asynchronously(lib: str, rng: np.random.Generator) -> None:
    host = rng.standard_normal((4, 50000)).astype(np.float32)
    h = rng.standard_normal(127)
    want = sigstream.filter(host, h, method="direct")
    if lib == "torch":
        import torch

        src = torch.from_numpy(host).cuda()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            # Once first: PyTorch's allocator takes new memory for a new stream with
            # cudaMalloc, which waits for the device; the second time it reuses it.
            del_me = sigstream.filter(src * 1.0, h, method="direct")
            del del_me
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            torch.cuda._sleep(200_000_000)  # keeps s busy ~0.1 s: x is written only after it
            x = src * 1.0
            y = sigstream.filter(x, h, method="direct")
            busy = not s.query()
        s.synchronize()
        got = y.cpu().numpy()
    else:
        import cupy

        src = cupy.asarray(host)
        s = cupy.cuda.Stream(non_blocking=True)
        with s:  # once first, as for PyTorch: the memory pool then has the blocks
            sigstream.filter(src * 1.0, h, method="direct")
        cupy.cuda.Device().synchronize()
        with s:
            # A long chain of work on s before x is written (cupy has no sleep kernel).
            big = cupy.ones(1 << 26, dtype=cupy.float32)
            for _ in range(200):
                big = big * 1.0000001
            x = src * 1.0
            y = sigstream.filter(x, h, method="direct")
            busy = not s.done
        s.synchronize()
        got = y.get()
    assert busy, "filter waited for the GPU: it must return while its stream still runs"
    # Had sigstream used another stream, it would have read x before x was written.
    np.testing.assert_array_equal(got, want)


def test_batched_clips_and_errors(lib: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((256, 64000)).astype(np.float32)
    h = sigstream.design("lowpass", 4000.0, 16000.0, taps=255)
    y = sigstream.filter(to_gpu(lib, x), h, method="direct")
    np.testing.assert_array_equal(to_host(lib, y)[[0, 100, 255]], sigstream.filter(x[[0, 100, 255]], h, method="direct"))
    with pytest.raises(ValueError, match="GPU array"):
        sigstream.filter(to_gpu(lib, x[:1]), h, backend="cpu")
    with pytest.raises(TypeError, match="complex"):
        sigstream.filter(to_gpu(lib, x[:1].astype(np.complex64)), h)


def test_stream_on_gpu(lib: str, rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 30011)).astype(np.float32)
    h = rng.standard_normal(255)
    g = to_gpu(lib, x)
    s = sigstream.Stream(h, channels=2, mode="same")
    parts = [to_host(lib, s.process(g[:, a:b])) for a, b in [(0, 1), (1, 4096), (4096, 4096), (4096, 30011)]]
    parts.append(to_host(lib, s.flush()))
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), sigstream.filter(x, h, mode="same", method="direct"))


def test_numpy_through_cuda_backend(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3, 10001)).astype(np.float32)
    h = rng.standard_normal(511)
    y = sigstream.filter(x, h, backend="cuda", method="direct")
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(y, sigstream.filter(x, h, method="direct"))


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_fast_path_gives_the_general_paths_bits(lib: str, rng: np.random.Generator, method: str) -> None:
    """A contiguous float32 CUDA array along its last axis takes the pointer fast path; the same
    samples along axis 0 of the transpose take the general (DLPack) path: the same bits."""
    from sigstream import _core
    from sigstream._arrays import fast_fir

    x = rng.standard_normal((4, 30011)).astype(np.float32)
    h = rng.standard_normal(1023)
    g = to_gpu(lib, x)
    assert fast_fir(g, h, "same", method, "auto", -1, _core) is not None
    fast = to_host(lib, sigstream.filter(g, h, mode="same", method=method))
    general = to_host(lib, sigstream.filter(to_gpu(lib, x.T.copy()), h, mode="same", method=method, axis=0)).T
    np.testing.assert_array_equal(fast, general)
    one = to_host(lib, sigstream.filter(g[2], h, mode="same", method=method))
    np.testing.assert_array_equal(one, general[2])


def test_fast_path_edges(lib: str, rng: np.random.Generator) -> None:
    """Empty batches and outputs still check the taps; results have the general path's shapes."""
    h = rng.standard_normal(31)
    empty_rows = to_gpu(lib, np.zeros((0, 100), np.float32))
    assert tuple(sigstream.filter(empty_rows, h).shape) == (0, 100)
    with pytest.raises(ValueError, match="finite"):
        sigstream.filter(empty_rows, np.array([np.nan]))
    with pytest.raises(ValueError, match="taps must not be empty"):
        sigstream.filter(to_gpu(lib, np.ones(50, np.float32)), [])
    short = to_gpu(lib, rng.standard_normal(10).astype(np.float32))
    assert tuple(sigstream.filter(short, h, mode="valid").shape) == (0,)
    with pytest.raises(TypeError, match="real numeric"):
        sigstream.filter(np.array(["a"]), ["x"])  # the array's error first, as on the general path


def test_spectrum_refuses_gpu_arrays_with_a_clear_error(lib: str, rng: np.random.Generator) -> None:
    """The GPU's Welch is not built yet: a GPU array is a TypeError that says how to proceed, never a
    silent host copy."""
    with pytest.raises(TypeError, match="host"):
        sigstream.spectrum(to_gpu(lib, rng.standard_normal(5000).astype(np.float32)), 8000.0, nfft=256)
