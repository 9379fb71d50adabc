#!/usr/bin/env python3
"""SciPy parity for the built sigstream binary (SPEC §2 design, §3 numerics, §4 stats).

Usage: python3 test_filter_parity.py PATH_TO_sigstream

Needs numpy and scipy (Debian's python3-numpy / python3-scipy). When the running
interpreter lacks them and /usr/bin/python3 differs, the test re-runs itself
under /usr/bin/python3; if SciPy still cannot be imported it exits 77 (skipped).

Every case runs in a fresh temporary directory used as the working directory;
nothing is written into the source tree. One line per case, then
"N passed, M failed"; exit 1 on any failure.
"""

import os
import subprocess
import sys

try:
    import numpy as np
    import scipy.signal as sps
except ImportError:
    if (os.path.exists("/usr/bin/python3") and not os.environ.get("SIGSTREAM_PARITY_REEXEC")
            and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3")):
        os.environ["SIGSTREAM_PARITY_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("numpy/scipy not available (skipped)")
    sys.exit(77)

import json
import wave

if len(sys.argv) < 2:
    print("usage: test_filter_parity.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
RATE = 48000
FRAMES = 48001  # odd on purpose
TIMEOUT = 60


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from harness import Skip, run_cases  # noqa: E402


# ---------------------------------------------------------------- fixtures and I/O


def make_input(path, frames=FRAMES, rate=RATE, seed=12345):
    """Stereo int16: uniform noise plus tones, different per channel; no clipping."""
    rng = np.random.default_rng(seed)
    t = np.arange(frames) / rate
    left = (0.25 * rng.uniform(-1, 1, frames) + 0.2 * np.sin(2 * np.pi * 440 * t)
            + 0.15 * np.sin(2 * np.pi * 5000 * t + 0.3))
    right = (0.25 * rng.uniform(-1, 1, frames) + 0.2 * np.sin(2 * np.pi * 1200 * t + 1.0)
             + 0.15 * np.sin(2 * np.pi * 15000 * t))
    x = np.stack([left, right], axis=1)
    pcm = np.clip(np.round(x * 32768), -32768, 32767).astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return pcm


from wavio import read_wav  # noqa: E402,F401  (test_resample_parity uses it as fp.read_wav)


def run(args):
    return subprocess.run([BIN] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=TIMEOUT)


def check_run(args):
    p = run(args)
    if p.returncode != 0:
        raise AssertionError("`sigstream %s` exited %d: %s"
                             % (" ".join(map(str, args)), p.returncode, p.stderr[-600:]))
    return p


# ---------------------------------------------------------------- references


def reference(x, h, mode):
    """float64 reference per SPEC §3; x (frames, channels)."""
    cols = []
    for c in range(x.shape[1]):
        xc = x[:, c]
        if mode == "causal":
            cols.append(sps.lfilter(h, 1.0, xc))
        elif mode == "full":
            cols.append(np.convolve(xc, h))
        elif mode == "same":
            cols.append(sps.convolve(xc, h, "same"))
        else:
            raise ValueError(mode)
    return np.stack(cols, axis=1)


def rel_l2(y, ref):
    return float(np.linalg.norm(np.asarray(y, np.float64) - ref) / np.linalg.norm(ref))


def pcm16_of(ref):
    return np.clip(np.round(ref * 32768.0), -32768, 32767).astype(np.int64)


# Filters: (name, CLI args, firwin kwargs). Defaults: 255 taps, hamming.
FILTERS = [
    ("lowpass", ["--lowpass", "3000"], dict(numtaps=255, cutoff=3000)),
    ("highpass", ["--highpass", "3000"], dict(numtaps=255, cutoff=3000, pass_zero=False)),
    ("bandpass", ["--bandpass", "500:4000"],
     dict(numtaps=255, cutoff=[500, 4000], pass_zero=False)),
    ("bandstop", ["--bandstop", "500:4000"], dict(numtaps=255, cutoff=[500, 4000])),
    ("kaiser", ["--lowpass", "3000", "--window", "kaiser:8.6"],
     dict(numtaps=255, cutoff=3000, window=("kaiser", 8.6))),
    ("taps101", ["--lowpass", "3000", "--taps", "101"], dict(numtaps=101, cutoff=3000)),
]
MODES = ["causal", "same", "full"]


def firwin(kw, rate=RATE):
    return sps.firwin(fs=rate, **kw)


# ---------------------------------------------------------------- cases

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def design_case(name, args, kw):
    def fn():
        p = check_run(["design"] + args + ["--rate", RATE])
        got = np.array([float(v) for v in p.stdout.split()])
        want = firwin(kw)
        if got.shape != want.shape:
            raise AssertionError("design %s: %d taps, want %d" % (name, got.size, want.size))
        err = float(np.max(np.abs(got - want)))
        if err > 1e-12:
            raise AssertionError("`sigstream design %s --rate %d`: max |taps - firwin| = %.3g > 1e-12"
                                 % (" ".join(args), RATE, err))
        return "max err %.2g" % err
    fn.__name__ = "design_%s" % name
    return fn


for _n, _a, _k in FILTERS:
    CASES.append(design_case(_n, _a, _k))


def filter_case(name, args, kw, mode, extra=(), tag=""):
    def fn():
        pcm = make_input("in.wav")
        x = pcm.astype(np.float64) / 32768.0
        h = firwin(kw)
        ref = reference(x, h, mode)
        nout = FRAMES + (h.size - 1 if mode == "full" else 0)
        base = ["filter", "in.wav"]
        opts = list(args) + ["--mode", mode, "--quiet", "--backend", "cpu"] + list(extra)

        # PCM16 output (--format same): within 1 LSB of round(ref * 32768), clipped.
        check_run(base + ["o16.wav"] + opts)
        rate, kind, y16 = read_wav("o16.wav")
        if (rate, kind, y16.shape) != (RATE, "pcm16", (nout, 2)):
            raise AssertionError("pcm16 output is %r, want %r"
                                 % ((rate, kind, y16.shape), (RATE, "pcm16", (nout, 2))))
        diff = np.abs(y16.astype(np.int64) - pcm16_of(ref))
        if diff.max() > 1:
            i = int(np.argmax(diff.max(axis=1)))
            raise AssertionError(
                "`sigstream %s`: pcm16 max |diff| = %d LSB (> 1) at frame %d: got %r want %r"
                % (" ".join(base + ["o16.wav"] + opts), diff.max(), i, y16[i].tolist(),
                   pcm16_of(ref)[i].tolist()))

        # Float output: relative L2 <= 1e-5; statistics against float64 numpy.
        check_run(base + ["of.wav", "--format", "float", "--stats", "s.json"] + opts)
        rate, kind, yf = read_wav("of.wav")
        if (rate, kind, yf.shape) != (RATE, "float", (nout, 2)):
            raise AssertionError("float output is %r, want %r"
                                 % ((rate, kind, yf.shape), (RATE, "float", (nout, 2))))
        err = rel_l2(yf, ref)
        if not err <= 1e-5:
            raise AssertionError("`sigstream %s`: float rel L2 error %.3g > 1e-5"
                                 % (" ".join(base + ["of.wav", "--format", "float"] + opts), err))
        check_stats("s.json", x, yf, nout)
        return "lsb<=%d, relL2 %.2g" % (diff.max(), err)
    fn.__name__ = "filter_%s_%s%s" % (name, mode, tag)
    return fn


STAT_KEYS = ["energy", "rms", "peak", "mean", "dot_input", "correlation_input"]


def expected_stats(x, y, nout):
    """float64 statistics of the float32 output y against the source x (zero beyond)."""
    y = np.asarray(y, np.float64)
    xs = np.zeros_like(y)
    n = min(x.shape[0], nout)
    xs[:n] = x[:n].astype(np.float32).astype(np.float64)
    out = []
    for c in range(y.shape[1]):
        yc, xc = y[:, c], xs[:, c]
        e = float(np.sum(yc * yc))
        ex = float(np.sum(xc * xc))
        dot = float(np.sum(xc * yc))
        out.append({
            "energy": e,
            "rms": float(np.sqrt(e / nout)),
            "peak": float(np.max(np.abs(yc))),
            "mean": float(np.sum(yc) / nout),
            "dot_input": dot,
            "correlation_input": dot / np.sqrt(ex * e) if ex > 0 and e > 0 else 0.0,
            "nonfinite": int(np.count_nonzero(~np.isfinite(yc))),
        })
    return out


def check_stats(path, x, y, nout):
    s = json.load(open(path))
    if s.get("schema") != 1:
        raise AssertionError("stats schema %r" % s.get("schema"))
    if s["output"]["frames"] != nout:
        raise AssertionError("stats output.frames %r, want %d" % (s["output"]["frames"], nout))
    if s["output"].get("clipped_samples") != 0:
        raise AssertionError("stats output.clipped_samples %r, want 0"
                             % s["output"].get("clipped_samples"))
    got = s["metrics"]["output"]["totals"]["channels"]
    want = expected_stats(x, y, nout)
    if len(got) != len(want):
        raise AssertionError("stats has %d channels, want %d" % (len(got), len(want)))
    bad = []
    for c, (g, w) in enumerate(zip(got, want)):
        for k in STAT_KEYS:
            # 1e-9 relative; the tiny absolute floor only matters for sums that cancel
            # to ~0 (the mean of a highpassed signal), where summation order decides.
            scale = abs(w[k]) if k != "mean" else max(abs(w[k]), 1e-6)
            if not abs(g[k] - w[k]) <= 1e-9 * scale:
                bad.append("ch%d %s: got %.17g want %.17g (rel %.3g)"
                           % (c, k, g[k], w[k], abs(g[k] - w[k]) / max(abs(w[k]), 1e-300)))
        if g.get("nonfinite") != 0:
            bad.append("ch%d nonfinite %r" % (c, g.get("nonfinite")))
    if bad:
        raise AssertionError("stats totals differ from float64 numpy: " + "; ".join(bad))


for _n, _a, _k in FILTERS:
    for _m in MODES:
        CASES.append(filter_case(_n, _a, _k, _m))

# Long filter through both methods (direct and FFT overlap-save).
for _meth in ("direct", "fft"):
    CASES.append(filter_case("lowpass4095", ["--lowpass", "3000", "--taps", "4095"],
                             dict(numtaps=4095, cutoff=3000), "same",
                             extra=["--method", _meth], tag="_" + _meth))


@case
def filter_taps_file():
    rng = np.random.default_rng(99)
    h = rng.uniform(-0.2, 0.2, 37)
    with open("taps.txt", "w") as f:
        f.write("# random taps\n")
        for v in h:
            f.write("%.17g\n" % v)
    pcm = make_input("in.wav")
    x = pcm.astype(np.float64) / 32768.0
    ref = reference(x, h, "causal")
    check_run(["filter", "in.wav", "of.wav", "--taps-file", "taps.txt", "--format", "float",
               "--quiet", "--backend", "cpu"])
    _, kind, yf = read_wav("of.wav")
    err = rel_l2(yf, ref)
    if kind != "float" or not err <= 1e-5:
        raise AssertionError("taps-file: kind %s rel L2 %.3g" % (kind, err))
    return "relL2 %.2g" % err


@case
def identity_pcm16_exact():
    # SPEC §3: taps [1] through PCM16 comes out sample-for-sample identical.
    with open("one.txt", "w") as f:
        f.write("1\n")
    pcm = make_input("in.wav")
    check_run(["filter", "in.wav", "o.wav", "--taps-file", "one.txt", "--quiet",
               "--backend", "cpu"])
    _, kind, y = read_wav("o.wav")
    if kind != "pcm16" or not np.array_equal(y, pcm):
        raise AssertionError("identity filter changed samples (kind %s, %d differ)"
                             % (kind, int(np.count_nonzero(y != pcm)) if y.shape == pcm.shape
                                else -1))


RUN_CONFIG = """\
version: 1
source:
  file: in.wav
stages:
  - type: fir
    name: lp
    design: {{kind: lowpass, cutoff_hz: 3000, taps: 255, window: hamming}}
    mode: {mode}
    method: direct
sink:
  file: out/y.wav
  format: float
stats:
  json: out/s.json
execution:
  backend: cpu
"""


def chunking_case(mode):
    def fn():
        pcm = make_input("in.wav")
        with open("c.yaml", "w") as f:
            f.write(RUN_CONFIG.format(mode=mode))
        outs = {}
        variants = {
            "997x3": ["--set", "execution.chunk_frames=997", "--set", "execution.threads=3"],
            "1Mx1": ["--set", "execution.chunk_frames=1048576", "--set", "execution.threads=1"],
            "4096x2s7": ["--set", "execution.chunk_frames=4096", "--set", "execution.threads=2",
                         "--set", "execution.streams=7"],
        }
        for tag, sets in variants.items():
            out = "out/y_%s.wav" % tag
            args = ["run", "c.yaml", "--quiet", "--set", "sink.file=" + out,
                    "--set", "stats.json=out/s_%s.json" % tag] + sets
            p = run(args)
            if p.returncode != 0:
                raise AssertionError("`sigstream %s` exited %d: %s"
                                     % (" ".join(args), p.returncode, p.stderr[-600:]))
            outs[tag] = (args, open(out, "rb").read())
        a_args, a = outs["1Mx1"]
        for tag, (args, b) in outs.items():
            if b != a:
                _, _, ya = read_wav("out/y_1Mx1.wav")
                _, _, yb = read_wav("out/y_%s.wav" % tag)
                nd = int(np.count_nonzero(ya != yb)) if ya.shape == yb.shape else -1
                raise AssertionError("output of `sigstream %s` differs from `sigstream %s` "
                                     "(%d samples differ; expected byte-identical)"
                                     % (" ".join(args), " ".join(a_args), nd))
        # And the run output itself matches scipy.
        x = pcm.astype(np.float64) / 32768.0
        ref = reference(x, firwin(dict(numtaps=255, cutoff=3000)), mode)
        _, _, y = read_wav("out/y_1Mx1.wav")
        if y.shape != ref.shape:
            raise AssertionError("run output shape %r, want %r" % (y.shape, ref.shape))
        err = rel_l2(y, ref)
        if not err <= 1e-5:
            raise AssertionError("run output rel L2 %.3g > 1e-5" % err)
        # Per-chunk statistics must sum to the totals (chunk order, float64).
        s = json.load(open("out/s_997x3.json"))
        chunks = s["metrics"]["output"]["chunks"]
        tot = s["metrics"]["output"]["totals"]["channels"]
        if sum(ch["frames"] for ch in chunks) != y.shape[0]:
            raise AssertionError("chunk frames do not add up to %d" % y.shape[0])
        for c in range(2):
            e = sum(ch["channels"][c]["energy"] for ch in chunks)
            if abs(e - tot[c]["energy"]) > 1e-9 * abs(tot[c]["energy"]):
                raise AssertionError("ch%d chunk energies sum to %.17g, total %.17g"
                                     % (c, e, tot[c]["energy"]))
        return "byte-identical over %d variants, relL2 %.2g" % (len(outs), err)
    fn.__name__ = "run_chunking_invariance_%s" % mode
    return fn


for _m in MODES:
    CASES.append(chunking_case(_m))


# ---------------------------------------------------------------- driver


def main():
    run_cases(CASES, BIN, "sigstream-scipy-")


if __name__ == "__main__":
    main()
