"""sigstream.spectrum (Welch's PSD, SPEC §8) against scipy.signal.welch in float64."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss

import sigstream


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("window", ["hann", "hamming", "blackman", "boxcar", ("kaiser", 8.6)])
@pytest.mark.parametrize("nfft,overlap", [(256, 0.5), (1000, 0.25), (511, 0.0), (4096, 0.75), (33, 0.9)])
def test_equals_welch(rng: np.random.Generator, window: object, nfft: int, overlap: float) -> None:
    x = rng.standard_normal((2, 10007)).astype(np.float32) + 0.25  # a mean: detrend=False keeps it
    f, p = sigstream.spectrum(x, 16000.0, nfft=nfft, overlap=overlap, window=window)  # type: ignore[arg-type]
    fr, pr = ss.welch(x.astype(np.float64), 16000.0, window, nperseg=nfft, noverlap=int(nfft * overlap),
                      detrend=False, scaling="density")
    assert f.dtype == np.float64 and p.dtype == np.float64
    assert p.shape == pr.shape == (2, nfft // 2 + 1)
    np.testing.assert_array_equal(f, fr)
    assert rel_l2(p, pr) <= 1e-6


def test_shapes_axis_and_dtypes(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3001, 2, 2))
    f, p = sigstream.spectrum(x, 8000.0, nfft=512, axis=0)
    _, pr = ss.welch(x.astype(np.float32).astype(np.float64), 8000.0, "hann", nperseg=512, noverlap=256,
                     detrend=False, axis=0)
    assert p.shape == pr.shape == (257, 2, 2)
    assert rel_l2(p, pr) <= 1e-6
    one = rng.standard_normal(5000).astype(np.float32)
    f1, p1 = sigstream.spectrum(one, 48000.0, nfft=1024)
    assert p1.shape == (513,) and f1[-1] == 24000.0
    ints = (one * 1000).astype(np.int16)
    _, pi = sigstream.spectrum(ints, 48000.0, nfft=1024)
    _, pir = ss.welch(ints.astype(np.float64), 48000.0, "hann", nperseg=1024, noverlap=512, detrend=False)
    assert rel_l2(pi, pir) <= 1e-6


def test_a_tone_lands_in_its_bin_with_its_power(rng: np.random.Generator) -> None:
    rate, nfft = 16000.0, 1600
    t = np.arange(48000) / rate
    x = (0.5 * np.sin(2 * np.pi * 1000.0 * t) + 0.01 * rng.standard_normal(t.size)).astype(np.float32)
    f, p = sigstream.spectrum(x, rate, nfft=nfft)
    assert f[int(np.argmax(p))] == 1000.0
    # A sine of amplitude A has power A^2/2: the density integrated over the peak's bins.
    df = rate / nfft
    peak = p[(f > 950) & (f < 1050)].sum() * df
    assert abs(peak - 0.125) < 0.125 * 0.02


def test_errors() -> None:
    x = np.zeros(1000, np.float32)
    with pytest.raises(ValueError, match="fewer than nfft"):
        sigstream.spectrum(x, 8000.0, nfft=4096)
    with pytest.raises(ValueError, match="overlap"):
        sigstream.spectrum(x, 8000.0, nfft=256, overlap=1.0)
    with pytest.raises(ValueError, match="rate"):
        sigstream.spectrum(x, 0.0, nfft=256)
    with pytest.raises(ValueError, match="nfft"):
        sigstream.spectrum(x, 8000.0, nfft=0)
    with pytest.raises(ValueError, match="window"):
        sigstream.spectrum(x, 8000.0, nfft=256, window="hanning-ish")
