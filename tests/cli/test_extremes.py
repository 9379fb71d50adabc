#!/usr/bin/env python3
"""Every numeric config key at an extreme value (issue P10's acceptance).

Usage: python3 test_extremes.py PATH_TO_sigstream

Each key of docs/yaml-reference.md that takes a number is set, through
--set on a small config that uses it, to 0, 1, 2^31-1, 2^63, -1, NaN, Inf,
1e300 and a 10,000-character string. Every run must end in a clean run
(exit 0, with its output), a clear error (exit 2, or exit 1 for a
processing failure, with a message naming the config's file:line or the
key) and never a crash, a hang or an internal error. A
value that makes a legitimately long job (2^31-1 frames of synth) is
stopped with SIGTERM after a few seconds: exit 130 and no output. A test
keeps the table in step with the reference: a new numeric key must be added
here. Runs on the CPU backend, and on CUDA where a device exists.
"""

import os
import re
import signal
import subprocess
import sys
import wave

if len(sys.argv) < 2:
    print("usage: test_extremes.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIGSTREAM_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import Skip, cuda_available, run_cases  # noqa: E402

BASE = """version: 1
source: {synth: {sample_rate: 16000, frames: 20000, channels: 2,
  tones: [{freq_hz: 440, amplitude: 0.5, phase_deg: 0, channel: 0}], noise: {kind: uniform, amplitude: 0.1, seed: 1}}}
stages:
  - {type: metrics, name: m, spectrum: {nfft: 256, overlap: 0.5, window: kaiser, beta: 6}}
  - {type: fir, name: f, design: {kind: lowpass, cutoff_hz: 2000, taps: 63, window: kaiser, beta: 8}}
  - {type: gain, name: g, db: -3}
  - {type: gain, name: g2, linear: 0.5}
  - {type: resample, name: r, up: 3, down: 2, half_taps_per_phase: 10, window: kaiser, beta: 5}
  - {type: resample, name: r2, to_hz: 16000}
  - {type: fir, name: t, taps: [0.25, 0.5, 0.25]}
  - {type: mix, name: mx, matrix: [[0.5, 0.5], [1, 0]]}
  - {type: mix, name: sel, select: [1, 0]}
sink: {file: out.mp3, quality: 0.5}
stats: {json: s.json}
execution: {backend: BACKEND, chunk_frames: 4096, streams: 4, threads: 0, device: 0}
"""
RAW = """version: 1
source: {file: in.raw, raw: {sample_rate: 16000, channels: 2, encoding: s16le}}
stages: [{type: fir, design: {kind: lowpass, cutoff_hz: 2000, taps: 31}}]
sink: {file: out.wav}
execution: {backend: BACKEND}
"""
# The iir stages (on the CPU backend: the CUDA step's extremes are the GPU tests').
IIR = """version: 1
source: {synth: {sample_rate: 16000, frames: 20000, channels: 2, noise: {kind: uniform, amplitude: 0.1, seed: 1}}}
stages:
  - {type: iir, name: d1, design: {kind: highpass, cutoff_hz: 40, order: 2, ftype: cheby1, rp: 1}}
  - {type: iir, name: d2, design: {kind: lowpass, cutoff_hz: 3000, order: 3, ftype: cheby2, rs: 40}}
  - {type: iir, name: b, biquad: {type: peaking, freq_hz: 1000, q: 0.7, gain_db: 3}}
  - {type: iir, name: s, sos: [[1, 0, 0, 1, -0.5, 0.1]]}
sink: {file: out.wav}
execution: {backend: cpu}
"""
# The normalize stages (files: two passes; on the CPU backend).
NORM = """version: 1
source: {file: in.wav}
stages:
  - {type: normalize, name: l, lufs: -23, true_peak_max_db: -1}
  - {type: normalize, name: p, peak_db: -1}
  - {type: normalize, name: r, rms_db: -20}
sink: {file: out.wav}
execution: {backend: cpu}
"""
# reference key -> (config, --set path)
# Keys whose extreme values are long, valid jobs (stopped with SIGTERM).
LONG = {"source.synth.frames", "source.synth.duration_s"}

KEYS = {
    "source.raw.sample_rate": (RAW, "source.raw.sample_rate"),
    "source.raw.channels": (RAW, "source.raw.channels"),
    "source.synth.sample_rate": (BASE, "source.synth.sample_rate"),
    "source.synth.frames": (BASE, "source.synth.frames"),
    "source.synth.duration_s": (BASE.replace("frames: 20000", "duration_s: 1.25"), "source.synth.duration_s"),
    "source.synth.channels": (BASE, "source.synth.channels"),
    "source.synth.tones[].freq_hz": (BASE, "source.synth.tones.0.freq_hz"),
    "source.synth.tones[].amplitude": (BASE, "source.synth.tones.0.amplitude"),
    "source.synth.tones[].phase_deg": (BASE, "source.synth.tones.0.phase_deg"),
    "source.synth.tones[].channel": (BASE, "source.synth.tones.0.channel"),
    "source.synth.noise.amplitude": (BASE, "source.synth.noise.amplitude"),
    "source.synth.noise.seed": (BASE, "source.synth.noise.seed"),
    "stages[].design.taps": (BASE, "stages.1.design.taps"),
    "stages[].design.beta": (BASE, "stages.1.design.beta"),
    "stages[].design.cutoff_hz": (BASE, "stages.1.design.cutoff_hz"),
    "stages[].taps": (BASE, "stages.6.taps.1"),
    "stages[].db": (BASE, "stages.2.db"),
    "stages[].linear": (BASE, "stages.3.linear"),
    "stages[].spectrum.nfft": (BASE, "stages.0.spectrum.nfft"),
    "stages[].spectrum.overlap": (BASE, "stages.0.spectrum.overlap"),
    "stages[].spectrum.beta": (BASE, "stages.0.spectrum.beta"),
    "stages[].to_hz": (BASE, "stages.5.to_hz"),
    "stages[].up": (BASE, "stages.4.up"),
    "stages[].down": (BASE, "stages.4.down"),
    "stages[].beta": (BASE, "stages.4.beta"),
    "stages[].half_taps_per_phase": (BASE, "stages.4.half_taps_per_phase"),
    "stages[].matrix": (BASE, "stages.7.matrix.0.1"),
    "stages[].select": (BASE, "stages.8.select.0"),
    "stages[].design.order": (IIR, "stages.0.design.order"),
    "stages[].design.rp": (IIR, "stages.0.design.rp"),
    "stages[].design.rs": (IIR, "stages.1.design.rs"),
    "stages[].biquad.freq_hz": (IIR, "stages.2.biquad.freq_hz"),
    "stages[].biquad.q": (IIR, "stages.2.biquad.q"),
    "stages[].biquad.gain_db": (IIR, "stages.2.biquad.gain_db"),
    "stages[].sos": (IIR, "stages.3.sos.0.4"),
    "stages[].lufs": (NORM, "stages.0.lufs"),
    "stages[].true_peak_max_db": (NORM, "stages.0.true_peak_max_db"),
    "stages[].peak_db": (NORM, "stages.1.peak_db"),
    "stages[].rms_db": (NORM, "stages.2.rms_db"),
    "sink.quality": (BASE, "sink.quality"),
    "execution.chunk_frames": (BASE, "execution.chunk_frames"),
    "execution.streams": (BASE, "execution.streams"),
    "execution.threads": (BASE, "execution.threads"),
    "execution.device": (BASE, "execution.device"),
    "execution.latency_ms": (BASE, "execution.latency_ms"),
}
NOT_HERE = {"version": "must equal 1 (tested by the config tests)"}
VALUES = ["0", "1", "2147483647", "9223372036854775808", "-1", ".nan", ".inf", "1e300", "x" * 10000]


def numeric_keys():
    keys = []
    for line in open(os.path.join(ROOT, "docs", "yaml-reference.md"), encoding="utf-8"):
        m = re.match(r"\| `([^`]+)` \| ([^|]+) \|", line)
        if m and re.search(r"integer|number", m.group(2)):
            keys.append(m.group(1))
    return keys


def test_the_table_covers_every_numeric_key():
    missing = [k for k in numeric_keys() if k not in KEYS and k not in NOT_HERE]
    assert not missing, f"numeric keys without an extreme-value case: {missing}"


def run_extremes(backend):
    open("in.raw", "wb").write(bytes(range(256)) * 160)
    with wave.open("in.wav", "wb") as w:  # for the normalize stages: 1 s of a stereo ramp
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(bytes(range(256)) * 250)
    outcomes = {0: 0, 1: 0, 2: 0, 130: 0}
    for key, (config, path) in KEYS.items():
        open("c.yaml", "w").write(config.replace("BACKEND", backend))
        for v in VALUES:
            for f in ("out.wav", "out.mp3"):
                if os.path.exists(f):
                    os.remove(f)
            p = subprocess.Popen([BIN, "run", "c.yaml", "--set", f"{path}={v}", "-q", "--no-progress"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                err = p.communicate(timeout=8)[1]
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGTERM)  # a legitimately long job: it must stop cleanly
                err = p.communicate(timeout=20)[1]
                # Only a length may make a legitimately long job (a day of audio is one).
                assert key in LONG, f"{backend}: {key}={v[:20]} still running after 8 s"
                assert p.returncode == 130, (key, v[:20], p.returncode, err[-300:])
                assert not os.path.exists("out.wav") and not os.path.exists("out.mp3"), (key, v[:20])
                outcomes[130] += 1
                continue
            rc = p.returncode
            where = f"{backend}: {key}={v[:20]}: exit {rc}: {err[-300:]}"
            assert rc in (0, 1, 2), where
            assert "internal error" not in err, where
            if rc in (1, 2):  # a message that says where: the config's file:line, or the value's key
                assert "sigstream: error:" in err and ("c.yaml" in err or path.split(".")[-1] in err), where
            if rc == 0:
                assert os.path.exists("out.wav") or os.path.exists("out.mp3"), where
            outcomes[rc] += 1
    return f"{backend}: {outcomes[0]} clean runs, {outcomes[2]} config errors, {outcomes[1]} processing errors, " \
           f"{outcomes[130]} long jobs stopped"


def test_extremes_cpu():
    return run_extremes("cpu")


def test_extremes_cuda():
    if not cuda_available(BIN):
        raise Skip("no CUDA device")
    return run_extremes("cuda")


run_cases([test_the_table_covers_every_numeric_key, test_extremes_cpu, test_extremes_cuda], BIN,
          "sigstream-extremes-")
