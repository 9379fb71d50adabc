#!/usr/bin/env python3
"""MP3, Ogg/Opus and lossy sources, and mistyped commands and options (issue P9).

Usage: python3 test_formats.py PATH_TO_sigstream

- MP3 in: `format: same` from a lossy source (MP3, Vorbis) writes float WAV,
  24-bit FLAC, or the codec itself into its own container; the output is
  the filtered *decoded* input (compared with a float64 convolution of what
  sigstream decodes from the same file, not with another tool's bytes).
- MP3 out, .ogg and .opus: written, read back, same length as the input;
  `--quality` orders the MP3 sizes; quality on a PCM output is exit 2.
- Typos: an unknown option is named with a suggestion before anything else
  (exit 2), an unknown command likewise.
The MP3 round trip runs on the CPU, and again on CUDA where a device exists.
"""

import os
import subprocess
import sys

import numpy as np

if len(sys.argv) < 2:
    print("usage: test_formats.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIGSTREAM_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import cuda_available, run_cases  # noqa: E402
from wavio import read_float_wav  # noqa: E402

TAPS = 101


def sh(*args, ok=True):
    r = subprocess.run([BIN, *args], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, f"{args}: exit {r.returncode}: {r.stderr}"
    return r


def backends():
    return ["cpu"] + (["cuda"] if cuda_available(BIN) else [])


def decoded(path):
    """What sigstream decodes from `path`: a run with no stage, written as float."""
    sh("filter", path, "dec.wav", "--resample", str(info(path)["sample_rate"]), "--format", "float", "-q")
    return read_float_wav("dec.wav")


def info(path):
    out = {}
    for line in sh("info", path).stdout.splitlines():
        k, v = line.split(":", 1)
        out[k.strip()] = v.strip()
    out["sample_rate"] = int(float(out["sample_rate"]))
    out["frames"] = int(out["frames"])
    return out


def make_mp3():
    """A 1 s stereo tone pair at 44.1 kHz as MP3, written by sigstream itself (no other tool)."""
    open("gen.yaml", "w").write(
        "version: 1\nsource: {synth: {sample_rate: 44100, frames: 44100, channels: 2, "
        "tones: [{freq_hz: 440, amplitude: 0.4}, {freq_hz: 5000, amplitude: 0.3}]}}\nsink: {file: in.mp3}\n")
    sh("run", "gen.yaml", "-q")
    assert info("in.mp3")["format"].endswith("mpeg layer iii")


def test_mp3_in_writes_pcm_or_float_of_the_decoded_input():
    make_mp3()
    x = decoded("in.mp3")
    taps = [float(t) for t in sh("design", "--lowpass", "2000", "--rate", "44100", "--taps", str(TAPS)).stdout.split()]
    want = np.stack([np.convolve(x[:, c], taps)[:len(x)] for c in range(2)], axis=1)  # causal
    for backend in backends():
        r = sh("filter", "in.mp3", "out.wav", "--lowpass", "2000", "--taps", str(TAPS), "--backend", backend)
        assert "is lossy; writing wav float" in r.stderr, r.stderr
        got = read_float_wav("out.wav")
        err = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert err < 1e-5, f"{backend}: rel L2 {err:.2e} against the decoded input filtered"
        sh("filter", "in.mp3", "out.flac", "--lowpass", "2000", "--backend", backend, "-q")
        assert info("out.flac")["format"] == "flac pcm24"
        sh("filter", "in.mp3", "out.mp3", "--lowpass", "2000", "--backend", backend, "-q")
        i = info("out.mp3")
        assert i["format"].endswith("mpeg layer iii") and i["sample_rate"] == 44100
        y = decoded("out.mp3")
        # MP3 again (lossy twice): the 440 Hz tone stays, the 5 kHz tone goes.
        spec = np.abs(np.fft.rfft(y[:, 0] * np.hanning(len(y))))
        f = np.fft.rfftfreq(len(y), 1 / 44100)
        assert spec[np.argmin(abs(f - 440))] > 100 * spec[np.argmin(abs(f - 5000))], "the low-pass did not show"
    return f"rel L2 {err:.1e} vs the decoded input"


def test_mp3_ogg_opus_out_with_quality():
    sh("filter", os.path.join(ROOT, "data", "speech.wav"), "a.mp3", "--lowpass", "3000", "-q")
    sizes = {}
    for q in ("0", "0.5", "1"):
        sh("filter", os.path.join(ROOT, "data", "speech.wav"), f"q{q}.mp3", "--lowpass", "3000", "--quality", q, "-q")
        sizes[q] = os.path.getsize(f"q{q}.mp3")
    assert sizes["0"] < sizes["0.5"] < sizes["1"], sizes
    n = info(os.path.join(ROOT, "data", "speech.wav"))["frames"]
    for name, fmt in (("a.mp3", "mpeg layer iii"), ("b.ogg", "vorbis"), ("c.opus", "opus")):
        if not os.path.exists(name):
            sh("filter", os.path.join(ROOT, "data", "speech.wav"), name, "--lowpass", "3000", "-q")
        i = info(name)
        assert i["format"].endswith(fmt), i
        assert abs(i["frames"] - n) <= 2048, (name, i["frames"], n)  # codec padding at most
    r = sh("filter", os.path.join(ROOT, "data", "speech.wav"), "a.wav", "--lowpass", "3000", "--quality", "0.5",
           ok=False)
    assert r.returncode == 2 and "sink.quality applies to MP3, Vorbis and Opus" in r.stderr, r.stderr
    assert not os.path.exists("a.wav")
    r = sh("filter", os.path.join(ROOT, "data", "speech.wav"), "a.mp3", "--lowpass", "3000", "--format", "pcm16",
           ok=False)
    assert r.returncode == 2 and "pcm16" in r.stderr, r.stderr
    return f"mp3 sizes at quality 0 / 0.5 / 1: {sizes['0']} / {sizes['0.5']} / {sizes['1']} bytes"


def test_vorbis_in_keeps_vorbis_in_ogg_and_is_float_elsewhere():
    sh("filter", os.path.join(ROOT, "data", "speech.wav"), "v.ogg", "--lowpass", "3000", "-q")
    r = sh("filter", "v.ogg", "w.wav", "--highpass", "100")
    assert "is lossy; writing wav float" in r.stderr, r.stderr
    sh("filter", "v.ogg", "w.ogg", "--highpass", "100", "-q")
    assert info("w.ogg")["format"].endswith("vorbis")
    sh("filter", "v.ogg", "w.opus", "--highpass", "100", "-q")
    assert info("w.opus")["format"].endswith("opus")


def test_typos_are_named_with_a_suggestion():
    cases = [
        (["filter", "x.wav", "y.wav", "--lowpas", "1000"], "unknown option '--lowpas' for 'filter'; did you mean '--lowpass'?"),
        (["filtr", "x.wav"], "unknown command 'filtr'; did you mean 'filter'?"),
        (["run", "c.yaml", "--plott", "f.png"], "unknown option '--plott' for 'run'; did you mean '--plot'?"),
        (["batch", "c.yaml", "--keepgoing"], "unknown option '--keepgoing' for 'batch'; did you mean '--keep-going'?"),
        (["design", "--highpas", "100", "--rate", "8000"], "did you mean '--highpass'?"),
        (["filter", "x.wav", "y.wav", "--lowpass", "1000", "--qualty", "1"], "did you mean '--quality'?"),
        (["info", "x.wav", "--input-typ", "raw"], "did you mean '--input-type'?"),
        (["desing", "--lowpass", "100"], "did you mean 'design'?"),
        (["filter", "x.wav", "y.wav", "-x"], "unknown option '-x' for 'filter'"),
        (["design", "--lowpass", "100", "--rate", "8000", "--window", "han"], "did you mean 'hann'?"),
    ]
    for args, want in cases:
        r = sh(*args, ok=False)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
        assert want in r.stderr, (args, r.stderr)
    # Values that look like options are not options: a negative gain, '-' for standard input.
    r = sh("filter", os.path.join(ROOT, "data", "speech.wav"), "g.wav", "--lowpass", "1000", "--gain-db", "-6", "-q")
    assert r.returncode == 0


run_cases([test_mp3_in_writes_pcm_or_float_of_the_decoded_input, test_mp3_ogg_opus_out_with_quality,
           test_vorbis_in_keeps_vorbis_in_ogg_and_is_float_elsewhere, test_typos_are_named_with_a_suggestion],
          BIN, "sigstream-formats-")
