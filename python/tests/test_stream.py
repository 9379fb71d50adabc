"""sigstream.Stream: concatenated chunk outputs equal one-shot filter (direct) bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import sigstream


def random_cuts(rng: np.random.Generator, n: int) -> list[tuple[int, int]]:
    cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(1, 12))))
    edges = [0, *cuts.tolist(), n]
    return list(zip(edges[:-1], edges[1:]))  # some chunks empty, some of 1 sample


@pytest.mark.parametrize("mode", ["causal", "same", "full", "valid"])
@pytest.mark.parametrize("taps", [1, 2, 31, 256])
def test_chunked_equals_one_shot(rng: np.random.Generator, mode: str, taps: int) -> None:
    x = rng.standard_normal((2, 3001)).astype(np.float32)
    h = rng.standard_normal(taps)
    whole = sigstream.filter(x, h, mode=mode, method="direct")
    for trial in range(4):
        s = sigstream.Stream(h, channels=2, mode=mode)
        parts = [s.process(x[:, a:b]) for a, b in random_cuts(rng, x.shape[1])]
        parts.append(s.flush())
        np.testing.assert_array_equal(np.concatenate(parts, axis=1), whole, err_msg=f"trial {trial}")


def test_one_sample_chunks_and_1d(rng: np.random.Generator) -> None:
    x = rng.standard_normal(200)
    h = rng.standard_normal(9)
    s = sigstream.Stream(h, mode="same")
    out = np.concatenate([s.process(x[i : i + 1]) for i in range(200)] + [s.flush()])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, sigstream.filter(x, h, mode="same", method="direct"))


def test_fft_stream_within_tolerance(rng: np.random.Generator) -> None:
    x = rng.standard_normal((1, 50000)).astype(np.float32)
    h = rng.standard_normal(2049)
    s = sigstream.Stream(h, mode="causal", method="fft")
    out = np.concatenate([s.process(x[:, i : i + 7000]) for i in range(0, 50000, 7000)] + [s.flush()], axis=1)
    ref = sigstream.filter(x, h, method="direct").astype(np.float64)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) <= 1e-5


def test_stream_misuse_is_reported(rng: np.random.Generator) -> None:
    s = sigstream.Stream([1.0, 0.5], channels=2)
    with pytest.raises(ValueError, match="rows"):
        s.process(np.zeros((3, 10)))
    s.process(np.zeros((2, 10)))
    with pytest.raises(ValueError, match="same batch shape"):
        s.process(np.zeros((1, 2, 10)))
    s.flush()
    with pytest.raises(ValueError, match="after flush"):
        s.process(np.zeros((2, 10)))
    with pytest.raises(ValueError, match="channels"):
        sigstream.Stream([1.0], channels=0)
    with pytest.raises(ValueError, match="before any chunk"):
        sigstream.Stream([1.0]).flush()
