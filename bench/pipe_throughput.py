#!/usr/bin/env python3
"""Pipe throughput (issue P5): `ffmpeg ... -f wav - | sigstream filter - - -t raw ... | cat > /dev/null`
on a 10-minute stereo 16-bit WAV against the same job on files, in the same run.

  bench/pipe_throughput.py --bin build/sigstream [--runs 5] [--taps 255]

Jobs (median wall time of --runs each, interleaved):
  file          sigstream filter in.wav out.raw                      (the file path)
  stdin-file    sigstream filter - - -t raw < in.wav | cat           (a stream, no producer)
  cat-pipe      cat in.wav | sigstream filter - - -t raw | cat       (a pipe, a trivial producer)
  ffmpeg-pipe   ffmpeg -i in.wav -f wav - | sigstream filter - - -t raw | cat
  ffmpeg-files  ffmpeg -i in.wav -f wav tmp.wav && sigstream filter tmp.wav out.raw   (the same job on files)
  ffmpeg-alone  ffmpeg -i in.wav -f wav - | cat                      (the producer by itself)
The input is made with SoX (white noise) unless --input names one.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd: str) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/sigstream")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--taps", type=int, default=255)
    ap.add_argument("--input", default="")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="pipe-bench-")
    src = args.input or os.path.join(work, "in.wav")
    if not args.input:
        subprocess.run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", src, "synth", "600", "whitenoise",
                        "gain", "-6"], check=True, stderr=subprocess.DEVNULL)
    binp = os.path.abspath(args.bin)
    taps = os.path.join(work, "taps.txt")
    with open(taps, "w") as f:
        f.write(subprocess.run([binp, "design", "--lowpass", "4000", "--rate", "48000", "--taps", str(args.taps)],
                               check=True, capture_output=True, text=True).stdout)
    flt = "%s filter %%s %%s --taps-file %s -q" % (binp, taps)
    out, tmp = os.path.join(work, "out.raw"), os.path.join(work, "tmp.wav")
    jobs = {
        "file": flt % (src, out),
        "stdin-file": (flt % ("-", "- -t raw")) + " < %s | cat > /dev/null" % src,
        "cat-pipe": "cat %s | %s | cat > /dev/null" % (src, flt % ("-", "- -t raw")),
        "ffmpeg-pipe": "ffmpeg -v error -i %s -f wav - | %s | cat > /dev/null" % (src, flt % ("-", "- -t raw")),
        "ffmpeg-files": "ffmpeg -v error -y -i %s -f wav %s && %s" % (src, tmp, flt % (tmp, out)),
        "ffmpeg-alone": "ffmpeg -v error -i %s -f wav - | cat > /dev/null" % src,
    }
    times: dict[str, list[float]] = {k: [] for k in jobs}
    for _ in range(args.runs):
        for name, cmd in jobs.items():
            times[name].append(timed(cmd))
    med = {k: statistics.median(v) for k, v in times.items()}
    for name in jobs:
        print("%-13s median %.3f s  (runs %s)" % (name, med[name], " ".join("%.3f" % t for t in times[name])))
    print("throughput ffmpeg-pipe vs ffmpeg-files (same job on files): %.2fx" % (med["ffmpeg-files"] / med["ffmpeg-pipe"]))
    print("throughput cat-pipe vs file: %.2fx; stdin-file vs file: %.2fx" % (
        med["file"] / med["cat-pipe"], med["file"] / med["stdin-file"]))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
