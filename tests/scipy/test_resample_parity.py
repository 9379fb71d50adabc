#!/usr/bin/env python3
"""SciPy parity of the resample stage (SPEC §7) for the built sigstream binary.

Usage: python3 test_resample_parity.py PATH_TO_sigstream

Every output is compared with scipy.signal.resample_poly (default Kaiser 5.0,
half length 10 per phase) on the same float64 input, relative L2 <= 1e-5:
common pairs and odd ones, to_hz and up/down, cascades with fir before and
after, chunkings (the bytes must not change), and the errors of SPEC §7.
Skipped (77) without NumPy/SciPy, like test_filter_parity.py, whose WAV
helpers it shares.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_filter_parity as fp  # noqa: E402  (re-executes under /usr/bin/python3 or exits 77 itself)

np, sps = fp.np, fp.sps
run_cases, check_run, run, read_wav, rel_l2 = fp.run_cases, fp.check_run, fp.run, fp.read_wav, fp.rel_l2

TOL = 1e-5


def source(rate, seconds=0.75, seed=7):
    """Stereo int16 WAV 'in.wav' at `rate` (an odd frame count); returns it as float64 (v / 32768)."""
    frames = int(rate * seconds) | 1
    pcm = fp.make_input("in.wav", frames=frames, rate=rate, seed=seed)
    return pcm.astype(np.float64) / 32768.0


def resampled(x, up, down):
    return sps.resample_poly(x, up, down, axis=0)


def config(rate_stages, chunk=None, backend="cpu"):
    text = "version: 1\nsource: {file: in.wav}\nstages:\n" + rate_stages
    text += "sink: {file: out.wav, format: double}\nstats: {json: s.json}\n"
    text += "execution: {backend: %s%s}\n" % (backend, ", chunk_frames: %d" % chunk if chunk else "")
    with open("c.yaml", "w") as f:
        f.write(text)
    return "c.yaml"


CASES = []


def pair_case(rate_in, rate_out):
    def fn():
        x = source(rate_in)
        check_run(["filter", "in.wav", "out.wav", "--resample", rate_out, "--format", "double", "--backend", "cpu"])
        rate, kind, y = read_wav("out.wav")
        g = np.gcd(rate_in, rate_out)
        want = resampled(x, rate_out // g, rate_in // g)
        if rate != rate_out or y.shape != want.shape:
            raise AssertionError("%d -> %d: got %d Hz, %s frames; want %d Hz, %s" % (rate_in, rate_out, rate, y.shape, rate_out, want.shape))
        err = rel_l2(y, want)
        if err > TOL:
            raise AssertionError("%d -> %d: relative L2 %.3g > %g" % (rate_in, rate_out, err, TOL))
        return "rel L2 %.2g, %d -> %d frames" % (err, x.shape[0], y.shape[0])
    fn.__name__ = "resample_%d_to_%d" % (rate_in, rate_out)
    return fn


for _a, _b in [(44100, 48000), (48000, 44100), (48000, 16000), (8000, 48000), (37, 101), (101, 37), (22050, 22050)]:
    CASES.append(pair_case(_a, _b))


def case(fn):
    CASES.append(fn)
    return fn


@case
def up_down_window_and_half_length():
    x = source(16000)
    config("  - {type: resample, up: 6, down: 4, window: 'kaiser:8.0', half_taps_per_phase: 7}\n")
    check_run(["run", "c.yaml", "-q"])
    rate, _, y = read_wav("out.wav")
    # 6/4 reduces to 3/2; the filter follows the reduced ratio, as resample_poly's.
    h = sps.firwin(2 * 7 * 3 + 1, 1.0 / 3, window=("kaiser", 8.0))
    want = sps.resample_poly(x, 3, 2, axis=0, window=h * 3 / np.sum(h) * np.sum(h) / 3)
    err = rel_l2(y, want)
    if rate != 24000 or err > TOL:
        raise AssertionError("up 6 / down 4: %d Hz, rel L2 %.3g" % (rate, err))
    return "rel L2 %.2g" % err


@case
def cascade_fir_before_and_after():
    x = source(48000)
    stages = ("  - {type: fir, design: {kind: lowpass, cutoff_hz: 9000, taps: 101}}\n"
              "  - {type: metrics, name: before}\n"
              "  - {type: resample, to_hz: 22050}\n"
              "  - {type: fir, mode: same, design: {kind: lowpass, cutoff_hz: 5000, taps: 63}}\n"
              "  - {type: metrics, name: after}\n")
    for chunk in (None, 1000, 4097):
        config(stages, chunk)
        check_run(["run", "c.yaml", "-q"])
        rate, _, y = read_wav("out.wav")
        a = sps.lfilter(sps.firwin(101, 9000, fs=48000), 1.0, x, axis=0)
        b = resampled(a, 147, 320)
        want = np.stack([sps.convolve(b[:, c], sps.firwin(63, 5000, fs=22050), "same") for c in range(2)], axis=1)
        err = rel_l2(y, want)
        if rate != 22050 or y.shape != want.shape or err > TOL:
            raise AssertionError("chunk %s: %d Hz, %s frames (want %s), rel L2 %.3g" % (chunk, rate, y.shape, want.shape, err))
        raw = open("out.wav", "rb").read()
        if chunk is None:
            first = raw
        elif raw != first:
            raise AssertionError("chunk_frames %d changes the output bytes" % chunk)
        stats = fp.json.load(open("s.json"))
        after = stats["metrics"]["after"]["totals"]["channels"][0]
        rms = np.sqrt(np.mean(y[:, 0] ** 2))
        if abs(after["rms"] - rms) > 1e-6 * rms:
            raise AssertionError("metrics after the resampler: rms %r, the output's %r" % (after["rms"], rms))
        if after["dot_input"] is not None or stats["output"]["sample_rate"] != 22050:
            raise AssertionError("after a rate change: dot_input %r (want null), output rate %r"
                                 % (after["dot_input"], stats["output"]["sample_rate"]))
        frames = sum(c["frames"] for c in stats["metrics"]["after"]["chunks"])
        if frames != y.shape[0]:
            raise AssertionError("the metrics block counts %d frames, the output has %d" % (frames, y.shape[0]))
        # Before the resampler: every input frame counted once over the chunks.
        before = stats["metrics"]["before"]
        frames = sum(c["frames"] for c in before["chunks"])
        rms = np.sqrt(np.mean(a[:, 1] ** 2))
        got = before["totals"]["channels"][1]
        if frames != x.shape[0] or abs(got["rms"] - rms) > 1e-5 * rms or got["dot_input"] is None:
            raise AssertionError("metrics before the resampler, chunk %s: %d frames (want %d), rms %r (want %r), dot %r"
                                 % (chunk, frames, x.shape[0], got["rms"], rms, got["dot_input"]))
    return "rel L2 %.2g, 3 chunkings byte-identical" % err


@case
def verify_checks_the_resampler():
    source(44100)
    p = check_run(["filter", "in.wav", "out.wav", "--lowpass", "8000", "--resample", "48000", "--verify",
                   "--backend", "cpu", "--stats", "s.json"])
    stats = fp.json.load(open("s.json"))
    v = stats.get("verification") or {}
    if not v or not v.get("passed", False):
        raise AssertionError("--verify: %r\n%s" % (v, p.stderr[-400:]))
    return "verify %r" % {k: v[k] for k in v if k != "passed"}


def fails(args, *words):
    p = run(args)
    if p.returncode != 2:
        raise AssertionError("`sigstream %s` exited %d, want 2: %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    for w in words:
        if w not in p.stderr:
            raise AssertionError("message lacks %r: %s" % (w, p.stderr))
    return p.stderr.strip().splitlines()[-1][:120]


@case
def cutoff_above_the_new_nyquist_is_an_error():
    source(48000)
    config("  - {type: resample, to_hz: 16000}\n  - {type: fir, design: {kind: lowpass, cutoff_hz: 9000}}\n")
    return fails(["run", "c.yaml"], "c.yaml:", "9000", "8000")


@case
def ratio_beyond_the_limit_is_an_error():
    source(44100)
    return fails(["filter", "in.wav", "out.wav", "--resample", "44101"], "4096", "44101")


@case
def bad_to_hz_is_an_error():
    source(8000)
    config("  - {type: resample, to_hz: 0}\n")
    return fails(["run", "c.yaml"], "c.yaml:", "to_hz")


@case
def up_without_down_is_an_error():
    source(8000)
    config("  - {type: resample, up: 3}\n")
    return fails(["run", "c.yaml"], "c.yaml:", "down")


def main():
    run_cases(CASES, fp.BIN, "sigstream-resample-")


if __name__ == "__main__":
    main()
