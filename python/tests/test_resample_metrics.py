"""sigstream.resample against scipy.signal.resample_poly, sigstream.metrics against float64 NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as ss

import sigstream


@pytest.mark.parametrize("up,down", [(1, 1), (160, 147), (147, 160), (1, 3), (6, 1), (101, 37), (2, 4)])
def test_resample_equals_resample_poly(rng: np.random.Generator, up: int, down: int) -> None:
    x = rng.standard_normal((2, 4001))
    y = sigstream.resample(x, up, down)
    ref = ss.resample_poly(x, up, down, axis=-1)
    assert y.shape == ref.shape and y.dtype == np.float64
    assert np.linalg.norm(y - ref) / np.linalg.norm(ref) <= 1e-5


def test_resample_window_axis_and_short_input(rng: np.random.Generator) -> None:
    x = rng.standard_normal((3001, 2))  # frames x channels
    y = sigstream.resample(x, 3, 2, axis=0, window=("kaiser", 8.0), half_taps_per_phase=16)
    ref = ss.resample_poly(x, 3, 2, axis=0, window=("kaiser", 8.0), padtype="constant")
    # SciPy's default half length is 10; with 16 its filter is firwin(2*16*3+1): build it the same way.
    h = ss.firwin(2 * 16 * 3 + 1, 1.0 / 3, window=("kaiser", 8.0))
    ref = ss.resample_poly(x, 3, 2, axis=0, window=h)
    assert y.shape == ref.shape
    assert np.linalg.norm(y - ref) / np.linalg.norm(ref) <= 1e-5
    short = rng.standard_normal(3)
    np.testing.assert_allclose(sigstream.resample(short, 5, 1), ss.resample_poly(short, 5, 1), atol=1e-6)


def test_resample_bad_arguments() -> None:
    with pytest.raises(sigstream.ConfigError, match="up and down"):
        sigstream.resample(np.ones(10), 0, 1)
    with pytest.raises(sigstream.ConfigError, match="limit"):
        sigstream.resample(np.ones(10), 4099, 4097)
    with pytest.raises(sigstream.ConfigError, match="window"):
        sigstream.resample(np.ones(10), 2, 1, window="kaiserr")


def test_metrics_match_float64(rng: np.random.Generator) -> None:
    x = rng.standard_normal((2, 3, 5001)).astype(np.float32)
    y = (x * 0.5 + rng.standard_normal(x.shape).astype(np.float32) * 0.1).astype(np.float32)
    m = sigstream.metrics(y, reference=x)
    y64, x64 = y.astype(np.float64), x.astype(np.float64)
    energy = (y64**2).sum(-1)
    np.testing.assert_allclose(m["energy"], energy, rtol=1e-9)
    np.testing.assert_allclose(m["rms"], np.sqrt(energy / 5001), rtol=1e-9)
    np.testing.assert_allclose(m["peak"], np.abs(y64).max(-1), rtol=0)
    np.testing.assert_allclose(m["mean"], y64.mean(-1), rtol=1e-9, atol=1e-15)
    dot = (x64 * y64).sum(-1)
    np.testing.assert_allclose(m["dot_input"], dot, rtol=1e-9)
    np.testing.assert_allclose(m["correlation_input"], dot / np.sqrt((x64**2).sum(-1) * energy), rtol=1e-9)
    assert m["frames"] == 5001 and m["energy"].shape == (2, 3)
    assert (m["nonfinite"] == 0).all()


def test_metrics_nonfinite_and_scalars() -> None:
    y = np.array([1.0, np.nan, -3.0, np.inf], np.float32)
    m = sigstream.metrics(y)
    assert m["nonfinite"] == 2 and m["peak"] == 3.0 and m["energy"] == 10.0
    assert "dot_input" not in m
    zero = sigstream.metrics(np.zeros(4), reference=np.ones(4))
    assert zero["correlation_input"] == 0.0
    with pytest.raises(ValueError, match="same shape"):
        sigstream.metrics(np.zeros(4), reference=np.zeros(5))
