"""sigstream.plot from Python: the figure of a run's statistics (SPEC section 8).

sigstream.run returns the statistics as a dict; make_figure draws its five
panels from it and plot() writes the file whole. The panels' data are
checked against the statistics (the CLI's test, tests/cli/test_plot.py,
checks every panel the same way for a cascade with a resampler). A batch
summary's figure is checked on a summary made here (every kind of file, known
loudness values) and on one from sigstream.batch with `loudness: true`."""
from __future__ import annotations

import json
import math
import os
import struct
import wave
from pathlib import Path
from typing import Any

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


# A batch summary's files[] entry (the keys plot.py reads, as pipeline/batch.cpp
# writes them): the output's facts are null or empty unless it was written.
def _entry(name: str, status: str = "ok", lufs: float | None = None, tp: float | None = None,
           rms: float = 0.1, peak: float = 0.5) -> dict[str, Any]:
    written = status in ("ok", "skipped")
    return {"file": f"/data/in/{name}", "status": status, "error": None if written else "cannot open as audio",
            "clipped_samples": 0 if written else None, "output_rms": [rms, rms / 2] if written else [],
            "output_peak": [peak, peak / 2] if written else [], "integrated_lufs": lufs, "true_peak_dbtp": tp}


# Nine files: four with loudness (one skipped as up to date), one silent (no
# gated block and no true peak: all zero), one quiet (no gated block, a true
# peak), one failed, one interrupted, one not run.
FILES = [
    _entry("speech.wav", lufs=-23.04, tp=-1.52),
    _entry("loud.wav", lufs=-8.7, tp=0.83, peak=1.0),
    _entry("silent.wav", rms=0.0, peak=0.0),
    _entry("bad.wav", status="failed"),
    _entry("hum.wav", lufs=-51.25, tp=-33.5, rms=0.003, peak=0.01),
    _entry("whisper.wav", tp=-64.2, rms=1e-4, peak=6e-4),
    _entry("old.wav", status="skipped", lufs=-16.0, tp=-2.0),
    _entry("cut.wav", status="interrupted"),
    _entry("later.wav", status="not_run"),
]


def _summary(files: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {k: sum(f["status"] == k for f in files) for k in ("ok", "skipped", "failed", "interrupted", "not_run")}
    return {"counts": dict(counts, total=len(files)), "out_dir": "out/batch", "backend": "cpu", "wall_s": 0.5,
            "files": files}


def _line(ax: Any, label: str) -> Any:
    lines = [ln for ln in ax.get_lines() if ln.get_label() == label]
    assert len(lines) == 1, [ln.get_label() for ln in ax.get_lines()]
    return lines[0]


def _xs(line: Any) -> list[float | None]:
    return [None if math.isnan(v) else float(v) for v in line.get_xdata()]


def test_batch_figure_draws_loudness_and_true_peak_per_file(tmp_path: Path) -> None:
    path = tmp_path / "batch_summary.json"
    path.write_text(json.dumps(_summary(FILES)))  # None -> null, as the CLI writes it
    fig = plot.make_figure(path)
    levels, clips, loud = fig.get_axes()  # the two earlier panels keep their places
    # Drawn between the levels and the clipped samples.
    assert [ax.get_subplotspec().rowspan for ax in (levels, loud, clips)] == [range(0, 1), range(1, 2), range(2, 3)]
    assert "LUFS" in loud.get_xlabel() and "dBTP" in loud.get_xlabel() and loud.get_ylabel() == "file"
    assert "loudness" in loud.get_title() and "true peak" in loud.get_title()
    names = [t.get_text() for t in loud.get_yticklabels()]
    assert names == ["speech.wav", "loud.wav", "silent.wav", "bad.wav  (FAILED)", "hum.wav", "whisper.wav",
                     "old.wav", "cut.wav  (interrupted)", "later.wav  (not run)"]
    assert [t.get_text() for t in levels.get_yticklabels()] == names  # a skipped file is not a failed one
    lufs = _line(loud, "integrated loudness (LUFS)")
    tp = _line(loud, "true peak (dBTP)")
    assert list(lufs.get_ydata()) == list(range(len(FILES))) == list(tp.get_ydata())
    assert _xs(lufs) == [f["integrated_lufs"] for f in FILES]
    assert _xs(tp) == [f["true_peak_dbtp"] for f in FILES]
    assert _xs(lufs)[:2] == [-23.04, -8.7] and _xs(tp)[5] == -64.2  # not all None by accident
    # The silent file and the quiet one (no gated block) are marked at the left edge, with a word.
    silent = _line(loud, "silent: no gated block (integrated null)")
    assert list(silent.get_ydata()) == [2, 5]
    left, right = loud.get_xlim()
    assert list(silent.get_xdata()) == [left, left]
    assert left <= -64.2 - 5 and right >= 0.83  # every value in view, full scale too
    texts = [t.get_text() for t in loud.texts]
    assert sum(t.startswith("silent") for t in texts) == 2, texts
    assert {"no output (failed)", "no output (interrupted)", "no output (not run)"} <= set(texts), texts
    assert "-23.0 LUFS" in texts and "0.8 dBTP" in texts, texts
    assert not any("loudness: true" in t for t in texts)
    assert "clipped" in clips.get_xlabel() and "dBFS" in levels.get_xlabel()


def test_batch_figure_without_loudness_says_how_to_get_it(tmp_path: Path) -> None:
    nulls = [dict(f, integrated_lufs=None, true_peak_dbtp=None) for f in FILES]
    absent = [{k: v for k, v in f.items() if k not in ("integrated_lufs", "true_peak_dbtp")} for f in FILES]
    for files in (nulls, absent):  # null, or a summary from before the keys
        loud = plot.make_figure(_summary(files)).get_axes()[2]
        texts = [t.get_text() for t in loud.texts]
        assert len(texts) == 1 and "add `loudness: true` to a metrics stage" in texts[0], texts
        assert loud.get_lines() == [] and "LUFS" in loud.get_xlabel()
    failed = [_entry("a.wav", status="failed"), _entry("b.wav", status="not_run"), _entry("c.wav", status="failed")]
    texts = [t.get_text() for t in plot.make_figure(_summary(failed)).get_axes()[2].texts]
    assert len(texts) == 1 and "no file has an output" in texts[0], texts
    out = plot.plot(_summary(nulls), tmp_path / "fig.png")
    assert Path(out).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _write_sine(path: Path, amplitude: float, rate: int = 48000, seconds: float = 1.0) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        n = int(rate * seconds)
        w.writeframes(b"".join(struct.pack("<h", round(amplitude * 32767 * math.sin(2 * math.pi * 997 * i / rate)))
                               for i in range(n)))


def test_a_batch_with_loudness_draws_its_summary(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    _write_sine(tmp_path / "in" / "a_tone.wav", 0.5)
    _write_sine(tmp_path / "in" / "b_silence.wav", 0.0)
    (tmp_path / "in" / "c_bad.wav").write_text("not audio")
    cfg = {"version": 1, "source": {"file": str(tmp_path / "in" / "a_tone.wav")},
           "stages": [{"type": "metrics", "name": "meter", "loudness": True}],
           "sink": {"file": str(tmp_path / "out" / "x.wav")}, "execution": {"backend": "cpu"},
           "batch": {"inputs": [str(tmp_path / "in" / "*.wav")], "out_dir": str(tmp_path / "out"),
                     "keep_going": True}}
    s = sigstream.batch(cfg, quiet=True)
    tone, silence, bad = s["files"]
    assert [tone["status"], silence["status"], bad["status"]] == ["ok", "ok", "failed"]
    # A 997 Hz sine's loudness is its rms in dBFS (BS.1770: -0.691 dB offset, +0.691 dB of K-weighting
    # at 997 Hz): amplitude 0.5 is -9.03 LUFS.
    assert abs(tone["integrated_lufs"] - (20 * math.log10(0.5) - 3.01)) < 0.1
    assert silence["integrated_lufs"] is None and silence["true_peak_dbtp"] is None
    loud = plot.make_figure(tmp_path / "out" / "batch_summary.json").get_axes()[2]
    assert _xs(_line(loud, "integrated loudness (LUFS)")) == [tone["integrated_lufs"], None, None]
    assert _xs(_line(loud, "true peak (dBTP)")) == [tone["true_peak_dbtp"], None, None]
    assert list(_line(loud, "silent: no gated block (integrated null)").get_ydata()) == [1]
