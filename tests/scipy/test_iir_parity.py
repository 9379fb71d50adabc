#!/usr/bin/env python3
"""SciPy parity of the iir stage (SPEC §12) for the built sigstream binary.

Usage: python3 test_iir_parity.py PATH_TO_sigstream

Random stable sections (odd lengths, seeded) and RBJ cookbook biquads,
through `sigstream run` on the CPU backend: the output against
scipy.signal.sosfilt (float64, zero state) to relative L2 1e-5 on float32
output, bit-identical bytes for every chunk size down to 1 frame and with
halo-needing stages after the iir, a stream equal to its file, live mode
equal to its file; the cookbook sections' own defining properties (gain at
DC, at f0, at Nyquist) from scipy.signal.sosfreqz; bad sections refused
with exit 2. Exits 77 (skipped) without NumPy/SciPy, as the other parity
scripts.
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
    print("usage: test_iir_parity.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
RATE = 48000
TIMEOUT = 120

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from harness import expect_in, expect_rc, run_cases  # noqa: E402


def run(args, **kw):
    return subprocess.run([BIN] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=TIMEOUT, **kw)


def check(args, **kw):
    p = run(args, **kw)
    if p.returncode != 0:
        raise AssertionError("`sigstream %s` exited %d: %s" % (" ".join(map(str, args)), p.returncode,
                                                              p.stderr.decode(errors="replace")[-800:]))
    return p


def write_float_wav(path, x, rate=RATE):
    """x (frames, channels) float32 as a WAV (IEEE float, format 3)."""
    x = np.asarray(x, "<f4")
    frames, ch = x.shape
    data = x.tobytes()
    fmt = (b"fmt " + (16).to_bytes(4, "little") + (3).to_bytes(2, "little") + ch.to_bytes(2, "little")
           + rate.to_bytes(4, "little") + (rate * 4 * ch).to_bytes(4, "little")
           + (4 * ch).to_bytes(2, "little") + (32).to_bytes(2, "little"))
    body = b"WAVE" + fmt + b"data" + len(data).to_bytes(4, "little") + data
    with open(path, "wb") as f:
        f.write(b"RIFF" + len(body).to_bytes(4, "little") + body)


def read_float_wav(path):
    with open(path, "rb") as f:
        b = f.read()
    ch = int.from_bytes(b[22:24], "little")
    i = b.index(b"data")
    n = int.from_bytes(b[i + 4:i + 8], "little")
    return np.frombuffer(b[i + 8:i + 8 + n], "<f4").reshape(-1, ch)


def random_sos(rng, sections):
    """Stable sections: poles at radius 0.3..0.97, zeros anywhere near the circle."""
    rows = []
    for _ in range(sections):
        r, th = rng.uniform(0.3, 0.97), rng.uniform(0.05, np.pi - 0.05)
        zr, zth = rng.uniform(0.5, 1.2), rng.uniform(0, np.pi)
        g = rng.uniform(0.2, 2.0)
        rows.append([g, -2 * g * zr * np.cos(zth), g * zr * zr, 1.0, -2 * r * np.cos(th), r * r])
    return np.array(rows)


def config(sos_yaml, extra_stages="", sink="out.wav", source="{file: in.wav}", execution=""):
    return ("version: 1\nsource: %s\nsink: {file: %s, format: float}\nstages:\n"
            "  - {type: iir, name: f, %s}\n%s"
            "execution: {backend: cpu%s}\n" % (source, sink, sos_yaml, extra_stages, execution))


def sos_yaml(sos):
    return "sos: [%s]" % ", ".join("[%s]" % ", ".join(repr(float(v)) for v in row) for row in sos)


def signal(rng, frames, ch):
    return (0.3 * rng.standard_normal((frames, ch))).astype(np.float32)


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def sosfilt_random_sections_odd_lengths():
    rng = np.random.default_rng(2026)
    worst = 0.0
    for frames, ch, ns in [(1, 1, 1), (37, 2, 2), (30011, 3, 4), (100003, 2, 7)]:
        x = signal(rng, frames, ch)
        sos = random_sos(rng, ns)
        write_float_wav("in.wav", x)
        with open("c.yaml", "w") as f:
            f.write(config(sos_yaml(sos)))
        check(["run", "c.yaml", "--quiet"])
        y = read_float_wav("out.wav")
        ref = sps.sosfilt(sos, x.astype(np.float64), axis=0)
        if y.shape != ref.shape:
            raise AssertionError("shape %r, want %r" % (y.shape, ref.shape))
        # float64 state and arithmetic, one float32 rounding at the end: each sample within
        # half an ulp of float32, so the relative L2 is ~3e-8, far inside SPEC's 1e-5.
        err = float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-300))
        if not err < 1e-6:
            raise AssertionError("frames %d, %d sections: relative L2 %.3g vs sosfilt" % (frames, ns, err))
        if not np.array_equal(y, ref.astype(np.float32)):
            raise AssertionError("frames %d: not sosfilt's float64 result rounded once to float32" % frames)
        worst = max(worst, err)
    return "rel L2 <= %.2g, every sample = float32(sosfilt)" % worst


@case
def chunking_and_halos_after_it_are_invisible():
    rng = np.random.default_rng(7)
    x = signal(rng, 20011, 2)
    write_float_wav("in.wav", x)
    sos = random_sos(rng, 3)
    # A same-mode FIR and a spectrum after the iir: their halos reach back into frames the
    # iir computed in the chunk before. Chunks run on 1 or 2 threads (the iir takes them in turn).
    after = ("  - {type: fir, taps: [0.25, 0.5, 0.25, -0.125, 0.0625], mode: same}\n"
             "  - {type: metrics, spectrum: {nfft: 256}}\n")
    first = None
    for chunk, threads in [(1048576, 0), (4099, 2), (4099, 1), (17, 2), (1, 2), (1, 1)]:
        with open("c.yaml", "w") as f:
            f.write(config(sos_yaml(sos), after,
                           execution=", chunk_frames: %d, threads: %d" % (chunk, threads)))
        check(["run", "c.yaml", "--quiet", "--stats", "s.json"])
        with open("out.wav", "rb") as f:
            b = f.read()
        if first is None:
            first = b
        elif b != first:
            raise AssertionError("chunk_frames %d, %d threads changes the output bytes" % (chunk, threads))
    y = read_float_wav("out.wav")
    ref = sps.sosfilt(sos, x.astype(np.float64), axis=0)
    h = np.array([0.25, 0.5, 0.25, -0.125, 0.0625])
    want = np.stack([np.convolve(ref[:, c], h)[2:2 + len(x)] for c in range(2)], axis=1)
    err = float(np.linalg.norm(y - want) / np.linalg.norm(want))
    if not err < 1e-5:
        raise AssertionError("iir then fir: relative L2 %.3g" % err)
    # A FIR before the iir too (it runs on every thread; the iir takes the chunks in turn).
    before = None
    for chunk, threads in [(1048576, 1), (3001, 2), (7, 2)]:
        with open("c.yaml", "w") as f:
            f.write("version: 1\nsource: {file: in.wav}\nsink: {file: out.wav, format: float}\nstages:\n"
                    "  - {type: fir, taps: [0.5, 0.25, 0.125, 0.0625, 0.03125], mode: same}\n"
                    "  - {type: iir, %s}\n  - {type: fir, taps: [1, -0.5], mode: same}\n"
                    "execution: {backend: cpu, chunk_frames: %d, threads: %d}\n" % (sos_yaml(sos), chunk, threads))
        check(["run", "c.yaml", "--quiet", "--verify"])
        with open("out.wav", "rb") as f:
            b = f.read()
        if before is None:
            before = b
        elif b != before:
            raise AssertionError("fir-iir-fir: chunk_frames %d, %d threads changes the bytes" % (chunk, threads))
    return "6 chunk sizes x threads down to 1 frame: same bytes; iir+fir rel L2 %.2g; fir-iir-fir 3 ways" % err


@case
def a_stream_and_live_mode_give_the_files_bytes():
    rng = np.random.default_rng(11)
    x = signal(rng, 9601, 2)
    write_float_wav("in.wav", x)
    sos = random_sos(rng, 2)
    with open("c.yaml", "w") as f:
        f.write(config(sos_yaml(sos)))
    check(["run", "c.yaml", "--quiet"])
    with open("out.wav", "rb") as f:
        want = read_float_wav("out.wav")
    raw = x.tobytes()
    # A stream of raw float32 through a pipe, written as raw to standard output.
    with open("s.yaml", "w") as f:
        f.write("version: 1\nsource: {file: '-', raw: {sample_rate: %d, channels: 2, encoding: f32le}}\n"
                "sink: {file: '-', type: raw, format: float}\nstages:\n  - {type: iir, %s}\n"
                "execution: {backend: cpu, chunk_frames: 1000}\n" % (RATE, sos_yaml(sos)))
    p = check(["run", "s.yaml", "--quiet"], input=raw)
    got = np.frombuffer(p.stdout, "<f4").reshape(-1, 2)
    if not np.array_equal(got, want):
        raise AssertionError("stream: %d frames, differs from the file's output" % len(got))
    p = check(["run", "s.yaml", "--quiet", "--latency", "2"], input=raw)
    live = np.frombuffer(p.stdout, "<f4").reshape(-1, 2)
    if not np.array_equal(live, want):
        raise AssertionError("live: %d frames, differs from the file's output" % len(live))
    return "stream and live (2 ms) bytes = the file's"


@case
def zero_phase_is_sosfiltfilt():
    """zero_phase = scipy.signal.sosfiltfilt (odd padding, 3 x ntaps) on float32 signals: the
    output within relative L2 1e-6 (SciPy returns float64; sigstream rounds once to float32),
    for any chunk_frames (the stage makes the run one chunk), with a FIR after it, through
    `filter --iir --zero-phase`; a section with b2 = a2 = 0 shortens the padding as SciPy's;
    a signal not longer than the padding, a stream and live mode are config errors."""
    rng = np.random.default_rng(31)
    worst = 0.0
    first_order = np.array([[0.2, 0.3, 0.0, 1.0, -0.6, 0.0]])  # b2 = a2 = 0: ntaps 2, padlen 6
    for frames, ch, sos in [(20011, 2, random_sos(rng, 4)), (7, 1, first_order),
                            (4099, 3, random_sos(rng, 9))]:
        x = signal(rng, frames, ch)
        write_float_wav("in.wav", x)
        ref = sps.sosfiltfilt(sos, x, axis=0)
        for chunk in (1048576, 1000):
            with open("c.yaml", "w") as f:
                f.write(config(sos_yaml(sos) + ", zero_phase: true",
                               execution=", chunk_frames: %d" % chunk))
            check(["run", "c.yaml", "--quiet"])
            y = read_float_wav("out.wav")
            err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
            if not err < 1e-6:
                raise AssertionError("zero_phase, %d frames, %d sections, chunk %d: rel L2 %.3g"
                                     % (frames, len(sos), chunk, err))
            worst = max(worst, err)
    # With a FIR after it, and the filter command's flag.
    x = signal(rng, 48000, 2)
    write_float_wav("in.wav", x)
    check(["filter", "in.wav", "out.wav", "--highpass", "80", "--iir", "4", "--zero-phase",
           "--format", "float", "--quiet"])
    sos = sps.butter(4, 80.0, "highpass", fs=RATE, output="sos")
    ref = sps.sosfiltfilt(sos, x, axis=0)
    err = float(np.linalg.norm(read_float_wav("out.wav") - ref) / np.linalg.norm(ref))
    if not err < 1e-6:
        raise AssertionError("filter --zero-phase: rel L2 %.3g" % err)
    with open("c.yaml", "w") as f:
        f.write(config(sos_yaml(sos) + ", zero_phase: true",
                       "  - {type: fir, taps: [0.25, 0.5, 0.25], mode: same}\n"))
    check(["run", "c.yaml", "--quiet"])
    want = np.stack([np.convolve(ref[:, c], [0.25, 0.5, 0.25])[1:1 + len(x)] for c in range(2)], 1)
    err2 = float(np.linalg.norm(read_float_wav("out.wav") - want) / np.linalg.norm(want))
    if not err2 < 1e-5:
        raise AssertionError("zero_phase then fir: rel L2 %.3g" % err2)
    # Refusals: not longer than the padding (SciPy's ValueError), a stream, live mode.
    pad = 3 * (2 * len(sos) + 1)
    write_float_wav("in.wav", signal(rng, pad, 1))
    with open("c.yaml", "w") as f:
        f.write(config(sos_yaml(sos) + ", zero_phase: true"))
    p = run(["run", "c.yaml", "--quiet"])
    expect_rc(p, 2)
    expect_in("zero_phase pads %d frames" % pad, p.stderr.decode(), "short signal")
    raw = signal(rng, 5000, 2).tobytes()
    with open("s.yaml", "w") as f:
        f.write("version: 1\nsource: {file: '-', raw: {sample_rate: %d, channels: 2, encoding: f32le}}\n"
                "sink: {file: '-', type: raw, format: float}\nstages:\n"
                "  - {type: iir, name: zp, %s, zero_phase: true}\n" % (RATE, sos_yaml(sos)))
    for extra in ([], ["--latency", "2"]):
        p = run(["run", "s.yaml", "--quiet"] + extra, input=raw)
        expect_rc(p, 2)
        expect_in("zero_phase", p.stderr.decode(), "stream %r" % extra)
        expect_in("zp", p.stderr.decode(), "stream %r names the stage" % extra)
    # A WAV piped in is a stream too, though its header states its length.
    write_float_wav("in.wav", signal(rng, 5000, 2))
    with open("w.yaml", "w") as f:
        f.write("version: 1\nsource: {file: '-'}\nsink: {file: '-', type: raw, format: float}\nstages:\n"
                "  - {type: iir, name: zp, %s, zero_phase: true}\n" % sos_yaml(sos))
    with open("in.wav", "rb") as f:
        p = run(["run", "w.yaml", "--quiet"], input=f.read())
    expect_rc(p, 2)
    expect_in("not a stream", p.stderr.decode(), "a piped WAV")
    p = run(["filter", "in.wav", "out2.wav", "--highpass", "80", "--zero-phase"])
    expect_rc(p, 2)
    expect_in("--iir", p.stderr.decode(), "--zero-phase without --iir")
    return "sosfiltfilt rel L2 <= %.2g (3 signals x 2 chunkings), filter flag %.2g, +fir %.2g; " \
        "short/stream/live refused" % (worst, err, err2)


def biquad_sos(kind, f0, q=0.7071067811865476, gain_db=0.0):
    """The planned section, from the statistics' response is not exact enough: run an impulse."""
    imp = np.zeros((4096, 1), np.float32)
    imp[0, 0] = 1.0
    write_float_wav("imp.wav", imp)
    with open("b.yaml", "w") as f:
        f.write(config("biquad: {type: %s, freq_hz: %r, q: %r, gain_db: %r}" % (kind, f0, q, gain_db),
                       source="{file: imp.wav}"))
    check(["run", "b.yaml", "--quiet"])
    return read_float_wav("out.wav")[:, 0].astype(np.float64)


def gain_db_at(h, f):
    w = 2 * np.pi * f / RATE
    n = np.arange(len(h))
    return 20 * np.log10(abs(np.sum(h * np.exp(-1j * w * n))))


@case
def cookbook_biquads_have_their_defining_gains():
    f0 = 1000.0
    checks = []
    h = biquad_sos("lowpass", f0)
    checks += [("lowpass DC", gain_db_at(h, 0), 0.0), ("lowpass f0 (q=1/sqrt2)", gain_db_at(h, f0), -3.0103)]
    h = biquad_sos("highpass", f0)
    checks += [("highpass Nyquist", gain_db_at(h, RATE / 2), 0.0), ("highpass f0", gain_db_at(h, f0), -3.0103)]
    h = biquad_sos("bandpass", f0, q=2.0)
    checks += [("bandpass f0 (0 dB peak)", gain_db_at(h, f0), 0.0)]
    h = biquad_sos("peaking", f0, q=1.5, gain_db=6.0)
    checks += [("peaking f0", gain_db_at(h, f0), 6.0), ("peaking DC", gain_db_at(h, 0), 0.0)]
    h = biquad_sos("lowshelf", 300.0, gain_db=-9.0)
    checks += [("lowshelf DC", gain_db_at(h, 0), -9.0), ("lowshelf Nyquist", gain_db_at(h, RATE / 2), 0.0)]
    h = biquad_sos("highshelf", 5000.0, gain_db=4.5)
    checks += [("highshelf Nyquist", gain_db_at(h, RATE / 2), 4.5), ("highshelf DC", gain_db_at(h, 0), 0.0)]
    h = biquad_sos("allpass", f0)
    checks += [("allpass 3 kHz", gain_db_at(h, 3000.0), 0.0)]
    bad = [(n, got, want) for n, got, want in checks if abs(got - want) > 2e-3]
    h = biquad_sos("notch", f0, q=5.0)
    if gain_db_at(h, f0) > -60:
        bad.append(("notch f0", gain_db_at(h, f0), "< -60"))
    if bad:
        raise AssertionError("; ".join("%s: %.4f dB, want %s" % b for b in bad))
    return "%d gains within 0.002 dB, notch %.0f dB at f0" % (len(checks), gain_db_at(h, f0))


@case
def bad_sections_are_config_errors():
    write_float_wav("in.wav", np.zeros((100, 1), np.float32))
    cases = [
        ("sos: [[1, 0, 0, 1, -2.0, 1.0]]", "unstable"),       # double pole at z = 1
        ("sos: [[1, 0, 0, 1, 0.0, 1.5]]", "unstable"),        # radius sqrt(1.5)
        ("sos: [[1, 0, 0, 1, 0.5]]", "not six"),
        ("sos: [[1, 0, 0, 0, 0.1, 0.2]]", "a0 = 0"),
        ("biquad: {type: lowpass, freq_hz: 30000}", "nyquist"),
        ("biquad: {type: wobble, freq_hz: 100}", "wobble"),
        ("sos: [[1, 0, 0, 1, 0, 0]], biquad: {type: lowpass, freq_hz: 100}", "exactly one"),
    ]
    for text, needle in cases:
        with open("c.yaml", "w") as f:
            f.write(config(text))
        p = run(["run", "c.yaml", "--quiet"])
        expect_rc(p, 2)
        expect_in(needle, p.stderr.decode(), "message for %s" % text)
        if os.path.exists("out.wav"):
            raise AssertionError("%s left an output" % text)
    return "%d bad configs: exit 2, named" % (len(cases))


DESIGNS = []
for _ftype, _extra in [("butter", {}), ("cheby1", {"rp": 0.5}), ("cheby2", {"rs": 60.0}),
                       ("ellip", {"rp": 1.0, "rs": 80.0}), ("bessel", {})]:
    for _kind, _cut in [("lowpass", 3000.0), ("highpass", 80.0), ("bandpass", (300.0, 3400.0)),
                        ("bandstop", (49.0, 61.0))]:
        for _order in (1, 2, 3, 4, 7, 10, 24):
            DESIGNS.append((_ftype, _extra, _kind, _cut, _order))


@case
def designs_equal_scipy_iirfilter_sections():
    worst = 0.0
    for ftype, extra, kind, cut, order in DESIGNS:
        flag = "--" + kind
        text = "%r:%r" % cut if isinstance(cut, tuple) else repr(cut)
        args = ["design", flag, text, "--rate", RATE, "--iir", order, "--ftype", ftype]
        for k, v in extra.items():
            args += ["--" + k, v]
        p = check(args)
        got = np.array([[float(v) for v in line.split()] for line in p.stdout.decode().splitlines()])
        want = sps.iirfilter(order, list(cut) if isinstance(cut, tuple) else cut, btype=kind,
                             ftype=ftype, fs=RATE, output="sos", **extra)
        if got.shape != want.shape:
            raise AssertionError("%s %s order %d: %r sections, want %r" % (ftype, kind, order, got.shape, want.shape))
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        if not err <= 1e-12:
            raise AssertionError("%s %s order %d: max |sos - iirfilter| / max |sos| = %.3g"
                                 % (ftype, kind, order, err))
        worst = max(worst, err)
    return "%d designs, max relative difference %.2g" % (len(DESIGNS), worst)


@case
def filter_iir_flag_is_sosfilt_of_the_design():
    rng = np.random.default_rng(5)
    x = signal(rng, 48017, 2)
    write_float_wav("in.wav", x)
    check(["filter", "in.wav", "out.wav", "--highpass", "80", "--iir", "4", "--format", "float",
           "--backend", "cpu", "--quiet"])
    y = read_float_wav("out.wav")
    sos = sps.iirfilter(4, 80.0, btype="highpass", ftype="butter", fs=RATE, output="sos")
    ref = sps.sosfilt(sos, x.astype(np.float64), axis=0)
    err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
    if not err < 1e-5:
        raise AssertionError("filter --highpass 80 --iir 4: relative L2 %.3g vs sosfilt" % err)
    # The same as a YAML design.
    with open("c.yaml", "w") as f:
        f.write(config("design: {kind: bandpass, cutoff_hz: [300, 3400], order: 3, ftype: cheby1, rp: 1}"))
    check(["run", "c.yaml", "--quiet"])
    y2 = read_float_wav("out.wav")
    sos2 = sps.iirfilter(3, [300, 3400], btype="bandpass", ftype="cheby1", rp=1, fs=RATE, output="sos")
    err2 = float(np.linalg.norm(y2 - sps.sosfilt(sos2, x.astype(np.float64), axis=0))
                 / np.linalg.norm(sps.sosfilt(sos2, x.astype(np.float64), axis=0)))
    if not err2 < 1e-5:
        raise AssertionError("cheby1 bandpass design: relative L2 %.3g" % err2)
    return "rel L2 %.2g (filter --iir), %.2g (YAML cheby1 band-pass)" % (err, err2)


@case
def bad_designs_are_config_errors():
    write_float_wav("in.wav", np.zeros((100, 1), np.float32))
    cases = [
        ("design: {kind: lowpass, cutoff_hz: 3000, order: 0}", "order"),
        ("design: {kind: lowpass, cutoff_hz: 3000, order: 25}", "order"),
        ("design: {kind: lowpass, cutoff_hz: 30000, order: 2}", "nyquist"),
        ("design: {kind: bandpass, cutoff_hz: 3000, order: 2}", "two band edges"),
        ("design: {kind: lowpass, cutoff_hz: 3000, order: 2, ftype: cheby1}", "rp"),
        ("design: {kind: lowpass, cutoff_hz: 3000, order: 2, ftype: ellipse}", "ellipse"),
        ("design: {kind: lowpass, cutoff_hz: 3000, order: 2, ftype: ellip, rp: 1}", "rs"),
        ("design: {kind: lowpass, cutoff_hz: 3000, order: 2, ftype: ellip, rp: 3, rs: 1}", "below rs"),
    ]
    for text, needle in cases:
        with open("c.yaml", "w") as f:
            f.write(config(text))
        p = run(["run", "c.yaml", "--quiet"])
        expect_rc(p, 2)
        expect_in(needle, p.stderr.decode(), "message for %s" % text)
    p = run(["filter", "in.wav", "o.wav", "--lowpass", "3000", "--iir", "4", "--taps", "101"])
    expect_rc(p, 2)
    expect_in("--taps", p.stderr.decode())
    return "%d bad designs and --iir with --taps: exit 2, named" % len(cases)


if __name__ == "__main__":
    run_cases(CASES, BIN, "sigstream-iir-")
