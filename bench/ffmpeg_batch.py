#!/usr/bin/env python3
"""P15's benchmark: many short .m4a files -> 16 kHz mono WAV with a 255-tap
band-pass, in one `sigstream batch`, against `ffmpeg` run per file in
parallel (`xargs -P $(nproc)`, `-af aresample=16000,pan=mono,...`) on the same
cores; and the decode's share (the same files decoded by ffmpeg to nowhere).

    python3 bench/ffmpeg_batch.py [--bin build/sigstream] [--files 1000] [--seconds 4] [--runs 3]

Makes its inputs once under --work (AAC at 96 kb/s from seeded programme
noise at 48 kHz stereo, odd lengths). Prints the wall time of each contender
(median of --runs) and files/s.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
import wave

import numpy as np

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--bin", default="build/sigstream")
ap.add_argument("--files", type=int, default=1000)
ap.add_argument("--seconds", type=float, default=4.0)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--work", default="bench/work/ffmpeg_batch")
args = ap.parse_args()

if shutil.which("ffmpeg") is None:
    sys.exit("ffmpeg is not installed")
nproc = os.cpu_count() or 1
src = os.path.join(args.work, f"in_{args.files}x{args.seconds:g}s")


def make_inputs() -> None:
    if os.path.isdir(src) and len(os.listdir(src)) == args.files:
        return
    os.makedirs(src, exist_ok=True)
    rng = np.random.default_rng(15)
    wavs = []
    for k in range(args.files):
        n = int(args.seconds * 48000) + int(rng.integers(0, 4800))
        lv = 10 ** (rng.uniform(-30, -10) / 20)
        x = (rng.standard_normal((n, 2)) * lv).clip(-0.99, 0.99)
        w = os.path.join(src, f"f{k:05d}.wav")
        with wave.open(w, "wb") as f:
            f.setnchannels(2)
            f.setsampwidth(2)
            f.setframerate(48000)
            f.writeframes(np.round(x * 32767).astype("<i2").tobytes())
        wavs.append(w)
    # Each WAV to AAC in M4A (the WAV goes): ffmpeg per file, every core.
    subprocess.run(["xargs", "-P", str(nproc), "-I", "{}", "sh", "-c",
                    "ffmpeg -nostdin -v error -y -i \"$0\" -c:a aac -b:a 96k \"${0%.wav}.m4a\" && rm \"$0\"",
                    "{}"], input="\n".join(wavs), text=True, check=True)


def timed(fn) -> float:
    t = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


make_inputs()
files = sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith(".m4a"))
out = os.path.join(args.work, "out")
cfg = os.path.join(args.work, "batch.yaml")
with open(cfg, "w") as f:
    f.write("version: 1\nsource: {file: x.m4a}\nstages:\n"
            "  - {type: mix, name: mono, preset: mono}\n"
            "  - {type: resample, name: r, to_hz: 16000}\n"
            "  - {type: fir, name: bp, design: {kind: bandpass, cutoff_hz: [300, 3400], taps: 255}}\n"
            "sink: {file: x.wav, format: pcm16}\nexecution: {backend: cpu}\n")


def sigstream_batch() -> None:
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([args.bin, "batch", cfg, src, "--out-dir", out, "--quiet", "--no-progress"], check=True)


def ffmpeg_each() -> None:
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    af = "aresample=16000,pan=mono|c0=0.5*c0+0.5*c1,highpass=f=300,lowpass=f=3400"
    subprocess.run(["xargs", "-P", str(nproc), "-I", "{}", "sh", "-c",
                    f"ffmpeg -nostdin -v error -y -i \"$0\" -af '{af}' -c:a pcm_s16le "
                    f"\"{out}/$(basename \"$0\" .m4a).wav\"", "{}"],
                   input="\n".join(files), text=True, check=True)


def decode_only() -> None:
    subprocess.run(["xargs", "-P", str(nproc), "-I", "{}", "ffmpeg", "-nostdin", "-v", "error", "-i", "{}",
                    "-f", "null", "-"], input="\n".join(files), text=True, check=True)


print(f"{len(files)} files x ~{args.seconds:g} s AAC 96 kb/s stereo 48 kHz; {nproc} cores; median of {args.runs}")
for name, fn in (("sigstream batch", sigstream_batch), (f"ffmpeg per file, xargs -P {nproc}", ffmpeg_each),
                 (f"ffmpeg decode only, xargs -P {nproc}", decode_only)):
    t = timed(fn)
    print(f"{name:40s} {t:7.2f} s  {len(files) / t:7.1f} files/s")
