"""sigstream.plot from Python: the figure of a run's statistics (SPEC section 8).

sigstream.run returns the statistics as a dict; make_figure draws its five
panels from it and plot() writes the file whole. The panels' data are
checked against the statistics (the CLI's test, tests/cli/test_plot.py,
checks every panel the same way for a cascade with a resampler)."""
from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

import sigstream

matplotlib = pytest.importorskip("matplotlib")
from sigstream import plot  # noqa: E402

CONFIG = {
    "version": 1,
    "source": {"synth": {"sample_rate": 16000, "duration_s": 1.5, "channels": 1,
                         "tones": [{"freq_hz": 50, "amplitude": 0.5}, {"freq_hz": 7000, "amplitude": 0.5}]}},
    "stages": [
        {"type": "metrics", "name": "input", "spectrum": {"nfft": 1024}},
        {"type": "fir", "name": "lowpass", "design": {"kind": "lowpass", "cutoff_hz": 1000, "taps": 255},
         "mode": "same"},
        {"type": "metrics", "name": "after", "spectrum": {"nfft": 1024}},
    ],
    "execution": {"backend": "cpu", "chunk_frames": 7001},
}


def test_make_figure_draws_the_runs_data() -> None:
    s = sigstream.run(CONFIG, quiet=True)
    fig = plot.make_figure(s)
    wave, spectra, mag, gd, levels = fig.get_axes()
    assert "(ms)" in wave.get_xlabel() and "(Hz)" in spectra.get_xlabel() and "(dB" in spectra.get_ylabel()
    after = s["metrics"]["after"]["spectrum"]
    y = spectra.get_lines()[1].get_ydata()
    assert [round(v, 9) for v in y] == [round(max(10 * math.log10(p), plot.FLOOR_DB), 9) for p in after["psd"][0]]
    assert mag.get_lines()[0].get_label() == "lowpass (fir)"
    all_delays = gd.get_lines()[0].get_ydata()
    delays = [g for g in all_delays if not math.isnan(g)]
    assert len(delays) > len(all_delays) // 2  # NaN only at the stopband's zeros
    assert max(abs(g - 127 / 16.0) for g in delays) < 1e-6  # (255 - 1) / 2 samples at 16 kHz
    assert len(levels.get_lines()) == 6  # rms and peak of input, after and output
    ex = s["excerpt"]["output"]["channels"][0]
    assert list(wave.get_lines()[1].get_ydata()) == pytest.approx(ex)


def test_plot_writes_the_file_whole(tmp_path: Path) -> None:
    s = sigstream.run(CONFIG, quiet=True)
    out = plot.plot(s, tmp_path / "fig.svg")
    assert Path(out).read_text()[:200].lstrip().startswith("<?xml")
    assert sorted(os.listdir(tmp_path)) == ["fig.svg"]
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.pdf"):
        plot.plot(s, tmp_path / "fig.jpg")
    with pytest.raises(ValueError, match="not a sigstream statistics file"):
        bad = tmp_path / "bad.json"
        bad.write_text("[1, 2]")
        plot.load(bad)


def test_a_run_without_spectra_says_how_to_get_them() -> None:
    cfg = dict(CONFIG, stages=[CONFIG["stages"][1]])
    fig = plot.make_figure(sigstream.run(cfg, quiet=True))
    texts = [t.get_text() for t in fig.get_axes()[1].texts]
    assert any("spectrum: {}" in t for t in texts), texts
