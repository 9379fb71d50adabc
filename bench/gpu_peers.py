#!/usr/bin/env python3
"""The same FIR work done by CuPy and PyTorch, timed like bench_gpu_fir.

For N float32 samples (default 2^26) and each K: the median of --reps runs
(CUDA events, after warm-up; 3 runs for a method slower than --slow-ms) of
  cupy_oaconvolve   cupyx.scipy.signal.oaconvolve(x, h)          (overlap-add FFT)
  cupy_convolve     cupyx.scipy.signal.convolve(x, h)            (its auto method)
  cupy_fftconvolve  cupyx.scipy.signal.fftconvolve(x, h)
  torch_conv1d      torch.nn.functional.conv1d (taps flipped: conv1d correlates)
  torch_fft         torch.fft.rfft/irfft of the full length (the 'FFT convolution' a user writes)
Each result is checked against the others (rel L2 <= 1e-4) so a wrong method
cannot win. Prints one line per K: milliseconds per method and the fastest.
With --sigstream FILE (the output of bench_gpu_fir), prints sigstream's kernel
time next to them (the faster of its direct row, "auto", and its FFT row,
"fft", for that K) and the speed-up over the fastest peer.
"""
import argparse
import re
import statistics
import sys

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--taps", default="31,127,255,1023,4095,16383")
ap.add_argument("--log2n", type=int, default=26)
ap.add_argument("--reps", type=int, default=20)
ap.add_argument("--sigstream", help="bench_gpu_fir output to compare with")
ap.add_argument("--slow-ms", type=float, default=100.0,
                help="a method slower than this per call is timed over 3 runs only")
args = ap.parse_args()

import cupy as cp
import cupyx.scipy.signal as cps
import torch

n = 1 << args.log2n
rng = np.random.default_rng(1)
x_host = rng.standard_normal(n).astype(np.float32)
x_cp = cp.asarray(x_host)
x_t = torch.from_numpy(x_host).cuda()


def _median_time(fn, event_pair, elapsed, sync):
    # One timed warm-up first: a method slower than --slow-ms per call (torch's direct
    # conv1d at thousands of taps takes about a second) is timed over 3 runs, not --reps.
    a, b = event_pair()
    a.record()
    fn()
    b.record()
    b.synchronize()
    first = elapsed(a, b)
    reps = args.reps
    if first > args.slow_ms:
        reps = 3
    else:
        for _ in range(2):
            fn()
    sync()
    ts = []
    for _ in range(reps):
        a, b = event_pair()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(elapsed(a, b))
    return statistics.median(ts)


def time_cupy(fn):
    return _median_time(fn, lambda: (cp.cuda.Event(), cp.cuda.Event()),
                        cp.cuda.get_elapsed_time, cp.cuda.Device().synchronize)


def time_torch(fn):
    return _median_time(fn, lambda: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)),
                        lambda a, b: a.elapsed_time(b), torch.cuda.synchronize)


ours = {}  # K -> (ms, method)
if args.sigstream:
    # bench_gpu_fir's FIR rows: method, taps, median ms, Gsamples/s, a percentage. "auto" is
    # the direct kernel's default policy, "fft (fused)" / "fft (cufft)" the FFT method's two
    # engines; other rows (--policies) are direct policies that do not run by default, so they
    # do not count.
    for line in open(args.sigstream):
        m = re.match(r"\s*(auto|fft(?: \((?:fused|cufft)\))?)\s+(\d+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+%", line)
        if m:
            k, ms, how = int(m.group(2)), float(m.group(3)), ("direct" if m.group(1) == "auto" else "fft")
            if k not in ours or ms < ours[k][0]:
                ours[k] = (ms, how)

print(f"# peers: N = 2^{args.log2n} float32, median of {args.reps}, {torch.cuda.get_device_name()}, "
      f"cupy {cp.__version__}, torch {torch.__version__}")
hdr = f"{'K':>6} " + " ".join(f"{m:>16}" for m in
                               ["cupy_oaconvolve", "cupy_convolve", "cupy_fftconvolve", "torch_conv1d", "torch_fft"])
print(hdr + (f" {'sigstream':>10} {'method':>6} {'speed-up':>9}" if ours else ""))
for k in [int(t) for t in args.taps.split(",")]:
    h = (rng.standard_normal(k) / k).astype(np.float32)
    h_cp = cp.asarray(h)
    w = torch.from_numpy(h[::-1].copy()).cuda().view(1, 1, k)
    nfft = 1 << (n + k - 2).bit_length()
    h_t = torch.from_numpy(h).cuda()
    methods = {
        "cupy_oaconvolve": (time_cupy, lambda: cps.oaconvolve(x_cp, h_cp)),
        "cupy_convolve": (time_cupy, lambda: cps.convolve(x_cp, h_cp)),
        "cupy_fftconvolve": (time_cupy, lambda: cps.fftconvolve(x_cp, h_cp)),
        "torch_conv1d": (time_torch, lambda: torch.nn.functional.conv1d(x_t.view(1, 1, n), w, padding=k - 1)),
        "torch_fft": (time_torch, lambda: torch.fft.irfft(torch.fft.rfft(x_t, nfft) * torch.fft.rfft(h_t, nfft), nfft)),
    }
    # All must agree on the full convolution (first n outputs) before they are timed.
    ref = cp.asnumpy(cps.fftconvolve(x_cp[:65536].astype(cp.float64), h_cp.astype(cp.float64)))[:65536]
    times = {}
    for name, (timer, fn) in methods.items():
        out = fn()
        head = (out.flatten()[:65536].cpu().numpy() if isinstance(out, torch.Tensor)
                else cp.asnumpy(out[:65536]))
        err = np.linalg.norm(head - ref) / np.linalg.norm(ref)
        if not err <= 1e-4:
            times[name] = float("nan")
            print(f"# {name} K={k}: rel err {err:.2e}, not timed", file=sys.stderr)
            continue
        try:
            times[name] = timer(fn)
        except Exception as e:  # out of memory for the biggest FFTs, say
            times[name] = float("nan")
            print(f"# {name} K={k}: {e}", file=sys.stderr)
        del out
    fastest = min((t, m) for m, t in times.items() if t == t)
    row = f"{k:>6} " + " ".join(f"{times[m]:>16.3f}" for m in methods)
    if k in ours:
        row += f" {ours[k][0]:>10.3f} {ours[k][1]:>6} {fastest[0] / ours[k][0]:>8.1f}x"
    print(row + f"   fastest peer: {fastest[1]}")
    cp.get_default_memory_pool().free_all_blocks()
    torch.cuda.empty_cache()
