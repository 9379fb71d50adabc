#!/usr/bin/env python3
"""Seed corpora and dictionaries for the fuzz targets (issue P10).

  fuzz/make_seeds.py --bin build-fuzz/sigstream --out build-fuzz/corpus

config  every YAML under configs/ (examples, invalid, the demo)
set     --set strings from the README and tests, one or more a seed
taps    taps files written by `sigstream design`, and hand-made odd ones
audio   short files in every container sigstream writes, each as a file,
        a finished pipe and (PCM ones) raw: the target's 3-byte prefix + bytes
live    the same files as streams, and raw PCM

A dictionary of every config key and enum word (docs/yaml-reference.md) goes
next to the corpora as config.dict, for the config and set targets.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SET_SEEDS: list[str] = [
    "execution.chunk_frames=4096",
    "stages.1.mode=causal",
    "stages.0.design.cutoff_hz=3000",
    "stages.1.design.window=kaiser\nstages.1.design.beta=8.6",
    "execution.backend=cpu\nexecution.threads=2",
    "sink.format=pcm24",
    "stages.1.design={kind: bandpass, cutoff_hz: [300, 3400], taps: 101}",
    "stages.0.spectrum.nfft=512",
    "source.synth.tones=[{freq_hz: 440}]",
    "stats.json=null",
    "execution.latency_ms=5",
]

# Sink extensions and formats of the audio seeds.
CONTAINERS: list[tuple[str, str]] = [
    ("wav", "pcm16"), ("wav", "pcm24"), ("wav", "float"), ("wav", "double"), ("flac", "pcm16"),
    ("au", "pcm16"), ("caf", "pcm24"), ("aiff", "pcm16"), ("w64", "float"), ("rf64", "pcm16"),
    ("ogg", "same"),
]


def write_seed(folder: Path, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def config_seeds(out: Path) -> None:
    for path in sorted(ROOT.glob("configs/**/*.yaml")):
        write_seed(out / "config", path.read_bytes())


def dictionary(out: Path) -> None:
    words: set[str] = set()
    text = (ROOT / "docs" / "yaml-reference.md").read_text(encoding="utf-8")
    for key in re.findall(r"^\| `([a-z_.\[\]]+)`", text, flags=re.M):
        for part in key.replace("[]", "").split("."):
            words.add(part)
    for enum in re.findall(r"one of ([a-z0-9_ \\|]+)", text):
        words.update(w.strip(" \\") for w in enum.split("|") if w.strip(" \\"))
    lines = [f'"{w}:"' for w in sorted(words)] + [f'"{w}"' for w in sorted(words)]
    lines += ['"- "', '"{"', '"}"', '"["', '"]"', '": "', '"\\x0a  "', '"nan"', '".inf"', '"1e300"', '"-1"']
    (out / "config.dict").write_text("\n".join(lines) + "\n", encoding="utf-8")


def set_seeds(out: Path) -> None:
    for s in SET_SEEDS:
        write_seed(out / "set", s.encode())


def taps_seeds(out: Path, binary: str) -> None:
    for args in (["--lowpass", "1000", "--taps", "31"], ["--bandpass", "300:3400", "--taps", "64"]):
        got = subprocess.run([binary, "design", *args, "--rate", "16000"], check=True, capture_output=True)
        write_seed(out / "taps", got.stdout)
    for text in ("# comment\n0.25\n\n -0.5 # mid\n1e-3\r\n", "1,\n2;\n3", "0x1p-3\n-inf\n", "1e999\n", "\n\n#"):
        write_seed(out / "taps", text.encode())


def audio_seeds(out: Path, binary: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for ext, fmt in CONTAINERS:
            for channels in (1, 2):
                path = os.path.join(tmp, f"seed.{ext}")
                cfg = os.path.join(tmp, "seed.yaml")
                Path(cfg).write_text(
                    "version: 1\nsource:\n  synth: {sample_rate: 8000, frames: 300, channels: %d, "
                    "tones: [{freq_hz: 440, amplitude: 0.5}]}\nsink: {file: %s, format: %s}\n"
                    % (channels, path, fmt), encoding="utf-8")
                subprocess.run([binary, "run", cfg, "--quiet"], check=True)
                data = Path(path).read_bytes()
                write_seed(out / "audio", b"\x00\x00\x00" + data)  # a file
                write_seed(out / "audio", b"\x01\x00\x00" + data)  # a finished pipe
                write_seed(out / "live", b"\x00\x00\x00" + data)
        pcm = bytes((i * 37) & 0xFF for i in range(1200))
        for enc in (0, 2, 5, 8, 11):
            for channels in (0, 1):
                write_seed(out / "audio", bytes([2, channels, enc]) + pcm)
                write_seed(out / "audio", bytes([3, channels, enc]) + pcm + b"\x01")  # a partial frame at the end
                write_seed(out / "live", bytes([1, channels, enc]) + pcm)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="a sigstream binary (writes the audio seeds, designs taps)")
    ap.add_argument("--out", required=True, help="folder of the corpora (one subfolder per target)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config_seeds(out)
    dictionary(out)
    set_seeds(out)
    taps_seeds(out, args.bin)
    audio_seeds(out, args.bin)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
