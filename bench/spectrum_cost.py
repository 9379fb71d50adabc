#!/usr/bin/env python3
"""What a metrics block's spectrum costs end to end (issue P8, SPEC section 8).

  python3 bench/spectrum_cost.py --bin build/sigstream [--backend cpu|cuda] [--seconds 600] [--runs 5]

Makes a stereo 48 kHz float WAV of --seconds (noise and two tones, by
sigstream's own synth source, in a temporary folder), then runs
`filter`-like configs over it: a 255-tap low-pass FIR and a metrics block
after it, without and with `spectrum: {nfft: 4096, overlap: 0.5}` (and with
two blocks that have one), --runs times each, and prints the median wall
time (the statistics' wall_s), the added time and its share.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--bin", default="build/sigstream")
ap.add_argument("--backend", default="cpu")
ap.add_argument("--seconds", type=float, default=600.0)
ap.add_argument("--runs", type=int, default=5)
args = ap.parse_args()

SPEC = "{nfft: 4096, overlap: 0.5}"


def config(src: str, out: str, stats: str, blocks: int) -> str:
    before = f"  - {{type: metrics, name: before, spectrum: {SPEC}}}\n" if blocks >= 2 else ""
    after = f", spectrum: {SPEC}" if blocks >= 1 else ""
    return (f"version: 1\nsource: {{file: {src}}}\nstages:\n{before}"
            f"  - {{type: fir, design: {{kind: lowpass, cutoff_hz: 3000, taps: 255}}}}\n"
            f"  - {{type: metrics, name: after{after}}}\n"
            f"sink: {{file: {out}}}\nstats: {{json: {stats}}}\nexecution: {{backend: {args.backend}}}\n")


with tempfile.TemporaryDirectory(prefix="spectrum-cost-") as tmp:
    src = os.path.join(tmp, "in.wav")
    frames = int(args.seconds * 48000)
    gen = os.path.join(tmp, "gen.yaml")
    open(gen, "w").write(
        "version: 1\nsource: {synth: {sample_rate: 48000, frames: %d, channels: 2, "
        "tones: [{freq_hz: 50, amplitude: 0.4}, {freq_hz: 7000, amplitude: 0.2}], "
        "noise: {kind: uniform, amplitude: 0.1, seed: 1}}}\nsink: {file: %s, format: float}\n"
        "execution: {backend: cpu}\n" % (frames, src))
    subprocess.run([args.bin, "run", gen], check=True, capture_output=True)
    rows = []
    for blocks in (0, 1, 2):
        path = os.path.join(tmp, f"c{blocks}.yaml")
        stats = os.path.join(tmp, f"s{blocks}.json")
        open(path, "w").write(config(src, os.path.join(tmp, "out.wav"), stats, blocks))
        subprocess.run([args.bin, "run", path], check=True, capture_output=True)  # warm-up
        walls = []
        for _ in range(args.runs):
            subprocess.run([args.bin, "run", path], check=True, capture_output=True)
            walls.append(json.load(open(stats))["timing"]["wall_s"])
        rows.append((blocks, statistics.median(walls), json.load(open(stats))))
    base = rows[0][1]
    print(f"| backend | blocks with a spectrum | wall (median of {args.runs}) | added | share |")
    print("|---|---|---|---|---|")
    for blocks, wall, st in rows:
        print(f"| {st.get('backend', args.backend)} | {blocks} | {wall:.3f} s | {wall - base:+.3f} s | "
              f"{(wall - base) / base * 100:+.1f}% |")
