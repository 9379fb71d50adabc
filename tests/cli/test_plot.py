#!/usr/bin/env python3
"""`sigstream plot`, `--plot` and the demo figure (SPEC section 8), checked by content.

Usage: python3 test_plot.py PATH_TO_sigstream

A cascade with a resampler (fir, metrics with a spectrum, resample, metrics
with a spectrum) runs with `--plot`; the figure's panels are then rebuilt
through python/sigstream/plot.py's make_figure (the code the CLI runs) and
checked through matplotlib's object model: every panel's title and axis
labels with units, and line data equal to the statistics (the excerpt's
samples, 10 log10 of each spectrum, each filter's response, the chunks'
levels). The files: PNG of the stated size, SVG and PDF by their headers,
the demo's out/demo.png. Errors: a figure name without a known extension
is exit 2, a missing or bad statistics file exit 1 (SPEC section 1); a
Python without matplotlib is exit 2 with the install hint. A batch summary's figure: a bar per file
(levels from the summary, the failed file marked). Skipped (77) without
matplotlib here.
"""

import importlib.util
import json
import math
import os
import subprocess
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image
except ImportError as e:
    print(f"SKIP: matplotlib not available ({e})")
    sys.exit(77)

if len(sys.argv) < 2:
    print("usage: test_plot.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIGSTREAM_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import run_cases  # noqa: E402

spec = importlib.util.spec_from_file_location("sigstream_plot", os.path.join(ROOT, "python", "sigstream", "plot.py"))
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)

ENV = dict(os.environ, SIGSTREAM_PYTHON=sys.executable)  # the Python that has matplotlib

CASCADE = """version: 1
source: {synth: {sample_rate: 48000, duration_s: 2.0, channels: 2,
  tones: [{freq_hz: 50, amplitude: 0.4}, {freq_hz: 7000, amplitude: 0.3}],
  noise: {kind: uniform, amplitude: 0.01, seed: 3}}}
stages:
  - {type: metrics, name: before, spectrum: {nfft: 2048}}
  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 2000, taps: 201}, mode: same}
  - {type: resample, name: down, to_hz: 16000}
  - {type: metrics, name: after, spectrum: {nfft: 1024, overlap: 0.25}}
sink: {file: out.wav}
stats: {json: stats.json}
execution: {backend: cpu, chunk_frames: 30000}
"""


def sh(*args, ok=True):
    r = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV)
    if ok:
        assert r.returncode == 0, f"{args}: exit {r.returncode}: {r.stderr}"
    return r


def db(values, k):
    return [max(k * math.log10(v), plot.FLOOR_DB) if v > 0 else plot.FLOOR_DB for v in values]


def close(a, b, tol=1e-9):
    assert len(a) == len(b), f"{len(a)} points vs {len(b)}"
    for x, y in zip(a, b):
        if math.isnan(x) and math.isnan(y):
            continue
        assert abs(x - y) <= tol * max(1.0, abs(y)), f"{x} vs {y}"


def test_run_plot_draws_every_panel_from_the_statistics():
    open("c.yaml", "w").write(CASCADE)
    sh("run", "c.yaml", "--plot", "fig.png")
    img = matplotlib.image.imread("fig.png")
    assert img.shape[:2] == (1500, 1200), img.shape  # 12 x 15 in at 100 dpi
    assert img[..., :3].std() > 0.05, "the PNG is blank"
    s = json.load(open("stats.json"))
    fig = plot.make_figure(s)
    axes = fig.get_axes()
    assert len(axes) == 5, [a.get_title() for a in axes]
    wave, spectra, mag, gd, levels = axes
    for ax, unit_x, unit_y in ((wave, "(ms)", "amplitude"), (spectra, "(Hz)", "(dB"), (mag, "(Hz)", "(dB)"),
                               (gd, "(Hz)", "(ms)"), (levels, "(s)", "(dBFS)")):
        assert ax.get_title(), "a panel without a title"
        assert unit_x in ax.get_xlabel() and unit_y in ax.get_ylabel(), (ax.get_xlabel(), ax.get_ylabel())
    # 1. Waveforms: the excerpt's samples at their times.
    e = s["excerpt"]
    (src, out) = wave.get_lines()
    close(list(src.get_ydata()), e["source"]["channels"][0])
    close(list(out.get_ydata()), e["output"]["channels"][0])
    assert abs(src.get_xdata()[0] - e["source"]["start_frame"] / 48.0) < 1e-9
    assert abs(out.get_xdata()[0] - e["output"]["start_frame"] / 16.0) < 1e-9  # ms at 16 kHz
    # 2. Spectra: 10 log10 of each block's PSD, channel 0.
    lines = spectra.get_lines()
    assert [ln.get_label().split()[0] for ln in lines] == ["before", "after"]
    for ln, name in zip(lines, ("before", "after")):
        sp = s["metrics"][name]["spectrum"]
        close(list(ln.get_xdata()), sp["freq_hz"])
        close(list(ln.get_ydata()), db(sp["psd"][0], 10))
    assert s["metrics"]["after"]["spectrum"]["sample_rate"] == 16000
    # 3-4. The fir's and the resampler's responses.
    assert [ln.get_label() for ln in mag.get_lines()] == ["lp (fir)", "down (resample)"]
    for ln, st in zip(mag.get_lines(), [st for st in s["stages"] if st.get("response")]):
        close(list(ln.get_ydata()), [max(v, plot.FLOOR_DB) for v in st["response"]["magnitude_db"]])
    lp = [st for st in s["stages"] if st["name"] == "lp"][0]["response"]
    assert abs(lp["magnitude_db"][0]) < 0.01 and min(lp["magnitude_db"]) < -40  # a low-pass
    gd_lp = gd.get_lines()[0].get_ydata()
    defined = [g for g in gd_lp if not math.isnan(g)]  # NaN where |H| has no phase (the stopband's zeros)
    assert len(defined) > len(gd_lp) // 2, (len(defined), len(gd_lp))
    assert all(abs(g - 100 / 48.0) < 1e-6 for g in defined)  # (201 - 1) / 2 samples
    # 5. Levels: a step per chunk, rms in dBFS, for the two blocks and the output.
    names = [ln.get_label() for ln in levels.get_lines()]
    assert names == ["before rms", "before peak", "after rms", "after peak", "output rms", "output peak"], names
    chunks = s["metrics"]["after"]["chunks"]
    close(list(levels.get_lines()[2].get_ydata())[:-1], db([c["channels"][0]["rms"] for c in chunks], 20))
    assert abs(levels.get_lines()[2].get_xdata()[-1] - 2.0) < 1e-9  # the last chunk ends at 2 s


def test_plot_command_writes_svg_and_pdf():
    open("c.yaml", "w").write(CASCADE)
    sh("run", "c.yaml")
    sh("plot", "stats.json", "-o", "fig.svg")
    assert "<svg" in open("fig.svg").read(2000)
    sh("plot", "stats.json", "-o", "fig.pdf")
    assert open("fig.pdf", "rb").read(5) == b"%PDF-"
    sh("plot", "stats.json")  # default: next to the statistics
    assert os.path.getsize("stats.png") > 10000
    assert not [f for f in os.listdir(".") if ".part" in f], os.listdir(".")


def test_filter_plot_without_a_stats_file():
    open("c.yaml", "w").write(CASCADE.replace("stats: {json: stats.json}\n", ""))
    sh("run", "c.yaml", "--set", "sink.file=in.wav")
    sh("filter", "in.wav", "o.wav", "--lowpass", "1000", "--plot", "f.png", "--backend", "cpu")
    assert os.path.getsize("f.png") > 10000
    assert [f for f in os.listdir(".") if f.endswith(".json")] == [], "a temporary statistics file was left"


def test_errors():
    open("c.yaml", "w").write(CASCADE)
    r = sh("run", "c.yaml", "--plot", "fig.jpg", ok=False)
    assert r.returncode == 2 and "fig.jpg" in r.stderr and ".png" in r.stderr, r.stderr
    assert not os.path.exists("out.wav"), "the run went ahead with a figure it cannot write"
    r = sh("plot", "missing.json", ok=False)
    assert r.returncode == 1 and "missing.json" in r.stderr, r.stderr
    open("bad.json", "w").write("{}")
    r = sh("plot", "bad.json", ok=False)
    assert r.returncode == 1 and "not a sigstream statistics file" in r.stderr, r.stderr
    sh("run", "c.yaml")
    # A SIGSTREAM_PYTHON that cannot run is passed over, and said so.
    env = dict(ENV, SIGSTREAM_PYTHON="/nonexistent/python3")
    r = subprocess.run([BIN, "plot", "stats.json", "-o", "f1.png"], capture_output=True, text=True, env=env)
    if r.returncode == 0:
        assert "passed over /nonexistent/python3 (cannot run)" in r.stderr and os.path.getsize("f1.png") > 10000, \
            r.stderr
    else:  # no python3 or /usr/bin/python3 with matplotlib here either: the hint, with what was tried
        assert r.returncode == 2 and "no Python with matplotlib" in r.stderr and "/nonexistent" in r.stderr, r.stderr


def test_a_python3_without_matplotlib_first_on_path():
    """pyenv, conda, a virtual environment: the first python3 lacks matplotlib; the figure
    still comes, drawn by the next Python that has it (here: the one running this test)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "bare"], check=True)
    assert subprocess.run(["bare/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode != 0
    open("c.yaml", "w").write(CASCADE)
    env = {k: v for k, v in os.environ.items() if k != "SIGSTREAM_PYTHON"}
    # The bare python3 first, then the test's own Python as "python3" too (a folder with a link to it).
    os.mkdir("good")
    os.symlink(sys.executable, "good/python3")
    env["PATH"] = os.path.abspath("bare/bin") + ":" + os.path.abspath("good") + ":" + env.get("PATH", "")
    sh("run", "c.yaml")
    r = subprocess.run([BIN, "plot", "stats.json", "-o", "f.png"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "No module named" not in r.stderr, "plot.py's own message on a Python it passed over: " + r.stderr
    assert "(no matplotlib or NumPy)" in r.stderr and "drawn with" in r.stderr, r.stderr
    assert os.path.getsize("f.png") > 10000
    # The demo says which Python drew its figure.
    d = subprocess.run([BIN], capture_output=True, text=True, env=env)
    assert d.returncode == 0 and os.path.getsize("out/demo.png") > 10000, d.stderr
    assert "figure: out/demo.png" in d.stderr and "drawn with" in d.stderr, d.stderr


def test_demo_draws_its_figure():
    sh()
    img = matplotlib.image.imread("out/demo.png")
    assert img.shape[:2] == (1500, 1200)
    s = json.load(open("out/demo_stats.json"))
    after = s["metrics"]["after_lowpass"]["spectrum"]
    f = after["freq_hz"]
    k50, k7k = min(range(len(f)), key=lambda i: abs(f[i] - 50)), min(range(len(f)), key=lambda i: abs(f[i] - 7000))
    p_in = s["metrics"]["input"]["spectrum"]["psd"][0]
    # The 7 kHz tone is gone (over 80 dB down), the 50 Hz tone is kept (within 0.1 dB).
    assert 10 * math.log10(p_in[k7k] / after["psd"][0][k7k]) > 80
    assert abs(10 * math.log10(p_in[k50] / after["psd"][0][k50])) < 0.1


def test_batch_summary_figure():
    os.symlink(os.path.join(ROOT, "data"), "data")
    open("bad.wav", "w").write("not audio")
    r = subprocess.run([BIN, "batch", os.path.join(ROOT, "configs", "examples", "batch.yaml"), "bad.wav",
                        "--out-dir", "b", "--backend", "cpu", "--quiet"], capture_output=True, text=True, env=ENV)
    assert r.returncode == 1, r.stderr  # one file failed, the others ran
    sh("plot", "b/batch_summary.json", "-o", "batch.png")
    assert os.path.getsize("batch.png") > 10000
    s = json.load(open("b/batch_summary.json"))
    levels, clips, _loudness = plot.make_figure(s).get_axes()
    labels = [t.get_text() for t in levels.get_yticklabels()]
    assert len(labels) == len(s["files"]) and sum("(FAILED)" in t for t in labels) == 1, labels
    ok = [f for f in s["files"] if f["status"] == "ok"]
    i = [f["file"] for f in s["files"]].index(ok[0]["file"])
    rms_bar = levels.patches[i]  # the rms bars come first, one per file, from -120 dBFS
    want = 20 * math.log10(max(ok[0]["output_rms"]))
    assert abs(rms_bar.get_x() + rms_bar.get_width() - want) < 1e-9, (rms_bar.get_width(), want)
    assert "dBFS" in levels.get_xlabel() and "clipped" in clips.get_xlabel()


run_cases([test_run_plot_draws_every_panel_from_the_statistics, test_plot_command_writes_svg_and_pdf,
           test_a_python3_without_matplotlib_first_on_path,
           test_filter_plot_without_a_stats_file, test_errors, test_demo_draws_its_figure,
           test_batch_summary_figure], BIN, "sigstream-plot-")
