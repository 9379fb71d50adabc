#!/usr/bin/env python3
"""Soak (issue P10): a long run at full speed, with the process's resident
memory, open file descriptors and threads sampled once a second.

  bench/soak.py synth --bin build/sigstream --audio-hours 24 [--backend cpu|cuda]
  bench/soak.py pipe  --bin build/sigstream --audio-hours 24 [--backend cpu|cuda]
  bench/soak.py live  --bin build/sigstream --wall-seconds 600 [--backend cpu|cuda]

Modes:
  synth  sigstream run (a synthetic stereo 48 kHz source, a 63-tap low-pass,
         metrics, raw audio to standard output, read and dropped).
  pipe   sigstream run (synth, raw f32 out) | sigstream filter - - (raw in,
         255-tap low-pass, metrics, raw out) | read and dropped: the filter
         is the process sampled.
  live   a paced raw s16le producer (real time, 5 ms blocks) | sigstream
         filter - - --latency 5 | read and dropped, for --wall-seconds.

Prints one JSON object: per sampled process, each series' first value after
the warm-up (--warmup seconds), its minimum, maximum and last, and its growth
from the warm-up to the end; the samples go to --csv. A flat process has
fd and thread growth 0 and an RSS growth within a few pages.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any


@dataclass
class Sample:
    t: float
    rss_kb: int
    fds: int
    threads: int


@dataclass
class Series:
    name: str
    pid: int
    samples: list[Sample] = field(default_factory=list)


def read_sample(pid: int, t: float) -> Sample | None:
    """One reading of /proc/PID: VmRSS, Threads and the entries of fd/. None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            status = f.read()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    values: dict[str, int] = {}
    for line in status.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "Threads"):
            values[key] = int(rest.split()[0])
    if "VmRSS" not in values:  # a zombie: no memory left to read
        return None
    return Sample(t=t, rss_kb=values["VmRSS"], fds=fds, threads=values.get("Threads", 0))


def summarize(series: Series, warmup_s: float) -> dict[str, Any]:
    """First (after the warm-up), min, max, last and growth of each quantity."""
    after = [s for s in series.samples if s.t >= warmup_s] or series.samples
    out: dict[str, Any] = {"pid": series.pid, "samples": len(series.samples),
                           "seconds": round(series.samples[-1].t, 1) if series.samples else 0.0}
    for key in ("rss_kb", "fds", "threads"):
        vals = [getattr(s, key) for s in after]
        if not vals:
            continue
        out[key] = {"first": vals[0], "min": min(vals), "max": max(vals), "last": vals[-1],
                    "growth": vals[-1] - vals[0]}
    return out


def drain(stream: IO[bytes], counter: list[int]) -> None:
    """Read a pipe to its end, counting the bytes."""
    while True:
        block = stream.read(1 << 20)
        if not block:
            return
        counter[0] += len(block)


def synth_config(path: str, seconds: float, backend: str, sink: str, fmt: str, taps: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"""version: 1
source:
  synth:
    sample_rate: 48000
    duration_s: {seconds}
    channels: 2
    tones:
      - {{freq_hz: 440, amplitude: 0.3}}
      - {{freq_hz: 9000, amplitude: 0.3}}
    noise: {{kind: gaussian, amplitude: 0.01, seed: 7}}
stages:
  - type: fir
    name: lowpass
    design: {{kind: lowpass, cutoff_hz: 4000, taps: {taps}}}
  - type: metrics
    name: out
sink:
  file: "{sink}"
  type: raw
  format: {fmt}
execution:
  backend: {backend}
""")


def pace(stdin: IO[bytes], seconds: float, stop: threading.Event) -> None:
    """Real-time raw s16le stereo at 48 kHz in 5 ms blocks (absolute deadlines)."""
    block = bytes((i * 7919) & 0xFF for i in range(240 * 4))
    start = time.monotonic()
    n = 0
    try:
        while not stop.is_set() and time.monotonic() - start < seconds:
            n += 1
            delay = start + n * 0.005 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            stdin.write(block)
            stdin.flush()
    except BrokenPipeError:
        pass
    finally:
        try:
            stdin.close()
        except BrokenPipeError:
            pass


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix="sigstream-soak-")
    raw_in = ["--input-type", "raw", "--rate", "48000", "--channels", "2"]
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    counted = [0]
    stop = threading.Event()
    threads: list[threading.Thread] = []
    err = open(os.path.join(tmp, "stderr.txt"), "wb")
    seconds = args.audio_hours * 3600.0
    if args.mode == "synth":
        cfg = os.path.join(tmp, "synth.yaml")
        synth_config(cfg, seconds, args.backend, "-", "pcm16", 63)
        p = subprocess.Popen([args.bin, "run", cfg, "--quiet"], stdout=subprocess.PIPE, stderr=err)
        procs.append(("sigstream run", p))
        threads.append(threading.Thread(target=drain, args=(p.stdout, counted)))
    elif args.mode == "pipe":
        cfg = os.path.join(tmp, "synth.yaml")
        synth_config(cfg, seconds, args.backend, "-", "float", 1)
        producer = subprocess.Popen([args.bin, "run", cfg, "--quiet"], stdout=subprocess.PIPE, stderr=err)
        filt = subprocess.Popen([args.bin, "filter", "-", "-", *raw_in, "--encoding", "f32le", "--type", "raw",
                                 "--format", "pcm16", "--lowpass", "4000", "--taps", "255", "--backend", args.backend,
                                 "--quiet"],
                                stdin=producer.stdout, stdout=subprocess.PIPE, stderr=err)
        assert producer.stdout is not None
        producer.stdout.close()  # the filter holds the read end
        procs += [("sigstream filter", filt), ("producer", producer)]
        threads.append(threading.Thread(target=drain, args=(filt.stdout, counted)))
    else:
        filt = subprocess.Popen([args.bin, "filter", "-", "-", *raw_in, "--encoding", "s16le", "--type", "raw",
                                 "--format", "pcm16", "--lowpass", "4000", "--taps", "255", "--latency", "5",
                                 "--backend", args.backend, "--quiet"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        procs.append(("sigstream filter --latency 5", filt))
        threads.append(threading.Thread(target=drain, args=(filt.stdout, counted)))
        threads.append(threading.Thread(target=pace, args=(filt.stdin, args.wall_seconds, stop)))
    for th in threads:
        th.start()
    series = [Series(name, p.pid) for name, p in procs]
    start = time.monotonic()
    try:
        while any(p.poll() is None for _, p in procs):
            t = time.monotonic() - start
            for s in series:
                got = read_sample(s.pid, t)
                if got is not None:
                    s.samples.append(got)
            time.sleep(max(0.0, start + len(series[0].samples) + 1 - time.monotonic()))
    finally:
        stop.set()
        for _, p in procs:
            if p.poll() is None:
                p.terminate()
        for th in threads:
            th.join()
        err.close()
    wall = time.monotonic() - start
    codes = {name: p.wait() for name, p in procs}
    with open(os.path.join(tmp, "stderr.txt"), encoding="utf-8", errors="replace") as f:
        stderr_text = f.read()
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["process", "t_s", "rss_kb", "fds", "threads"])
            for s in series:
                for x in s.samples:
                    w.writerow([s.name, f"{x.t:.2f}", x.rss_kb, x.fds, x.threads])
    frames_out = counted[0] // 4  # raw stereo pcm16 out: 4 bytes a frame
    return {"mode": args.mode, "backend": args.backend, "wall_s": round(wall, 1),
            "audio_out_s": round(frames_out / 48000.0, 1),
            "speed_x_realtime": round(frames_out / 48000.0 / wall, 1) if wall > 0 else 0.0,
            "exit_codes": codes, "stderr": stderr_text[-2000:],
            "processes": {s.name: summarize(s, args.warmup) for s in series}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("synth", "pipe", "live"))
    ap.add_argument("--bin", default="build/sigstream")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--audio-hours", type=float, default=24.0, help="synth/pipe: hours of audio")
    ap.add_argument("--wall-seconds", type=float, default=600.0, help="live: seconds of real time")
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds before growth is counted from")
    ap.add_argument("--csv", default="", help="write every sample here")
    args = ap.parse_args(argv)
    result = run(args)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0 if all(c == 0 for c in result["exit_codes"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
