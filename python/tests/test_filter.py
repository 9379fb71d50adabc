"""sigstream.filter and sigstream.design on NumPy arrays against SciPy/NumPy computed in float64."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.signal as ss

import sigstream
from conftest import cli_path


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / max(np.linalg.norm(b), 1e-300))


def reference(x: np.ndarray, h: np.ndarray, mode: str) -> np.ndarray:
    """SPEC §3's modes from SciPy/NumPy in float64, along the last axis."""
    x = np.asarray(x, np.float64)
    if mode == "causal":
        return ss.lfilter(h, 1.0, x, axis=-1)
    flat = x.reshape(-1, x.shape[-1])
    rows = [np.convolve(r, h, mode) if mode != "same" else ss.convolve(r, h, "same") for r in flat]
    return np.stack(rows).reshape(x.shape[:-1] + (-1,))


@pytest.mark.parametrize("kind,cutoff", [("lowpass", 1000.0), ("highpass", 2500.0), ("bandpass", (300.0, 3400.0)),
                                         ("bandstop", (900.0, 1100.0))])
@pytest.mark.parametrize("window,scipy_window", [("hamming", "hamming"), ("hann", "hann"), ("blackman", "blackman"),
                                                 (("kaiser", 8.6), ("kaiser", 8.6))])
def test_design_equals_firwin(kind: str, cutoff: object, window: object, scipy_window: object) -> None:
    taps = 101 if kind in ("highpass", "bandstop") else 254 + 1
    h = sigstream.design(kind, cutoff, 16000.0, taps=taps, window=window)  # type: ignore[arg-type]
    pass_zero = kind in ("lowpass", "bandstop")
    ref = ss.firwin(taps, cutoff, window=scipy_window, pass_zero=pass_zero, fs=16000.0)
    assert h.dtype == np.float64 and h.shape == (taps,)
    np.testing.assert_allclose(h, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("mode", ["causal", "same", "full", "valid"])
@pytest.mark.parametrize("taps", [1, 2, 7, 64, 255, 1023])
def test_modes_match_scipy(rng: np.random.Generator, mode: str, taps: int) -> None:
    x = rng.standard_normal((3, 5003))
    h = rng.standard_normal(taps)
    y = sigstream.filter(x, h, mode=mode, method="direct")
    ref = reference(x, h, mode)
    assert y.shape == ref.shape and y.dtype == np.float64
    assert rel_l2(y, ref) <= 1e-5


@pytest.mark.parametrize("taps", [31, 255, 4095])
def test_fft_method_matches_scipy(rng: np.random.Generator, taps: int) -> None:
    x = rng.standard_normal((2, 40001)).astype(np.float32)
    h = rng.standard_normal(taps)
    for mode in ("causal", "same", "full"):
        y = sigstream.filter(x, h, mode=mode, method="fft")
        assert y.dtype == np.float32
        assert rel_l2(y, reference(x, h, mode)) <= 1e-5, mode


def test_batch_axes_and_axis_argument(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 997))
    h = rng.standard_normal(33)
    y = sigstream.filter(x, h)
    assert y.shape == x.shape
    assert rel_l2(y, reference(x, h, "causal")) <= 1e-5
    # Samples along axis 0 (e.g. frames x channels, as soundfile returns them).
    frames_first = np.ascontiguousarray(x[0].T)  # 997 x 3
    z = sigstream.filter(frames_first, h, axis=0)
    assert z.shape == frames_first.shape
    np.testing.assert_array_equal(z.T, sigstream.filter(x[0], h))
    w = sigstream.filter(x, h, axis=1, mode="full")
    assert w.shape == (2, 3 + 32, 997)


def test_rows_are_independent_and_batch_equals_one_by_one(rng: np.random.Generator) -> None:
    x = rng.standard_normal((9, 3001)).astype(np.float32)
    h = rng.standard_normal(129)
    together = sigstream.filter(x, h, method="direct")
    for r in range(x.shape[0]):
        np.testing.assert_array_equal(together[r], sigstream.filter(x[r], h, method="direct"))


def test_large_call_split_over_threads_gives_the_same_bits(rng: np.random.Generator) -> None:
    # Large enough for the thread pool (pieces of one row on several threads).
    x = rng.standard_normal((1, 400_003)).astype(np.float32)
    h = rng.standard_normal(63).astype(np.float32)
    y = sigstream.filter(x, h, method="direct")
    small = np.concatenate([sigstream.filter(x[:, : 100_000 + 62], h, mode="valid", method="direct")])
    # valid on the first 100000 + 62 samples = causal outputs 62 .. 100061.
    np.testing.assert_array_equal(y[:, 62:100_062], small)


def test_dtypes(rng: np.random.Generator) -> None:
    h = rng.standard_normal(17)
    x16 = (rng.standard_normal(1001) * 3000).astype(np.int16)
    y = sigstream.filter(x16, h)
    assert y.dtype == np.float32
    assert rel_l2(y, ss.lfilter(h, 1.0, x16.astype(np.float64))) <= 1e-5
    assert sigstream.filter(x16.astype(np.float64), h).dtype == np.float64
    assert sigstream.filter([1.0, 2.0, 3.0], [1.0, 1.0]).tolist() == [1.0, 3.0, 5.0]


def test_edge_lengths(rng: np.random.Generator) -> None:
    h = rng.standard_normal(10)
    assert sigstream.filter(np.zeros((2, 0), np.float32), h).shape == (2, 0)
    full = sigstream.filter(np.zeros((2, 0), np.float32), h, mode="full")
    assert full.shape == (2, 9) and not full.any()
    assert sigstream.filter(np.ones(5), h, mode="valid").shape == (0,)
    x = rng.standard_normal(4)  # shorter than the filter
    assert rel_l2(sigstream.filter(x, h, mode="same"), ss.convolve(x, h, "same")) <= 1e-5


def test_nonfinite_input_stays_local_with_direct() -> None:
    x = np.zeros(100, np.float32)
    x[50] = np.nan
    y = sigstream.filter(x, np.ones(3), method="direct")
    assert np.isnan(y[50:53]).all() and not np.isnan(y[:50]).any() and not np.isnan(y[53:]).any()


def test_bad_arguments_raise_clear_errors(rng: np.random.Generator) -> None:
    x = rng.standard_normal(100)
    with pytest.raises(ValueError, match="mode must be one of"):
        sigstream.filter(x, [1.0], mode="sam")
    with pytest.raises(ValueError, match="method must be one of"):
        sigstream.filter(x, [1.0], method="fast")
    with pytest.raises(ValueError, match="backend must be one of"):
        sigstream.filter(x, [1.0], backend="gpu")
    with pytest.raises(TypeError, match="complex"):
        sigstream.filter(x.astype(np.complex64), [1.0])
    with pytest.raises(TypeError, match="real numeric"):
        sigstream.filter(np.array(["a", "b"]), [1.0])
    with pytest.raises(ValueError, match="0-d"):
        sigstream.filter(np.float32(1.0), [1.0])
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        sigstream.filter(x, [1.0], axis=2)
    with pytest.raises(ValueError, match="taps must not be empty"):
        sigstream.filter(x, [])
    with pytest.raises(ValueError, match="taps must be 1-D"):
        sigstream.filter(x, np.ones((2, 2)))
    with pytest.raises(ValueError, match="finite"):
        sigstream.filter(x, [1.0, np.inf])
    with pytest.raises(sigstream.ConfigError, match="Nyquist"):
        sigstream.design("lowpass", 9000.0, 16000.0)
    with pytest.raises(sigstream.ConfigError, match="kind"):
        sigstream.design("lowpas", 1000.0, 16000.0)


def test_same_bits_as_the_cli(tmp_path: Path, rng: np.random.Generator) -> None:
    """filter(direct) on the CPU writes the CLI's float32 samples bit for bit."""
    cli = cli_path()
    if cli is None:
        pytest.skip("no sigstream CLI built (build/sigstream)")
    x = rng.standard_normal((2, 12345)).astype(np.float32) * 0.5
    h = sigstream.design("lowpass", 2000.0, 16000.0, taps=127)
    raw_in, raw_out = tmp_path / "in.f32", tmp_path / "out.f32"
    np.ascontiguousarray(x.T).tofile(raw_in)  # interleaved frames
    subprocess.run([cli, "filter", str(raw_in), str(raw_out), "--input-type", "raw", "--rate", "16000",
                    "--channels", "2", "--encoding", "f32le", "--lowpass", "2000", "--taps", "127",
                    "--type", "raw", "--format", "float", "--backend", "cpu", "--method", "direct", "--quiet"],
                   check=True)
    from_cli = np.fromfile(raw_out, dtype=np.float32).reshape(-1, 2).T
    np.testing.assert_array_equal(sigstream.filter(x, h, method="direct"), from_cli)


@pytest.mark.parametrize("mode", ["causal", "same", "full", "valid"])
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_fast_path_gives_the_general_paths_bits(rng: np.random.Generator, mode: str, method: str) -> None:
    """C-contiguous float32 rows with float64 taps take a shorter path (no views, no conversions);
    a strided view of the same samples takes the general one: the same bits, and the same errors."""
    from sigstream import _core
    from sigstream._arrays import fast_fir

    x = rng.standard_normal((3, 5003)).astype(np.float32)
    wide = np.zeros((3, 2 * 5003), np.float32)
    wide[:, ::2] = x
    h = rng.standard_normal(101)
    assert fast_fir(x, h, mode, method, "auto", -1, _core) is not None
    assert fast_fir(wide[:, ::2], h, mode, method, "auto", -1, _core) is None
    general = sigstream.filter(wide[:, ::2], h, mode=mode, method=method)
    np.testing.assert_array_equal(sigstream.filter(x, h, mode=mode, method=method), general)
    np.testing.assert_array_equal(sigstream.filter(x[1], list(h), mode=mode, method=method), general[1])
    np.testing.assert_allclose(general, reference(x, h, mode), rtol=0, atol=1e-4)
    with pytest.raises(ValueError, match="taps must not be empty"):
        sigstream.filter(x, np.array([], np.float64), mode=mode, method=method)
    with pytest.raises(ValueError, match="finite"):
        sigstream.filter(x, np.array([1.0, np.nan]), mode=mode, method=method)


def test_fir_length_matches_the_core() -> None:
    from sigstream import _core
    from sigstream._arrays import fir_length

    for mode in ("causal", "same", "full", "valid"):
        for n in (0, 1, 2, 7, 100):
            for k in (1, 2, 7, 101):
                assert fir_length(mode, n, k) == _core.fir_length(mode, n, k), (mode, n, k)
