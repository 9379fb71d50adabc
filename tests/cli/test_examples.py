#!/usr/bin/env python3
"""The shipped example configs run as shipped on the fixtures in data/.

Usage: python3 test_examples.py PATH_TO_sigstream

Each case works in a fresh temporary folder holding a link to the
repository's data/ (the configs name data/... and out/... relative to the
working folder), runs the config without overrides (but --backend cpu), and
checks the output's content against the input: what the config's filter
should have done to it. Needs NumPy (scripts/install-deps.sh installs it).
"""

import array
import json
import math
import os
import shutil
import subprocess
import sys
import wave

import numpy as np

if len(sys.argv) < 2:
    print("usage: test_examples.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIGSTREAM_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import run_cases  # noqa: E402


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2, "%s: expected 16-bit PCM" % path
        data = array.array("h", w.readframes(w.getnframes()))
        if sys.byteorder != "little":
            data.byteswap()
        return w.getframerate(), w.getnchannels(), [v / 32768.0 for v in data]


def band_power(x, rate, lo_hz, hi_hz, n=1024):
    """Mean power of x in [lo_hz, hi_hz): Hann-windowed n-sample blocks, half overlapping (Welch's
    average, by its definition)."""
    x = np.asarray(x, np.float64)
    win = np.hanning(n)
    starts = range(0, len(x) - n + 1, n // 2)
    spec = np.mean([np.abs(np.fft.rfft(x[s:s + n] * win)) ** 2 for s in starts], axis=0)
    f = np.fft.rfftfreq(n, 1.0 / rate)
    return float(np.mean(spec[(f >= lo_hz) & (f < hi_hz)]))


def setup():
    os.symlink(os.path.join(ROOT, "data"), "data")
    for name in ("filter_file.yaml", "batch.yaml"):
        shutil.copy(os.path.join(ROOT, "configs", "examples", name), name)


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, "%s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr)
    return p


def case_filter_file_runs_as_shipped():
    setup()
    run("run", "filter_file.yaml", "--backend", "cpu")
    rate, ch, x = read_wav("data/input.wav")
    rate_y, ch_y, y = read_wav("out/filtered.wav")
    assert (rate_y, ch_y, len(y)) == (rate, ch, len(x)), "shape changed"
    stats = json.load(open("out/filtered_stats.json"))
    names = [s["name"] for s in stats["stages"]]
    assert names == ["lowpass", "trim", "after_lowpass"], names
    # A 255-tap Hamming low-pass at 3 kHz, then -3 dB: the 5-7 kHz band (hiss) falls by
    # far more than the 3 dB, the 200-2000 Hz band (speech) by about 3 dB.
    high = 10 * math.log10(band_power(y, rate, 5000, 7000) / band_power(x, rate, 5000, 7000))
    low = 10 * math.log10(band_power(y, rate, 200, 2000) / band_power(x, rate, 200, 2000))
    assert high < -40, "5-7 kHz only %.1f dB down" % high
    assert -3.6 < low < -2.4, "200-2000 Hz changed by %.1f dB, expected -3" % low
    return "5-7 kHz %.1f dB, 200-2000 Hz %.1f dB" % (high, low)


def case_batch_example_runs_on_every_fixture():
    setup()
    run("batch", "batch.yaml", "--out-dir", "out/batch", "--backend", "cpu")
    summary = json.load(open("out/batch/batch_summary.json"))
    fixtures = sorted(f for f in os.listdir("data") if f.endswith(".wav"))
    outs = sorted(os.path.basename(f["output"]) for f in summary["files"] if f["status"] == "ok")
    assert outs == fixtures, "outputs %s for fixtures %s" % (outs, fixtures)
    rate, _, x = read_wav("data/chirp.wav")
    _, _, y = read_wav("out/batch/chirp.wav")
    # The 300-3400 Hz telephone band keeps the sweep's middle and removes its ends.
    mid = band_power(y, rate, 800, 2500) / band_power(x, rate, 800, 2500)
    top = band_power(y, rate, 5500, 7500) / band_power(x, rate, 5500, 7500)
    assert 0.5 < mid < 2.0, "800-2500 Hz gain %.2f" % mid
    assert top < 1e-3, "5.5-7.5 kHz gain %.2e" % top
    return "%d fixtures; chirp 800-2500 Hz x%.2f, 5.5-7.5 kHz x%.1e" % (len(fixtures), mid, top)


if __name__ == "__main__":
    run_cases([case_filter_file_runs_as_shipped, case_batch_example_runs_on_every_fixture], BIN,
              "sigstream-examples-")
