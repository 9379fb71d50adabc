#!/usr/bin/env python3
"""#13's benchmarks, on the GPU machine: batched clips and per-call overhead, sigstream against
PyTorch, torchaudio, CuPy and SciPy in the same run.

Batched clips: 256 x 4 s at 16 kHz float32 on the GPU, causal FIR of K taps. GPU times are CUDA
events around each call (warm-up first, median of --runs), TF32 off; the copy floor is a
device-to-device copy of the same bytes (torch.clone). Accuracy: relative L2 error of each result
against a float64 reference on a few rows.

Call overhead: 1024 samples, K = 63, median over many calls of the wall time a call takes to
return (host clock), with and without a synchronize for the GPU libraries.

    python bench/python_batch.py [--runs 15] [--taps 63,255,1023,4095] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import sigstream


def gpu_median_ms(fn: Callable[[], Any], runs: int, torch: Any) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def host_median_us(fn: Callable[[], Any], calls: int) -> float:
    for _ in range(50):
        fn()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.median(times)


def rel_l2(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(got.astype(np.float64) - ref) / np.linalg.norm(ref))


def batched(args: argparse.Namespace, out: dict[str, Any]) -> None:
    import cupy
    import cupyx.scipy.signal as cps
    import torch
    import torch.nn.functional as F
    import torchaudio.functional as AF

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    clips, n = 256, 4 * 16000
    rng = np.random.default_rng(13)
    host = rng.standard_normal((clips, n)).astype(np.float32)
    x = torch.from_numpy(host).cuda()
    xc = cupy.asarray(host)
    nbytes = 2 * host.nbytes
    copy_ms = gpu_median_ms(lambda: x.clone(), args.runs, torch)
    out["copy_floor_ms"] = copy_ms
    out["copy_floor_gbps"] = nbytes / copy_ms / 1e6
    print(f"batched clips {clips} x {n} float32 ({host.nbytes / 1e6:.1f} MB in): copy floor {copy_ms:.3f} ms "
          f"({nbytes / copy_ms / 1e6:.0f} GB/s)")
    rows_check = [0, 77, 255]
    rows = []
    for k in args.taps:
        h = sigstream.design("lowpass", 4000.0, 16000.0, taps=k)
        h32 = torch.from_numpy(h.astype(np.float32)).cuda()
        ref = np.stack([np.convolve(host[r].astype(np.float64), h)[:n] for r in rows_check])
        w = torch.flip(h32, [0]).view(1, 1, k)
        hc = cupy.asarray(h.astype(np.float32))
        peers: dict[str, Callable[[], Any]] = {
            "torch conv1d": lambda: F.conv1d(F.pad(x.view(clips, 1, n), (k - 1, 0)), w).view(clips, n),
            "torchaudio fftconvolve": lambda: AF.fftconvolve(x, h32.expand(1, k))[:, :n],
            "cupy oaconvolve": lambda: cps.oaconvolve(xc, hc[None, :], axes=1)[:, :n],
            "cupy fftconvolve": lambda: cps.fftconvolve(xc, hc[None, :], axes=1)[:, :n],
        }
        mine: dict[str, Callable[[], Any]] = {
            "sigstream auto": lambda: sigstream.filter(x, h),
            "sigstream direct": lambda: sigstream.filter(x, h, method="direct"),
            "sigstream fft": lambda: sigstream.filter(x, h, method="fft"),
        }
        row: dict[str, Any] = {"taps": k}
        for name, fn in {**peers, **mine}.items():
            ms = gpu_median_ms(fn, args.runs, torch)
            res = fn()
            torch.cuda.synchronize()
            got = res.cpu().numpy() if isinstance(res, torch.Tensor) else cupy.asnumpy(res)
            err = rel_l2(got[rows_check], ref)
            row[name] = {"ms": ms, "rel_l2": err}
        fastest_peer = min(row[p]["ms"] for p in peers)
        auto_ms = row["sigstream auto"]["ms"]
        row["fastest_peer_ms"] = fastest_peer
        row["speedup_vs_fastest_peer"] = fastest_peer / auto_ms
        row["x_copy_floor"] = auto_ms / copy_ms
        row["auto_method"] = sigstream._core.resolve_method("auto", True, k, n, clips)
        rows.append(row)
        print(f"K={k:5d}: " + ", ".join(f"{name} {row[name]['ms']:.3f} ms (err {row[name]['rel_l2']:.1e})"
                                        for name in {**peers, **mine}))
        print(f"         sigstream auto ({row['auto_method']}) = {row['speedup_vs_fastest_peer']:.2f}x the fastest "
              f"peer ({fastest_peer:.3f} ms), {row['x_copy_floor']:.2f}x the copy floor")
    out["batched"] = rows


def overhead(args: argparse.Namespace, out: dict[str, Any]) -> None:
    import scipy.signal as ss

    rng = np.random.default_rng(7)
    x = rng.standard_normal(1024).astype(np.float32)
    h = sigstream.design("lowpass", 1000.0, 16000.0, taps=63)
    res: dict[str, float] = {
        "sigstream numpy (cpu)": host_median_us(lambda: sigstream.filter(x, h), args.calls),
        "scipy lfilter": host_median_us(lambda: ss.lfilter(h, 1.0, x), args.calls),
    }
    try:
        import torch
        import torch.nn.functional as F

        xt = torch.from_numpy(x).cuda()
        w = torch.flip(torch.from_numpy(h.astype(np.float32)).cuda(), [0]).view(1, 1, 63)

        def conv() -> Any:
            return F.conv1d(F.pad(xt.view(1, 1, -1), (62, 0)), w)

        def synced(fn: Callable[[], Any]) -> Callable[[], Any]:
            def run() -> Any:
                r = fn()
                torch.cuda.synchronize()
                return r

            return run

        res["sigstream torch (launch to return)"] = host_median_us(lambda: sigstream.filter(xt, h), args.calls)
        res["sigstream torch + synchronize"] = host_median_us(synced(lambda: sigstream.filter(xt, h)), args.calls)
        res["torch conv1d (launch to return)"] = host_median_us(conv, args.calls)
        res["torch conv1d + synchronize"] = host_median_us(synced(conv), args.calls)
        import cupy

        xc = cupy.asarray(x)
        res["sigstream cupy (launch to return)"] = host_median_us(lambda: sigstream.filter(xc, h), args.calls)
        hc = cupy.asarray(h.astype(np.float32))
        res["cupy convolve (launch to return)"] = host_median_us(lambda: cupy.convolve(xc, hc)[:1024], args.calls)
    except ImportError as e:
        print(f"(GPU peers skipped: {e})", file=sys.stderr)
    out["overhead_us"] = res
    print("call overhead, 1024 samples, K = 63 (median us per call): " +
          ", ".join(f"{k} {v:.1f}" for k, v in res.items()))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--taps", type=lambda s: [int(v) for v in s.split(",")], default=[63, 255, 1023, 4095])
    p.add_argument("--json")
    p.add_argument("--skip-batched", action="store_true")
    args = p.parse_args()
    out: dict[str, Any] = {"sigstream": sigstream.__version__}
    if not args.skip_batched:
        batched(args, out)
    overhead(args, out)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
