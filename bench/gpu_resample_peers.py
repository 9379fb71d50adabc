#!/usr/bin/env python3
"""Resampling on the GPU, sigstream against its peers in one run (issue P6).

  python3 bench/gpu_resample_peers.py --bin .gpu/bin/bench_gpu_resample [--log2n 26] [--reps 30]

Peers on the same 2^log2n float32 samples, CUDA events, median of --reps
after a warm-up: CuPy's cupyx.scipy.signal.resample_poly(x, up, down) (the
same filter as sigstream's) and torchaudio.functional.resample (its default
sinc filter: another filter, so its accuracy differs), when installed.
sigstream's kernel time and the copy floor come from bench_gpu_resample
(the same run). Prints one row per pair and a markdown table.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess

import cupy as cp

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--bin", required=True)
ap.add_argument("--log2n", type=int, default=26)
ap.add_argument("--reps", type=int, default=30)
ap.add_argument("--pairs", default="48000:44100,44100:48000,48000:16000")
args = ap.parse_args()

try:
    import cupyx.scipy.signal as cps
    have_cupy_rp = hasattr(cps, "resample_poly")
except ImportError:
    have_cupy_rp = False
try:
    import torch
    import torchaudio.functional as taf
except ImportError:
    torch = None
    taf = None


def median_ms(fn, events, sync) -> float:
    for _ in range(3):
        fn()
    sync()
    ts = []
    for _ in range(args.reps):
        a, b = events()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(b_elapsed(a, b))
    return statistics.median(ts)


def b_elapsed(a, b) -> float:
    return cp.cuda.get_elapsed_time(a, b) if isinstance(a, cp.cuda.Event) else a.elapsed_time(b)


ours = {}
out = subprocess.run([args.bin, "--log2n", str(args.log2n), "--reps", str(args.reps), "--pairs", args.pairs],
                     check=True, stdout=subprocess.PIPE, text=True).stdout
for line in out.splitlines():
    r = json.loads(line)
    ours[r["pair"]] = r

n = 1 << args.log2n
rng = cp.random.default_rng(5)
x = rng.uniform(-0.9, 0.9, n).astype(cp.float32)
rows = []
for item in args.pairs.split(","):
    a, b = (int(v) for v in item.split(":"))
    g = math.gcd(a, b)
    up, down = b // g, a // g
    row = {"pair": "%d->%d" % (a, b)}
    mine = ours.get("%g->%g" % (a, b))
    if mine:
        row.update(sigstream_ms=mine["kernel_ms"], copy_floor_ms=mine["copy_floor_ms"], x_floor=mine["x_floor"])
    if have_cupy_rp:
        row["cupy_ms"] = median_ms(lambda: cps.resample_poly(x, up, down), lambda: (cp.cuda.Event(), cp.cuda.Event()),
                                   cp.cuda.Device().synchronize)
    if taf is not None:
        xt = torch.as_tensor(x, device="cuda")
        row["torchaudio_ms"] = median_ms(lambda: taf.resample(xt, a, b),
                                         lambda: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)),
                                         torch.cuda.synchronize)
    peers = [row[k] for k in ("cupy_ms", "torchaudio_ms") if k in row]
    if peers and "sigstream_ms" in row:
        row["x_fastest_peer"] = min(peers) / row["sigstream_ms"]
    rows.append(row)
    print(json.dumps(row), flush=True)

print("\n| pair | sigstream | copy floor | x floor | CuPy resample_poly | torchaudio resample | fastest peer / sigstream |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    f = lambda k: "%.3f ms" % r[k] if k in r else "-"  # noqa: E731
    print("| %s | %s | %s | %s | %s | %s | %s |" % (r["pair"], f("sigstream_ms"), f("copy_floor_ms"),
                                                   "%.2f" % r["x_floor"] if "x_floor" in r else "-",
                                                   f("cupy_ms"), f("torchaudio_ms"),
                                                   "%.1fx" % r["x_fastest_peer"] if "x_fastest_peer" in r else "-"))
