#!/usr/bin/env python3
"""Live latency of sigstream and its peers (issue P5's harness).

A paced producer writes raw s16le at real time into the filter's stdin, one
write per block (48 frames = 1 ms at 48 kHz); a consumer reads its stdout and
timestamps each read. For each read, take its earliest frame n: latency = the
read's return time - the return time of the producer's write that held input
frame n (causal filters: a filter's own group delay is not charged). Reported:
p50/p99/p99.9/max over the run, frames lost, the filter's CPU use, and for
sigstream the statistics' own latency_ms.

  bench/live_latency.py --bin build/sigstream --seconds 120 --taps 4095 --peers sigstream,brutefir,ffmpeg,sox
  bench/live_latency.py --bin .gpu/bin/sigstream --channels 32 --taps 65536 --backend cuda --seconds 600
  bench/live_latency.py ... --pacer-cpus 0-1 --filter-cpus 2-3   (the clock and the filter on their own cores)
  bench/live_latency.py ... --busy-poll   (sigstream spins on its input and output instead of sleeping)
  bench/live_latency.py ... --redundant   (two sigstream lanes compute every block, the first writes it)
  bench/live_latency.py ... --harness-spin   (the C++ clock's producer and consumer spin instead of sleeping)

The clock is bench_live_pace (bench/live_pace.cpp: C++, absolute-deadline
writes, real-time priority where granted), found next to --bin or given with
--pacer; without it, a Python producer and a consumer process do the same
with a noisier tail of their own. Standard library only (NumPy is not
needed). Peers that are not installed are skipped with a note.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field


@dataclass
class Result:
    name: str
    taps: int
    p50: float = math.nan
    p99: float = math.nan
    p999: float = math.nan
    max: float = math.nan
    frames_in: int = 0
    frames_out: int = 0
    cpu_percent: float = math.nan
    stats_latency: dict | None = None
    note: str = ""
    reads: int = 0
    extra: dict = field(default_factory=dict)


def lowpass_taps(k: int, rate: float, cutoff: float = 4000.0) -> list[float]:
    """Windowed-sinc low-pass (Hamming), like firwin; plain Python."""
    m = k - 1
    fc = cutoff / rate
    taps = []
    for i in range(k):
        x = i - m / 2
        s = 2 * fc if x == 0 else math.sin(2 * math.pi * fc * x) / (math.pi * x)
        w = 0.54 - 0.46 * math.cos(2 * math.pi * i / m) if m > 0 else 1.0
        taps.append(s * w)
    g = sum(taps)
    return [t / g for t in taps]


def quantile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    i = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[i]


def consume(fd: int, stdin_fd: int, conn) -> None:
    """The consumer process: read until EOF, timestamp every read."""
    os.close(stdin_fd)  # the filter's stdin belongs to the producer: EOF must reach it
    reads = []
    total = 0
    while True:
        data = os.read(fd, 1 << 16)
        t = time.perf_counter()
        if not data:
            break
        reads.append((t, total))
        total += len(data)
    reads.append((time.perf_counter(), total))  # the end: total bytes
    conn.send(reads)
    conn.close()


# CPU lists for taskset (empty: no pinning); set from the command line.
PIN = {"pacer": "", "filter": ""}


def measure_paced(pacer: str, cmd: list[str], name: str, taps: int, seconds: float, channels: int, rate: int,
                  block: int, stats_path: str | None = None, spin: bool = False) -> Result:
    """One run through the C++ pacer (bench/live_pace.cpp)."""
    err_path = os.path.join(tempfile.gettempdir(), "live-latency-%d.err" % os.getpid())
    # Optional CPU pinning (--pacer-cpus, --filter-cpus): taskset around the pacer, and
    # around the filter it starts (an exec'd taskset overrides the affinity it inherits).
    pin_pacer = ["taskset", "-c", PIN["pacer"]] if PIN["pacer"] else []
    pin_filter = ["taskset", "-c", PIN["filter"]] if PIN["filter"] else []
    out = subprocess.run([*pin_pacer, pacer, "--seconds", str(seconds), "--rate", str(rate), "--channels",
                          str(channels), "--block", str(block), "--stderr", err_path, *(["--spin"] if spin else []),
                          "--", *pin_filter, *cmd],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    m = json.loads(out)
    r = Result(name, taps)
    r.p50, r.p99, r.p999, r.max = m["p50"], m["p99"], m["p999"], m["max"]
    r.reads, r.frames_in, r.frames_out = m["reads"], m["frames_in"], m["frames_out"]
    r.cpu_percent = 100.0 * m["cpu_s"] / m["wall_s"]
    r.extra = {"harness_rt": m["harness_rt"], "harness_mlock": m["harness_mlock"],
               "harness_spin": m.get("harness_spin", False)}
    with open(err_path, "rb") as f:
        log = f.read().decode(errors="replace")
    # sigstream's own live lines (blocks, late split, preemptions), not its metrics print.
    r.extra["log_live"] = [line for line in log.splitlines() if "live:" in line or "warning" in line]
    # With SIGSTREAM_TRACE=1 in the environment: each late block's story.
    r.extra["late_blocks"] = [line for line in log.splitlines() if "trace: late block" in line]
    if m["exit"] != 0:
        r.note = "exit %d: %s" % (m["exit"], log[-300:])
    os.unlink(err_path)
    if stats_path and os.path.exists(stats_path):
        with open(stats_path) as f:
            r.stats_latency = json.load(f).get("latency_ms")
    return r


def find_pacer(explicit: str, binary: str) -> str | None:
    if explicit:
        return explicit if explicit != "none" else None
    here = os.path.dirname(os.path.abspath(binary))
    for c in (os.path.join(here, "bench", "bench_live_pace"), os.path.join(here, "bench_live_pace")):
        if os.access(c, os.X_OK):
            return c
    return None


def measure(cmd: list[str], name: str, taps: int, seconds: float, channels: int, rate: int,
            block: int, stats_path: str | None = None) -> Result:
    frame_bytes = 2 * channels
    write_bytes = block * frame_bytes
    n_writes = int(seconds * rate / block)
    # A quiet noise signal, the same every write (content does not matter here).
    payload = struct.pack("<%dh" % (block * channels), *[(i * 7919) % 2001 - 1000 for i in range(block * channels)])
    write_done = [0.0] * n_writes
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t_start = time.perf_counter()
    err_path = os.path.join(tempfile.gettempdir(), "live-latency-%d.err" % os.getpid())
    with open(err_path, "wb") as err_file:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file)
    # The consumer is a process of its own (fork), so that it never waits for
    # the producer's interpreter lock: it timestamps each read (CLOCK_MONOTONIC,
    # the same clock in both processes) and sends the list back at the end.
    parent_end, child_end = multiprocessing.Pipe(duplex=False)
    consumer = multiprocessing.get_context("fork").Process(target=consume, args=(p.stdout.fileno(), p.stdin.fileno(), child_end))
    consumer.start()
    p.stdout.close()
    child_end.close()
    time.sleep(0.5)  # let the filter start (config, FFT plans, devices) before the clock runs
    fd = p.stdin.fileno()
    period = block / rate
    t0 = time.perf_counter()
    try:
        for i in range(n_writes):
            deadline = t0 + i * period
            delay = deadline - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            os.write(fd, payload)
            write_done[i] = time.perf_counter()
    except BrokenPipeError:
        pass
    p.stdin.close()
    reads: list[tuple[float, int]] = parent_end.recv()
    consumer.join()
    p.wait()
    wall = time.perf_counter() - t_start
    usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    err_chunks = [open(err_path, "rb").read()]
    os.unlink(err_path)
    r = Result(name, taps)
    r.frames_in = n_writes * block
    total_out = reads[-1][1] if reads else 0
    r.frames_out = total_out // frame_bytes
    lat = []
    for t, before in reads[:-1]:
        n = before // frame_bytes
        w = n // block
        if w < n_writes and write_done[w] > 0:
            lat.append((t - write_done[w]) * 1000.0)
    lat.sort()
    r.reads = len(lat)
    r.p50, r.p99, r.p999 = quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 0.999)
    r.max = lat[-1] if lat else math.nan
    cpu = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    r.cpu_percent = 100.0 * cpu / wall
    if p.returncode != 0:
        r.note = "exit %d: %s" % (p.returncode, b"".join(err_chunks).decode(errors="replace")[-300:])
    if stats_path and os.path.exists(stats_path):
        r.stats_latency = json.load(open(stats_path)).get("latency_ms")
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/sigstream")
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--taps", default="4095,65536")
    ap.add_argument("--channels", type=int, default=2)
    ap.add_argument("--rate", type=int, default=48000)
    ap.add_argument("--latency", type=float, default=1.0, help="sigstream --latency, ms")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--busy-poll", action="store_true", help="sigstream --busy-poll (spin instead of sleeping)")
    ap.add_argument("--redundant", action="store_true",
                    help="sigstream --redundant (two spinning lanes compute every block, the first writes it)")
    ap.add_argument("--peers", default="sigstream,brutefir,ffmpeg,sox")
    ap.add_argument("--iir", type=int, default=0,
                    help="sigstream runs `--highpass 80 --iir ORDER` (an iir stage) in place of the taps")
    ap.add_argument("--sox-taps", default="255,4095,65536", help="SoX runs these (its latency grows with K)")
    ap.add_argument("--json", default="", help="write the results here too")
    ap.add_argument("--pacer", default="", help="bench_live_pace binary (default: next to --bin); 'none': Python")
    ap.add_argument("--harness-spin", action="store_true",
                    help="the C++ clock's producer and consumer spin instead of sleeping (bench_live_pace --spin)")
    ap.add_argument("--pacer-cpus", default="", help="taskset CPU list for the pacer (C++ clock only), e.g. 0-1")
    ap.add_argument("--filter-cpus", default="", help="taskset CPU list for the filter under test, e.g. 2-3")
    args = ap.parse_args()
    PIN["pacer"], PIN["filter"] = args.pacer_cpus, args.filter_cpus
    if (args.pacer_cpus or args.filter_cpus) and not shutil.which("taskset"):
        print("--pacer-cpus/--filter-cpus need taskset (util-linux)", file=sys.stderr)
        return 2
    pacer = find_pacer(args.pacer, args.bin)
    if args.harness_spin and not pacer:
        print("--harness-spin needs the C++ clock (bench_live_pace)", file=sys.stderr)
        return 2
    print("clock: %s" % (pacer or "Python producer + consumer process"), flush=True)
    block = max(1, round(args.latency * args.rate / 1000))
    results: list[Result] = []
    work = tempfile.mkdtemp(prefix="live-latency-")
    main_taps = [int(x) for x in args.taps.split(",") if x]
    sox_taps = [int(x) for x in args.sox_taps.split(",") if x] if "sox" in args.peers else []
    for k in sorted(set(main_taps) | set(sox_taps)):
        taps = lowpass_taps(k, args.rate)
        tfile = os.path.join(work, "taps%d.txt" % k)
        with open(tfile, "w") as f:
            f.write("".join("%.17g\n" % t for t in taps))
        ch = args.channels
        runs: list[tuple[str, list[str], str | None]] = []
        in_main = k in main_taps
        if "sigstream" in args.peers and in_main:
            stats = os.path.join(work, "s%d.json" % k)
            runs.append(("sigstream", [args.bin, "filter", "-", "-", "--input-type", "raw", "--rate", str(args.rate),
                                       "--channels", str(ch), "--encoding", "s16le", "--type", "raw",
                                       *(["--highpass", "80", "--iir", str(args.iir)] if args.iir
                                         else ["--taps-file", tfile]),
                                       "--latency", str(args.latency), "--backend",
                                       args.backend, "--stats", stats, "--no-progress",
                                       *(["--busy-poll"] if args.busy_poll else []),
                                       *(["--redundant"] if args.redundant else [])], stats))
        if "brutefir" in args.peers and in_main and shutil.which("brutefir") and ch == 2:
            coeff = os.path.join(work, "c%d.raw" % k)
            with open(coeff, "wb") as f:
                f.write(struct.pack("<%df" % k, *taps))
            part = 64
            cfg = os.path.join(work, "bf%d.conf" % k)
            with open(cfg, "w") as f:
                f.write('sampling_rate: %d;\nfilter_length: %d,%d;\nfloat_bits: 32;\noverflow_warnings: false;\n'
                        'show_progress: false;\nlock_memory: false;\nmodules_path: "/usr/lib/x86_64-linux-gnu/brutefir";\n'
                        'convolver_config: "%s/wisdom";\npowersave: false;\nallow_poll_mode: false;\nmonitor_rate: false;\n'
                        'coeff "c" { filename: "%s"; format: "FLOAT_LE"; };\n'
                        'input "l", "r" { device: "file" { path: "/dev/stdin"; }; sample: "S16_LE"; channels: 2; };\n'
                        'output "l", "r" { device: "file" { path: "/dev/stdout"; }; sample: "S16_LE"; channels: 2; dither: false; };\n'
                        'filter "fl" { from_inputs: "l"; to_outputs: "l"; coeff: "c"; };\n'
                        'filter "fr" { from_inputs: "r"; to_outputs: "r"; coeff: "c"; };\n'
                        % (args.rate, part, (k + part - 1) // part, work, coeff))
            runs.append(("brutefir (64-frame partitions)", ["brutefir", "-nodefault", "-quiet", cfg], None))
        if "ffmpeg" in args.peers and in_main and shutil.which("ffmpeg"):
            ir = os.path.join(work, "ir%d.f32" % k)
            with open(ir, "wb") as f:
                f.write(struct.pack("<%df" % k, *taps))
            runs.append(("ffmpeg afir minp=64", [
                "ffmpeg", "-v", "error", "-fflags", "nobuffer", "-probesize", "32", "-analyzeduration", "0", "-f", "s16le", "-ar", str(args.rate), "-ac", str(ch),
                "-i", "pipe:0", "-f", "f32le", "-ar", str(args.rate), "-ac", "1", "-i", ir, "-filter_complex",
                "[0:a][1:a]afir=gtype=none:minp=64:maxp=%d[o]" % max(64, min(k, 8192)), "-map", "[o]",
                "-flush_packets", "1", "-f", "s16le", "pipe:1"], None))
        if k in sox_taps and shutil.which("sox"):
            runs.append(("sox fir (--buffer 256)", ["sox", "--buffer", "256", "-q", "-t", "raw", "-r", str(args.rate),
                                                     "-e", "signed", "-b", "16", "-c", str(ch), "-", "-t", "raw", "-",
                                                     "fir", tfile], None))
        for name, cmd, stats in runs:
            if pacer:
                r = measure_paced(pacer, cmd, name, k, args.seconds, ch, args.rate, block, stats, args.harness_spin)
            else:
                r = measure(cmd, name, k, args.seconds, ch, args.rate, block, stats)
            results.append(r)
            print("%-32s K=%-6d p50 %8.3f ms  p99 %8.3f  p99.9 %8.3f  max %8.3f  lost %d  cpu %5.1f%%%s%s" % (
                name, k, r.p50, r.p99, r.p999, r.max, r.frames_in - r.frames_out, r.cpu_percent,
                "  stats %s" % r.stats_latency if r.stats_latency else "", "  " + r.note if r.note else ""),
                flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.__dict__ for r in results], f, indent=1)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
