"""GPU IIR peers for issue P13, on the GPU machine: CuPy's sosfilt and
torchaudio's lfilter (one call per section: a cascade of biquads, as a user
runs sections) on the shapes of bench_gpu_iir (one channel of 2^26 float32
samples; 256 clips x 4 s at 48 kHz), with the same sections
(scipy.signal.butter(order, [300, 3400], "bandpass", fs=48000,
output="sos")). CUDA events, a warm-up, the median of --reps runs (fewer for
a peer slower than --slow-s a run). One JSON object per line.

    python bench/gpu_iir_peers.py [--reps 10] [--order 4]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.signal

SHAPES: list[tuple[str, int, int]] = [("long_2^26", 1, 1 << 26), ("clips_256x4s", 256, 192000)]


def median_ms(run: Callable[[], Any], sync: Callable[[], None], event: Any, reps: int, slow_s: float) -> tuple[float, int]:
    run()
    sync()
    times: list[float] = []
    t_all = time.perf_counter()
    for _ in range(reps):
        start, stop = event(), event()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(float(start_stop_ms(start, stop)))
        if time.perf_counter() - t_all > slow_s:
            break
    return statistics.median(times), len(times)


def start_stop_ms(start: Any, stop: Any) -> float:
    if hasattr(start, "elapsed_time"):  # torch
        return float(start.elapsed_time(stop))
    import cupy

    return float(cupy.cuda.get_elapsed_time(start, stop))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--order", type=int, default=4)
    ap.add_argument("--slow-s", type=float, default=20.0)
    args = ap.parse_args()
    sos = scipy.signal.butter(args.order, [300, 3400], "bandpass", fs=48000, output="sos")
    rng = np.random.default_rng(7)
    for name, channels, frames in SHAPES:
        x = rng.uniform(-0.9, 0.9, size=(channels, frames)).astype(np.float32)
        row: dict[str, Any] = {"bench": "gpu_iir_peers", "shape": name, "channels": channels,
                               "frames": frames, "sections": int(sos.shape[0])}
        try:
            import cupy
            import cupyx.scipy.signal as cs

            cx = cupy.asarray(x)
            csos = cupy.asarray(sos)
            ms, n = median_ms(lambda: cs.sosfilt(csos, cx, axis=-1), cupy.cuda.Device().synchronize,
                              lambda: cupy.cuda.Event(), args.reps, args.slow_s)
            row["cupy_sosfilt_ms"], row["cupy_runs"] = round(ms, 4), n
            del cx
        except Exception as e:  # noqa: BLE001 - a peer missing is reported, not fatal
            row["cupy_error"] = repr(e)[:200]
        try:
            import torch
            import torchaudio.functional as taf

            tx = torch.from_numpy(x).cuda()
            tsos = torch.from_numpy(sos).float().cuda()

            def cascade() -> Any:
                y = tx
                for k in range(tsos.shape[0]):
                    y = taf.lfilter(y, tsos[k, 3:], tsos[k, :3], clamp=False)
                return y

            ms, n = median_ms(cascade, torch.cuda.synchronize,
                              lambda: torch.cuda.Event(enable_timing=True), args.reps, args.slow_s)
            row["torchaudio_lfilter_ms"], row["torchaudio_runs"] = round(ms, 4), n
        except Exception as e:  # noqa: BLE001
            row["torchaudio_error"] = repr(e)[:200]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
