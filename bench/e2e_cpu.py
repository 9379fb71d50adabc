#!/usr/bin/env python3
"""End-to-end CPU timing: sigstream vs SoX `fir` vs FFmpeg `afir` vs the I/O floor.

Usage: bench/e2e_cpu.py [--sigstream build/sigstream] [--minutes 10] [--taps 255] [--runs 3]
                        [--method auto|direct|fft] [--threads N]

Makes a stereo 48 kHz 16-bit WAV of the given length (pink noise + tones, made
by SoX), designs a low-pass at 3 kHz with `sigstream design`, and times, each
the median of --runs runs, in the same session:
  floor      `sox in.wav copy.wav`  (read + write, no processing)
  sigstream  `sigstream filter in.wav out.wav --taps-file taps.txt --backend cpu --method M`
  sox        `sox in.wav out.wav fir taps.txt` (SoX's fir convolves by FFT itself)
  ffmpeg     `ffmpeg -i in.wav -i ir.wav -lavfi afir=gtype=none out.wav`, default threads and
             `-threads 1 -filter_threads 1` (one thread)
round robin (every command once per round), and prints the ratios, each
command's CPU time and the load other processes put on the machine meanwhile
(a run under load is flagged). Needs sox and ffmpeg (apt-get install sox ffmpeg).
Files go to bench/work/ (git-ignored).
"""
import argparse
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import time
import wave

ap = argparse.ArgumentParser()
ap.add_argument("--sigstream", default="build/sigstream")
ap.add_argument("--minutes", type=float, default=10.0)
ap.add_argument("--taps", type=int, default=255)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--work", default="bench/work")
ap.add_argument("--threads", default="", help="sigstream CPU threads (default: all)")
ap.add_argument("--also", default="", help="a second sigstream binary timed in the same rounds "
                "(e.g. a -DSIGSTREAM_FFTW=ON build), reported as 'sigstream cpu (also)'")
ap.add_argument("--method", default="auto", choices=("auto", "direct", "fft"),
                help="sigstream FIR method (default: auto)")
args = ap.parse_args()

for tool in ("sox", "ffmpeg"):
    if shutil.which(tool) is None:
        sys.exit(f"e2e_cpu: needs {tool} (apt-get install sox ffmpeg)")
os.makedirs(args.work, exist_ok=True)
w = lambda name: os.path.join(args.work, name)
sig = os.path.abspath(args.sigstream)

src = w(f"in_{args.minutes:g}min.wav")
if not os.path.exists(src):
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", src, "synth", str(args.minutes * 60),
                    "pinknoise", "sine", "440", "gain", "-6"], check=True)
taps = subprocess.run([sig, "design", "--lowpass", "3000", "--rate", "48000", "--taps", str(args.taps)],
                      check=True, capture_output=True, text=True).stdout.split()
with open(w("taps.txt"), "w") as f:
    f.write("\n".join(taps) + "\n")
# FFmpeg's afir takes the response as audio: a stereo float WAV of the taps.
with open(w("ir.wav"), "wb") as f:
    data = b"".join(struct.pack("<ff", float(t), float(t)) for t in taps)
    hdr = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 3, 2, 48000,
                      48000 * 8, 8, 32, b"data", len(data))
    f.write(hdr + data)

sig_cmd = [sig, "filter", src, w("out_sig.wav"), "--taps-file", w("taps.txt"), "--backend", "cpu",
           "--method", args.method, "--quiet"]
if args.threads:
    cfg = w("cpu_threads.yaml")
    with open(cfg, "w") as f:
        f.write(f"version: 1\nsource: {{file: {src}}}\nstages:\n  - type: fir\n    taps_file: {w('taps.txt')}\n"
                f"    method: {args.method}\n"
                f"sink: {{file: {w('out_sig.wav')}}}\nexecution: {{backend: cpu, threads: {args.threads}}}\n")
    sig_cmd = [sig, "run", cfg, "--quiet"]
floor_tool = os.path.join(os.path.dirname(sig), "bench", "bench_cpu_io_floor")
cmds = {
    "floor (sox copy)": ["sox", src, w("copy.wav")],
    "sigstream cpu": sig_cmd,
    "sox fir": ["sox", src, w("out_sox.wav"), "fir", w("taps.txt")],
    "ffmpeg afir": ["ffmpeg", "-v", "error", "-y", "-i", src, "-i", w("ir.wav"), "-lavfi", "afir=gtype=none",
                    "-c:a", "pcm_s16le", w("out_ff.wav")],
    "ffmpeg afir 1 thread": ["ffmpeg", "-v", "error", "-y", "-threads", "1", "-filter_threads", "1", "-i", src,
                             "-i", w("ir.wav"), "-lavfi", "afir=gtype=none", "-c:a", "pcm_s16le", w("out_ff1.wav")],
}
if os.path.exists(floor_tool):
    cmds["floor (libsndfile copy)"] = [floor_tool, src, w("copy2.wav")]
if args.also:
    also = os.path.abspath(args.also)
    ver = subprocess.run([also, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# also: {also}: {ver}")
    cmds["sigstream cpu (also)"] = [also if a == sig else a.replace("out_sig.wav", "out_also.wav")
                                    for a in sig_cmd]
def busy_s():
    """CPU seconds the whole machine has spent busy (all processes, all cores), from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(t) for t in f.readline().split()[1:]]
    except OSError:
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)  # idle + iowait
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def child_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# Round robin (one run of every command, then the next round), so that load
# from elsewhere on the machine falls on every command alike. Each run also
# records its own CPU time (user + system) and the CPU that others used
# meanwhile ("other load", in cores): on a shared machine a 2-thread program
# loses most to a busy neighbour, so a run under load is flagged.
walls = {name: [] for name in cmds}
cpus = {name: [] for name in cmds}
others = {name: [] for name in cmds}
for _ in range(args.runs):
    for name, cmd in cmds.items():
        b0, c0, t0 = busy_s(), child_cpu_s(), time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        cpu = child_cpu_s() - c0
        walls[name].append(wall)
        cpus[name].append(cpu)
        if b0 is not None:
            others[name].append(max(0.0, busy_s() - b0 - cpu) / wall)
times = {name: statistics.median(v) for name, v in walls.items()}

with wave.open(src) as f:
    frames = f.getnframes()
print(f"# {args.minutes:g} min stereo 48 kHz pcm16 ({frames} frames), {args.taps} taps, "
      f"sigstream method {args.method}, median of {args.runs} (round robin), {os.cpu_count()} cores")
floor = times["floor (sox copy)"]
print(f"{'command':24s} {'wall':>8s}   {'Mframes/s':>9s}   {'vs floor':>8s}   {'cpu':>7s}   "
      f"{'other load':>10s}   runs")
for name, t in times.items():
    runs = " ".join(f"{r:.3f}" for r in walls[name])
    other = f"{max(others[name]):.2f} cores" if others[name] else "n/a"
    print(f"{name:24s} {t:7.3f}s   {frames / t / 1e6:9.1f}   {t / floor:7.2f}x   "
          f"{statistics.median(cpus[name]):6.3f}s   {other:>10s}   {runs}")
ours = times["sigstream cpu"]
print(f"sigstream vs sox fir: {times['sox fir'] / ours:.2f}x faster; "
      f"vs ffmpeg afir: {times['ffmpeg afir'] / ours:.2f}x; "
      f"vs ffmpeg afir 1 thread: {times['ffmpeg afir 1 thread'] / ours:.2f}x")
if args.also:
    a = times["sigstream cpu (also)"]
    print(f"sigstream (also) vs sox fir: {times['sox fir'] / a:.2f}x faster; "
          f"vs ffmpeg afir: {times['ffmpeg afir'] / a:.2f}x; "
          f"vs ffmpeg afir 1 thread: {times['ffmpeg afir 1 thread'] / a:.2f}x")
worst = max((max(v) for v in others.values() if v), default=0.0)
if worst > 0.2:
    print(f"warning: other processes used up to {worst:.2f} cores during some runs; timings are not clean")
