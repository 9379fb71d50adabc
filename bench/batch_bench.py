#!/usr/bin/env python3
"""Many-file throughput: `sigstream batch` vs one `sigstream filter` process per file
vs the I/O floor.

Usage: bench/batch_bench.py [--bin build/sigstream] [--backend auto|cpu|cuda] [--files 200]
                            [--seconds 30] [--taps 255] [--runs 1] [--jobs N] [--work DIR]
                            [--config io|gpu] [--per-device auto,8] [--devices '0;0,1'] [--skip-loop]

Makes --files stereo 48 kHz 16-bit WAVs of --seconds each (seeded noise, made
once and kept in --work, default bench/work/batch/, git-ignored), warms the page
cache by reading them, then times (best of --runs):
  batch            `sigstream batch cfg.yaml --force --quiet --backend B` (one process, files
                   spread over GPUs / CPU threads; --config io: a --taps-tap low-pass at 3 kHz +
                   metrics, which the file I/O bounds; --config gpu: a 65,536-tap low-pass by the
                   direct method, a 48 k -> 44.1 k resample and a spectrum, which the GPU
                   bounds); one row per
                   --per-device value and per --devices GPU set (execution.device)
  filter loop      `sigstream filter IN OUT --lowpass 3000 --taps 255 --backend B --quiet`,
                   one process per file, one after the other (a shell loop)
  filter xP        the same, --jobs processes at a time (xargs -P; default: CPU count)
  io floor loop    `bench_cpu_io_floor IN OUT` per file, one after the other (read + write
                   through libsndfile, no processing)
  io floor xP      the same, --jobs processes at a time
  cuda start       (--backend cuda, where bench_gpu_start sits beside the floor tool) a CUDA
                   process with no work: driver, a context per GPU of each set, exit
and prints files/s, MB/s of input, each ratio to the batch and to the xP floor's rate.
With --steady, each batch row and the xP floor run once more for their rate once started
(bench/rates.py: the files done between the 10th and the 90th percentile of their completion
times, the batch's from its SIGSTREAM_TRACE=1 commits, the floor's from its processes' ends):
the rate that more files approach, without the fixed start and exit. Every contender writes new files
(its output folder is emptied, untimed, before each run). The batch's
outputs are checked byte for byte against the filter loop's for a few files.
"""
import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import time
import wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rates import commit_times, steady_rate  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--bin", default="build/sigstream", help="the sigstream binary")
ap.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
ap.add_argument("--files", type=int, default=200)
ap.add_argument("--seconds", type=float, default=30.0)
ap.add_argument("--unique", type=int, default=0,
                help="make only this many distinct inputs and hard-link the rest to them (long batches made "
                     "quickly; every contender reads the same page-cached files); 0: every input distinct")
ap.add_argument("--taps", type=int, default=255)
ap.add_argument("--runs", type=int, default=1, help="best of this many runs per contender")
ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes at a time for the xP rows")
ap.add_argument("--work", default="bench/work/batch")
ap.add_argument("--per-device", default="auto",
                help="comma list of --files-per-device values for batch rows ('auto': sigstream's default)")
ap.add_argument("--config", default="io", choices=("io", "gpu"),
                help="io: --taps-tap low-pass + metrics (the file I/O bounds it); gpu: a 65,536-tap low-pass by "
                     "the direct method (~190 G multiply-adds a file), 48 k -> 44.1 k resample and a spectrum "
                     "(the GPU bounds it)")
ap.add_argument("--devices", default="",
                help="semicolon list of GPU sets for extra batch rows, e.g. '0;0,1;0,1,2,3' (execution.device)")
ap.add_argument("--floor", default="", help="the bench_cpu_io_floor binary (default: found beside --bin)")
ap.add_argument("--steady", action="store_true",
                help="one more run of each batch row and of the xP floor for its rate once started "
                     "(files/s between the 10th and 90th percentile of completions)")
ap.add_argument("--skip-loop", action="store_true", help="leave out the per-file `sigstream filter` rows (loop and xP) and the one-process "
                     "floor loop (slow)")
args = ap.parse_args()

sig = os.path.abspath(args.bin)
if not os.access(sig, os.X_OK):
    sys.exit(f"batch_bench: no sigstream binary at {sig} (--bin)")


def find_floor_tool() -> str:
    """bench_cpu_io_floor: --floor, else beside the binary, in its bench/ folder
    (the build tree's layout), in build/bench, or on PATH."""
    if args.floor:
        return os.path.abspath(args.floor)
    here = os.path.dirname(sig)
    for cand in (os.path.join(here, "bench", "bench_cpu_io_floor"), os.path.join(here, "bench_cpu_io_floor"),
                 os.path.join("build", "bench", "bench_cpu_io_floor")):
        if os.access(cand, os.X_OK):
            return os.path.abspath(cand)
    return shutil.which("bench_cpu_io_floor") or os.path.join(here, "bench", "bench_cpu_io_floor")


floor_tool = find_floor_tool()
have_floor = os.access(floor_tool, os.X_OK)
rate, channels = 48000, 2

work = os.path.abspath(args.work)
unique = args.unique if 0 < args.unique < args.files else args.files
src_dir = os.path.join(work, f"in_{args.files}x{args.seconds:g}s" + (f"_u{unique}" if unique < args.files else ""))
os.makedirs(src_dir, exist_ok=True)
names = [f"f{i:0{max(4, len(str(args.files - 1)))}d}.wav" for i in range(args.files)]
frames = int(args.seconds * rate)


def make(name, seed):
    path = os.path.join(src_dir, name)
    if os.path.exists(path) and os.path.getsize(path) >= frames * channels * 2:
        return
    try:
        import numpy as np  # fast when present

        rng = np.random.default_rng(seed)
        t = np.arange(frames) / rate
        tone = 0.3 * np.sin(2 * np.pi * (220 + 10 * (seed % 50)) * t)
        x = tone[:, None] + 0.1 * rng.standard_normal((frames, channels))
        data = (np.clip(x, -1, 1) * 32767).astype("<i2").tobytes()
    except ImportError:
        data = random.Random(seed).randbytes(frames * channels * 2)  # white noise, full scale
    tmp = path + ".part"
    with wave.open(tmp, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data)
    os.replace(tmp, path)


t0 = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as ex:
    list(ex.map(make, names[:unique], range(unique)))
for i in range(unique, args.files):  # hard links to the distinct inputs, in turn
    link = os.path.join(src_dir, names[i])
    if not os.path.exists(link):
        os.link(os.path.join(src_dir, names[i % unique]), link)
inputs = [os.path.join(src_dir, n) for n in names]
in_bytes = sum(os.path.getsize(p) for p in inputs)
print(f"inputs: {args.files} x {args.seconds:g} s stereo 48 kHz pcm16 = {in_bytes / 1e9:.2f} GB in {src_dir} "
      + (f"({unique} distinct, the rest hard links to them) " if unique < args.files else "") +
      f"(ready in {time.monotonic() - t0:.1f} s)")

# Warm the page cache so that every contender reads from memory alike (the links share their pages).
for p in inputs[:unique]:
    with open(p, "rb") as f:
        while f.read(1 << 24):
            pass

cfg = os.path.join(work, "batch_bench.yaml")
with open(cfg, "w") as f:
    f.write("version: 1\n"
            "source: {file: placeholder.wav}\n"
            "stages:\n"
            + (f"  - {{type: fir, name: lp, design: {{kind: lowpass, cutoff_hz: 3000, taps: {args.taps}, "
               "window: hamming}, mode: causal, method: auto}\n"
               "  - {type: metrics, name: after_lp}\n"
               if args.config == "io" else
               "  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 15000, taps: 65536, "
               "window: blackman}, mode: causal, method: direct}\n"
               "  - {type: resample, name: to441, to_hz: 44100}\n"
               "  - {type: metrics, name: out, spectrum: {nfft: 4096}}\n") +
            "sink: {file: placeholder.wav, format: same}\n"
            f"execution: {{backend: {args.backend}}}\n"
            "batch:\n"
            f"  inputs: [\"{src_dir}/*.wav\"]\n"
            f"  out_dir: {os.path.join(work, 'out_batch')}\n"
            "  keep_going: false\n")


def timed(fn, out_dir=None):
    """Best of --runs. `out_dir` (the contender's output folder) is emptied before each run and not
    timed: every contender writes new files (replacing files costs the file system's unlinks too)."""
    best = None
    for _ in range(args.runs):
        if out_dir:
            shutil.rmtree(out_dir, ignore_errors=True)
            os.makedirs(out_dir)
        t = time.monotonic()
        fn()
        s = time.monotonic() - t
        best = s if best is None else min(best, s)
    return best


def check(cmd, env=None):
    """Runs `cmd`; exits on failure; returns its stderr."""
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"batch_bench: {' '.join(cmd)} failed (rc {p.returncode}): {p.stderr[-800:]}")
    return p.stderr


def per_file(make_cmd, out_dir, jobs, done=None):
    """One process per input, `jobs` at a time; each one's end (seconds from the start) into `done`."""
    os.makedirs(out_dir, exist_ok=True)
    cmds = [make_cmd(p, os.path.join(out_dir, os.path.basename(p))) for p in inputs]
    t0 = time.monotonic()

    def one(c):
        check(c)
        if done is not None:
            done.append(time.monotonic() - t0)  # list.append is atomic under the GIL

    if jobs <= 1:
        for c in cmds:
            one(c)
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            list(ex.map(one, cmds))


steady = {}  # contender -> files/s once started (--steady)


def fresh(out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)


def batch_row(name, cmd):
    """A batch contender: best of --runs; with --steady, one traced run more for its rate once started."""
    rows.append((name, timed(lambda: check(cmd), batch_out)))
    if args.steady:
        fresh(batch_out)
        err = check(cmd, env=dict(os.environ, SIGSTREAM_TRACE="1"))
        steady[name] = steady_rate(commit_times(err.splitlines()))


def filter_cmd(i, o):
    return [sig, "filter", i, o, "--lowpass", "3000", "--taps", str(args.taps), "--backend", args.backend,
            "--quiet", "--no-progress"]


def floor_cmd(i, o):
    return [floor_tool, i, o]


rows = []
batch_out = os.path.join(work, "out_batch")
batch_cmd = [sig, "batch", cfg, "--force", "--quiet", "--no-progress", "--backend", args.backend]
for per in args.per_device.split(","):
    batch_row("batch" if per == "auto" else f"batch {per}/gpu",
              batch_cmd + ([] if per == "auto" else ["--files-per-device", per]))
for devs in [d for d in args.devices.split(";") if d]:
    batch_row(f"batch gpus {devs}", batch_cmd + ["--set", f"execution.device=[{devs}]"])
if not args.skip_loop and args.config == "io":
    rows.append(("filter loop", timed(lambda: per_file(filter_cmd, os.path.join(work, "out_loop"), 1),
                                      os.path.join(work, "out_loop"))))
if args.jobs > 1 and not args.skip_loop and args.config == "io":
    rows.append((f"filter x{args.jobs}", timed(lambda: per_file(filter_cmd, os.path.join(work, "out_par"),
                                                                 args.jobs), os.path.join(work, "out_par"))))
if have_floor:
    if not args.skip_loop:
        rows.append(("io floor loop", timed(lambda: per_file(floor_cmd, os.path.join(work, "out_floor"), 1),
                                            os.path.join(work, "out_floor"))))
    if args.jobs > 1:
        floor_out = os.path.join(work, "out_floor")
        rows.append((f"io floor x{args.jobs}", timed(lambda: per_file(floor_cmd, floor_out, args.jobs), floor_out)))
        if args.steady:
            fresh(floor_out)
            ends = []
            per_file(floor_cmd, floor_out, args.jobs, ends)
            steady[f"io floor x{args.jobs}"] = steady_rate(ends)
else:
    print(f"(no {floor_tool}: build the bench target for the I/O floor rows)")
# What a CUDA process pays with no work (driver, contexts, exit): the part of a
# batch's wall that more files amortise and the floor does not pay.
start_tool = os.path.join(os.path.dirname(floor_tool), "bench_gpu_start")
if args.backend == "cuda" and os.access(start_tool, os.X_OK):
    for devs in ["0"] + [d for d in args.devices.split(";") if d and d != "0"]:
        out = subprocess.run([start_tool, "--devices", devs], capture_output=True, text=True).stdout.strip()
        print(f"cuda start, gpus {devs}: {out}")
        rows.append((f"cuda start {devs}", timed(lambda devs=devs: check([start_tool, "--devices", devs]))))

# Same results: the batch's outputs against one filter run per file.
ref_dir = os.path.join(work, "out_loop" if not args.skip_loop else "out_par")
if args.config == "io" and os.path.isdir(ref_dir):
    mismatched = [n for n in names[:5]
                  if open(os.path.join(batch_out, n), "rb").read() != open(os.path.join(ref_dir, n), "rb").read()]
    print("outputs: batch == filter for the first 5 files" if not mismatched else
          f"outputs: batch differs from filter for {mismatched}")

batch_s = rows[0][1]
audio_s = args.files * args.seconds
floor_s = next((s for n, s in rows if n.startswith("io floor x")), None)
print(f"\n{'contender':<20} {'seconds':>9} {'files/s':>9} {'MB/s':>9} {'x real time':>12} {'vs batch':>9} "
      f"{'x floor rate':>13}")
for name, s in rows:
    print(f"{name:<20} {s:9.2f} {args.files / s:9.1f} {in_bytes / s / 1e6:9.1f} {audio_s / s:12.0f} "
          f"{s / batch_s:8.2f}x {(floor_s / s if floor_s else float('nan')):12.2f}x")
if steady:
    floor_rate = next((r for n, r in steady.items() if n.startswith("io floor x")), None)
    print("\nonce started (files/s between the 10th and 90th percentile of completions; the batch's from a\n"
          "traced run, ~10 lines of stderr a file, the floor's untraced)")
    print(f"{'contender':<20} {'files/s':>9} {'x floor':>9}")
    for name, r in steady.items():
        ratio = r / floor_rate if r and floor_rate else float("nan")
        print(f"{name:<20} {(r or float('nan')):9.1f} {ratio:8.2f}x")
what = (f"{args.taps}-tap low-pass" if args.config == "io"
        else "65,536-tap direct low-pass + 44.1 kHz resample + spectrum")
print(f"\nbackend {args.backend}, {what}, best of {args.runs}; 'vs batch' > 1 means slower than the batch")
