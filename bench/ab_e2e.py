#!/usr/bin/env python3
"""A/B end to end: two sigstream binaries and the I/O floor, round robin, on
the 10-minute stereo WAV that bench/e2e_gpu.py makes (new output files).
Usage: bench/ab_e2e.py --bin DIR A B [--runs N] [--taps K]"""
import argparse, os, statistics, subprocess, time, sys
sys.path.insert(0, os.path.dirname(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--bin", required=True)
ap.add_argument("a"); ap.add_argument("b")
ap.add_argument("--runs", type=int, default=9)
ap.add_argument("--taps", type=int, default=255)
ap.add_argument("--work", default="/tmp/sigstream-e2e")
args = ap.parse_args()
src = os.path.join(args.work, "in.wav")
if not os.path.exists(src):
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "e2e_gpu.py"), "--bin", args.bin,
                    "--runs", "1"], check=True, stdout=subprocess.DEVNULL)
cmds = {"floor": [os.path.join(args.bin, "bench_cpu_io_floor"), src, os.path.join(args.work, "ab_copy.wav")]}
for name in (args.a, args.b):
    cmds[name] = [os.path.join(args.bin, name), "filter", src, os.path.join(args.work, f"ab_{name}.wav"),
                  "--lowpass", "3000", "--taps", str(args.taps), "--quiet"]
times = {n: [] for n in cmds}
for _ in range(args.runs):
    for n, c in cmds.items():
        out = c[3] if n != "floor" else c[2]
        if os.path.exists(out):
            os.remove(out)
        os.sync()
        t0 = time.perf_counter()
        subprocess.run(c, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[n].append(time.perf_counter() - t0)
f = statistics.median(times["floor"])
for n, r in times.items():
    m = statistics.median(r)
    print(f"{n:16s} median {m:.3f} s  {m / f:.2f}x floor  runs {' '.join(f'{x:.3f}' for x in r)}")
