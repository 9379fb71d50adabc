#!/usr/bin/env python3
"""SciPy parity of `sigstream design` (SPEC section 2, "Filter design").

Usage: python3 tests/scipy/test_design_parity.py PATH_TO_sigstream

Runs `sigstream design (--lowpass HZ | --highpass HZ | --bandpass LO:HI |
--bandstop LO:HI) --rate HZ --taps N --window NAME` over a sweep of kinds,
windows, odd and even tap counts (where the kind allows them), sample rates
and cutoffs, and checks every tap against scipy.signal.firwin(numtaps, cutoff,
window=..., pass_zero=<by kind>, scale=True, fs=rate) to within 1e-12 (times
the largest tap where that exceeds 1; see TOLERANCE).
It also checks that designs SciPy refuses are refused with exit code 2.

Exit codes: 0 all passed, 1 any failure, 2 usage, 77 SciPy not installed (skip).
"""

import concurrent.futures
import os
import subprocess
import sys

try:
    import numpy as np
    import scipy.signal
except ImportError as e:  # the CTest SKIP_RETURN_CODE
    print(f"SKIP: SciPy/NumPy not available ({e})")
    sys.exit(77)

# Absolute, for taps of magnitude <= 1 (every sensible design). A degenerate
# design (say a 15-tap 300-3400 Hz bandstop at 48 kHz, taps up to +-88) divides
# by a nearly cancelled sum, so one ulp of difference between NumPy's SIMD
# sin/cos and the C library's grows with the taps: there it is relative to the
# largest tap. With the same libm the taps are bit-identical.
TOLERANCE = 1e-12
RATES = (8000, 44100, 48000)
# CLI name -> scipy.signal.get_window argument.
WINDOWS = {
    "hamming": "hamming",
    "hann": "hann",
    "blackman": "blackman",
    "rectangular": "boxcar",
    "kaiser:8.6": ("kaiser", 8.6),
    "kaiser:0.5": ("kaiser", 0.5),
}
TAPS = (1, 3, 15, 16, 63, 64, 101, 255, 256, 511)
PASS_ZERO = {"lowpass": True, "highpass": False, "bandpass": False, "bandstop": True}


def hz(x):
    """Shortest text that parses back to the same double ("300", "2205.5")."""
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def cutoffs(kind, rate):
    """A few cutoffs per kind: fixed audio frequencies and fractions of Nyquist."""
    nyq = rate / 2
    if kind in ("lowpass", "highpass"):
        return [[1000.0], [round(0.25 * nyq, 1)], [round(0.9 * nyq, 1)], [123.4]]
    return [[300.0, 3400.0], [round(0.2 * nyq, 1), round(0.6 * nyq, 1)],
            [round(0.45 * nyq, 1), round(0.55 * nyq, 1)]]


def cli_args(kind, cut, rate, taps, window):
    value = hz(cut[0]) if len(cut) == 1 else f"{hz(cut[0])}:{hz(cut[1])}"
    return ["design", f"--{kind}", value, "--rate", str(rate), "--taps", str(taps),
            "--window", window]


def cases():
    for rate in RATES:
        for kind in PASS_ZERO:
            for cut in cutoffs(kind, rate):
                for window in WINDOWS:
                    for taps in TAPS:
                        if kind in ("highpass", "bandstop") and taps % 2 == 0:
                            continue  # SciPy refuses these; see refusal_cases()
                        if window == "hann" and taps < 3:
                            continue  # hann(1) is trivial, hann(2) is all zeros
                        yield kind, cut, rate, taps, window


def run_parity(binary, case):
    kind, cut, rate, taps, window = case
    args = cli_args(kind, cut, rate, taps, window)
    label = " ".join(args)
    proc = subprocess.run([binary] + args, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return False, f"{label}: exit {proc.returncode}: {proc.stderr.strip()[:300]}"
    try:
        got = np.array([float(t) for t in proc.stdout.split()])
    except ValueError as e:
        return False, f"{label}: unparsable output ({e})"
    want = scipy.signal.firwin(taps, cut if len(cut) > 1 else cut[0], window=WINDOWS[window],
                               pass_zero=PASS_ZERO[kind], scale=True, fs=rate)
    if got.shape != want.shape:
        return False, f"{label}: {got.size} taps, expected {want.size}"
    diff = float(np.max(np.abs(got - want))) if got.size else 0.0
    scale = max(1.0, float(np.max(np.abs(want))))
    if not diff <= TOLERANCE * scale:
        return False, f"{label}: max abs difference {diff:.3g} > {TOLERANCE * scale:.3g}"
    return True, diff / scale


def refusal_cases():
    """Designs SciPy raises ValueError for; the CLI must exit 2 (configuration error)."""
    return [
        ("highpass", [1000.0], 8000, 254, "hamming"),   # even taps, gain at Nyquist
        ("bandstop", [1000.0, 2000.0], 8000, 64, "hann"),
        ("lowpass", [4000.0], 8000, 31, "hamming"),     # cutoff at Nyquist
        ("lowpass", [9000.0], 16000, 31, "hamming"),    # above Nyquist
        ("highpass", [0.0], 44100, 31, "blackman"),     # cutoff 0
        ("bandpass", [3000.0, 1000.0], 48000, 31, "kaiser:8.6"),  # edges decreasing
        ("bandpass", [1000.0, 1000.0], 48000, 31, "hamming"),     # edges equal
    ]


def run_refusal(binary, case):
    kind, cut, rate, taps, window = case
    try:
        scipy.signal.firwin(taps, cut if len(cut) > 1 else cut[0], window=WINDOWS[window],
                            pass_zero=PASS_ZERO[kind], scale=True, fs=rate)
        return False, f"test bug: scipy accepts {case}"
    except ValueError:
        pass
    args = cli_args(kind, cut, rate, taps, window)
    proc = subprocess.run([binary] + args, capture_output=True, text=True, timeout=60)
    label = " ".join(args)
    if proc.returncode != 2:
        return False, f"{label}: exit {proc.returncode}, expected 2 (SciPy refuses it)"
    if not proc.stderr.strip():
        return False, f"{label}: exit 2 but no message on stderr"
    return True, 0.0


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} PATH_TO_sigstream", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print(f"FAIL: {binary} is not an executable file", file=sys.stderr)
        return 1

    jobs = [(run_parity, c) for c in cases()] + [(run_refusal, c) for c in refusal_cases()]
    passed, failures, worst = 0, [], 0.0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        for ok, detail in pool.map(lambda job: job[0](binary, job[1]), jobs):
            if ok:
                passed += 1
                worst = max(worst, detail)
            else:
                failures.append(detail)

    for f in failures[:25]:
        print(f"FAIL: {f}")
    if len(failures) > 25:
        print(f"... and {len(failures) - 25} more failures")
    print(f"{passed} passed, {len(failures)} failed (max abs difference to SciPy "
          f"{worst:.3g} in units of max(1, largest tap), tolerance {TOLERANCE:g}; "
          f"numpy {np.__version__}, scipy {scipy.__version__})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
