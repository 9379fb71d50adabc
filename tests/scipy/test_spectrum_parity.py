#!/usr/bin/env python3
"""SciPy parity of the metrics stage's spectrum (SPEC section 8).

Usage: python3 tests/scipy/test_spectrum_parity.py PATH_TO_sigstream

Runs a config with a metrics block before and after a low-pass FIR, each
with `spectrum: {nfft, overlap, window}`, over nfft (even, odd), overlaps and
windows, and chunk sizes (one chunk, 1000 and 4097 frames), and checks the
JSON's psd and freq_hz against scipy.signal.welch(x, fs, window,
nperseg=nfft, noverlap=floor(nfft*overlap), detrend=False) of the source and
of the float output file: psd to within 1e-6 of the largest bin (SPEC's
bound; it is ~1e-15 here), freq_hz exactly, and the segment count. The FIR
stage's `response` (for figures) against scipy.signal.freqz and
group_delay of firwin's taps on the same grid: 1e-9 dB and 1e-6 ms (the delay divides by |H|,
which is ~1e-5 in the stop band).

Exit codes: 0 all passed, 1 any failure, 2 usage, 77 SciPy not installed (skip).
"""

import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.signal
except ImportError as e:  # the CTest SKIP_RETURN_CODE
    print(f"SKIP: SciPy/NumPy not available ({e})")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from wavio import read_float_wav  # noqa: E402

TOLERANCE = 1e-6
RATE = 48000
FRAMES = 100003
CONFIG = """version: 1
source: {{synth: {{sample_rate: {rate}, frames: {frames}, channels: 2,
  tones: [{{freq_hz: 1000, amplitude: 0.5}}, {{freq_hz: 9000, amplitude: 0.2}}],
  noise: {{kind: uniform, amplitude: 0.3, seed: 5}}}}}}
stages:
  - {{type: metrics, name: before, spectrum: {spec}}}
  - {{type: fir, design: {{kind: lowpass, cutoff_hz: 3000, taps: 101}}}}
  - {{type: metrics, name: after, spectrum: {spec}}}
sink: {{file: {out}, format: float}}
stats: {{json: {stats}}}
"""
CASES = [(1024, 0.5, "hann", "hann"), (999, 0.3, "hamming", "hamming"),
         (4096, 0.75, "blackman", "blackman"), (257, 0.0, "'kaiser:6.5'", ("kaiser", 6.5))]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    exe = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        cfg_path, out, stats = (os.path.join(tmp, n) for n in ("c.yaml", "o.wav", "s.json"))
        for nfft, overlap, window, scipy_window in CASES:
            spec = f"{{nfft: {nfft}, overlap: {overlap}, window: {window}}}"
            open(cfg_path, "w").write(CONFIG.format(rate=RATE, frames=FRAMES, spec=spec, out=out, stats=stats))
            noverlap = int(np.floor(nfft * overlap))
            for chunk in (1048576, 1000, 4097):
                subprocess.run([exe, "run", cfg_path, "--backend", "cpu", "--set",
                                f"execution.chunk_frames={chunk}"], check=True, capture_output=True)
                blocks = json.load(open(stats))["metrics"]
                y = read_float_wav(out)
                # The source: the same synth through a plain metrics-only run (no FIR).
                if chunk == 1048576:
                    src_cfg = CONFIG.format(rate=RATE, frames=FRAMES, spec=spec, out=out + ".src.wav", stats=stats + ".src")
                    src_cfg = src_cfg.replace("  - {type: fir, design: {kind: lowpass, cutoff_hz: 3000, taps: 101}}\n", "")
                    open(cfg_path + ".src", "w").write(src_cfg)
                    subprocess.run([exe, "run", cfg_path + ".src", "--backend", "cpu"], check=True, capture_output=True)
                    x = read_float_wav(out + ".src.wav")
                for name, sig in (("before", x), ("after", y)):
                    s = blocks[name]["spectrum"]
                    f, p = scipy.signal.welch(sig, RATE, window=scipy_window, nperseg=nfft, noverlap=noverlap,
                                              detrend=False, axis=0)
                    got = np.array(s["psd"]).T
                    err = float(np.max(np.abs(got - p)) / np.max(np.abs(p)))
                    want_segments = (FRAMES - nfft) // (nfft - noverlap) + 1
                    ok = (err <= TOLERANCE and np.array_equal(np.array(s["freq_hz"]), f)
                          and s["segments"] == want_segments and s["nfft"] == nfft)
                    print(f"{'ok  ' if ok else 'FAIL'} nfft {nfft} overlap {overlap} {window} chunk {chunk} "
                          f"{name}: rel err {err:.2e}, segments {s['segments']} (want {want_segments})")
                    failures += not ok
        # The FIR stage's response: firwin(101, 3000, fs=48000) (hamming).
        stage = [st for st in json.load(open(stats))["stages"] if st["type"] == "fir"][0]
        r = stage["response"]
        h = scipy.signal.firwin(101, 3000, fs=RATE)
        f = np.array(r["freq_hz"])
        _, resp = scipy.signal.freqz(h, worN=f, fs=RATE)
        _, gd = scipy.signal.group_delay((h, [1.0]), w=f, fs=RATE)
        mag_err = float(np.max(np.abs(20 * np.log10(np.abs(resp)) - np.array(r["magnitude_db"]))))
        got_gd = np.array([np.nan if v is None else v for v in r["group_delay_ms"]])
        ok_gd = ~np.isnan(got_gd)
        gd_err = float(np.max(np.abs(gd[ok_gd] / RATE * 1000 - got_gd[ok_gd])))
        ok = mag_err < 1e-9 and gd_err < 1e-6 and ok_gd.sum() > len(f) // 2 and f[-1] == RATE / 2
        print(f"{'ok  ' if ok else 'FAIL'} fir response: {len(f)} points, |dB| err {mag_err:.1e}, "
              f"group delay err {gd_err:.1e} ms ({int(ok_gd.sum())} points with a phase)")
        failures += not ok
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
