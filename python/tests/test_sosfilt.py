"""sigstream.sosfilt against scipy.signal.sosfilt (SPEC §12): random stable
sections and SciPy's own designs, odd lengths, float32 and float64, any
axis, zi/zf chaining, PyTorch CPU tensors, GPU arrays (skipped without)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import scipy.signal as sps

import sigstream


def random_sos(rng: np.random.Generator, sections: int) -> np.ndarray:
    rows = []
    for _ in range(sections):
        r, th = rng.uniform(0.3, 0.97), rng.uniform(0.05, np.pi - 0.05)
        zr, zth = rng.uniform(0.5, 1.2), rng.uniform(0, np.pi)
        g = rng.uniform(0.2, 2.0)
        rows.append([g, -2 * g * zr * np.cos(zth), g * zr * zr, 1.0, -2 * r * np.cos(th), r * r])
    return np.array(rows)


@pytest.mark.parametrize("sections", [1, 2, 3, 4, 5, 9])
@pytest.mark.parametrize("shape,axis", [((1001,), -1), ((3, 4099), -1), ((4099, 3), 0), ((2, 777, 5), 1)])
def test_float32_is_float32_of_scipy(sections: int, shape: tuple[int, ...], axis: int) -> None:
    rng = np.random.default_rng(sections * 100 + len(shape))
    sos = random_sos(rng, sections)
    x = rng.standard_normal(shape).astype(np.float32)
    y = sigstream.sosfilt(sos, x, axis=axis)
    ref = sps.sosfilt(sos, x.astype(np.float64), axis=axis)
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_array_equal(y, ref.astype(np.float32))


def test_float64_matches_scipy_in_float64() -> None:
    rng = np.random.default_rng(3)
    sos = sps.iirfilter(6, [300, 3400], btype="bandpass", ftype="cheby1", rp=0.5, fs=48000, output="sos")
    x = rng.standard_normal((2, 30011))
    y = sigstream.sosfilt(sos, x)
    assert y.dtype == np.float64
    ref = sps.sosfilt(sos, x)
    assert np.max(np.abs(y - ref)) <= 1e-12 * np.max(np.abs(ref))


def test_zi_and_zf_continue_a_signal_as_scipy() -> None:
    rng = np.random.default_rng(4)
    sos = random_sos(rng, 3)
    x = rng.standard_normal((4, 5003)).astype(np.float32)
    zi = np.zeros((3, 4, 2))
    parts = []
    for lo, hi in [(0, 1), (1, 1000), (1000, 1000), (1000, 5003)]:
        y, zi = sigstream.sosfilt(sos, x[:, lo:hi], zi=zi)
        parts.append(y)
    whole = sigstream.sosfilt(sos, x)
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), whole)
    _, zf_ref = sps.sosfilt(sos, x.astype(np.float64), zi=np.zeros((3, 4, 2)))
    np.testing.assert_allclose(zi, zf_ref, rtol=1e-12, atol=1e-12)
    # A non-zero zi along axis 0: SciPy's shape (n_sections, 2, columns).
    z0 = rng.standard_normal((3, 2, 6))
    xc = rng.standard_normal((700, 6)).astype(np.float32)
    y, zf = sigstream.sosfilt(sos, xc, zi=z0, axis=0)
    y_ref, zf_ref = sps.sosfilt(sos, xc.astype(np.float64), axis=0, zi=z0)
    np.testing.assert_array_equal(y, y_ref.astype(np.float32))
    np.testing.assert_allclose(zf, zf_ref, rtol=1e-12, atol=1e-12)


def rel_l2(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want))


def test_bad_arguments_are_value_errors() -> None:
    x = np.zeros(10, np.float32)
    with pytest.raises(ValueError, match="n_sections, 6"):
        sigstream.sosfilt(np.zeros((2, 5)), x)
    with pytest.raises(ValueError, match="a0 = 0"):
        sigstream.sosfilt(np.array([[1, 0, 0, 0, 0.1, 0.2]]), x)
    with pytest.raises(ValueError, match="zi must have shape"):
        sigstream.sosfilt(np.array([[1, 0, 0, 1, 0.1, 0.2]]), x, zi=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="backend"):
        sigstream.sosfilt(np.array([[1, 0, 0, 1, 0.1, 0.2]]), x, backend="cuda")
    for arr in (x, x.astype(np.float64).reshape(2, 5)):
        with pytest.raises(ValueError, match="axis"):
            sigstream.sosfilt(np.array([[1, 0, 0, 1, 0.1, 0.2]]), arr, axis=arr.ndim)
    with pytest.raises(ValueError, match="0-d"):
        sigstream.sosfilt(np.array([[1, 0, 0, 1, 0.1, 0.2]]), np.float64(1.0))


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs PyTorch")
def test_torch_tensors_come_back_as_tensors() -> None:
    import torch

    rng = np.random.default_rng(5)
    sos = random_sos(rng, 2)
    x = rng.standard_normal((2, 999)).astype(np.float32)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devices:
        t = torch.from_numpy(x).to(dev)
        y, zf = sigstream.sosfilt(sos, t, zi=np.zeros((2, 2, 2)))
        assert isinstance(y, torch.Tensor) and y.device.type == dev
        assert isinstance(zf, torch.Tensor) and zf.device.type == dev
        want = sps.sosfilt(sos, x.astype(np.float64))
        if dev == "cpu":
            np.testing.assert_array_equal(y.numpy(), want.astype(np.float32))
        else:  # the CUDA kernel: in parallel over time, the same float64 arithmetic joined by a scan
            assert rel_l2(y.cpu().numpy(), want) < 1e-6


def test_cupy_arrays_come_back_on_their_device() -> None:
    cupy = pytest.importorskip("cupy")
    if not sigstream.cuda_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(6)
    sos = random_sos(rng, 4)
    x = rng.standard_normal((3, 4001)).astype(np.float32)
    y, zf = sigstream.sosfilt(sos, cupy.asarray(x), zi=np.zeros((4, 3, 2)))
    assert isinstance(y, cupy.ndarray) and isinstance(zf, cupy.ndarray)
    want, zf_want = sps.sosfilt(sos, x.astype(np.float64), zi=np.zeros((4, 3, 2)))
    assert rel_l2(cupy.asnumpy(y), want) < 1e-6
    np.testing.assert_allclose(cupy.asnumpy(zf), zf_want, rtol=1e-8, atol=1e-12)
    # backend="cpu" takes the array through the host: the CPU's bits.
    y_cpu = sigstream.sosfilt(sos, cupy.asarray(x), backend="cpu")
    assert isinstance(y_cpu, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(y_cpu), want.astype(np.float32))


def test_gpu_arrays_run_on_their_device_in_pieces() -> None:
    """Long rows on the GPU (many tiles, so the scan's levels), filtered in three pieces with the state
    carried through zi/zf, along axis 0, from a non-zero state: SciPy's result within 1e-6."""
    cupy = pytest.importorskip("cupy")
    if not sigstream.cuda_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(8)
    sos = random_sos(rng, 5)
    x = rng.standard_normal((300007, 2)).astype(np.float32)
    z0 = rng.standard_normal((5, 2, 2))
    want, zf_want = sps.sosfilt(sos, x.astype(np.float64), axis=0, zi=z0)
    z = cupy.asarray(z0)
    got = []
    for lo, hi in [(0, 1), (1, 70001), (70001, 300007)]:
        y, z = sigstream.sosfilt(sos, cupy.asarray(x[lo:hi]), zi=z, axis=0, backend="cuda")
        got.append(cupy.asnumpy(y))
    assert rel_l2(np.concatenate(got), want) < 1e-6
    np.testing.assert_allclose(cupy.asnumpy(z), zf_want, rtol=1e-8, atol=1e-10)
