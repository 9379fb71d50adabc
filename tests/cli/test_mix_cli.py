#!/usr/bin/env python3
"""`filter --mix` (SPEC §11): the mix runs first, alone or before a filter and
a resampler; its four spellings give the bytes of the same mix in a YAML
config, and the float64 definition to float32 rounding; bad mixes are exit 2
with the schema's or the plan's words, in the flag's name.

Usage: python3 test_mix_cli.py PATH_TO_sigstream
"""

import os
import subprocess
import sys
import wave

import numpy as np

if len(sys.argv) < 2:
    print("usage: test_mix_cli.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import run_cases  # noqa: E402
from wavio import read_wav  # noqa: E402

FRAMES = 30011


def write_pcm16(path: str, channels: int, seed: int) -> np.ndarray:
    """A random 16-bit WAV; returns its samples as float64 (frames, channels) in [-1, 1)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-30000, 30000, size=(FRAMES, channels), dtype=np.int16)
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(48000)
        w.writeframes(x.astype("<i2").tobytes())
    return x.astype(np.float64) / 32768.0


def sh(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True)


def filter_mix(mix: str, extra: list[str] | None = None, src: str = "six.wav") -> np.ndarray:
    p = sh(["filter", src, "o.wav", "--mix", mix, "--format", "float", "--backend", "cpu", "-q",
            *(extra or [])])
    assert p.returncode == 0, (mix, p.stderr)
    return read_wav("o.wav")[2].astype(np.float64)


def run_yaml(stage: str, src: str = "six.wav") -> bytes:
    with open("c.yaml", "w") as f:
        f.write("version: 1\nsource: {file: %s}\nstages:\n  - %s\n"
                "sink: {file: y.wav, format: float}\nexecution: {backend: cpu}\n" % (src, stage))
    p = sh(["run", "c.yaml", "-q"])
    assert p.returncode == 0, p.stderr
    return open("y.wav", "rb").read()


def each_spelling_is_its_config_and_the_definition():
    x = write_pcm16("six.wav", 6, 1)
    k = 0.7071068
    cases = [
        ("mono", "{type: mix, preset: mono}", np.full((1, 6), 1 / 6)),
        ("5.1-stereo", "{type: mix, preset: 5.1-stereo}",
         np.array([[1, 0, k, 0, k, 0], [0, 1, k, 0, 0, k]])),
        ("select:5,0,0", "{type: mix, select: [5, 0, 0]}", None),
        ("0.5,0.5,0,0,0,0;0,0,0,0,-1.25,0.25", "{type: mix, matrix: [[0.5, 0.5, 0, 0, 0, 0], "
         "[0, 0, 0, 0, -1.25, 0.25]]}", np.array([[0.5, 0.5, 0, 0, 0, 0], [0, 0, 0, 0, -1.25, 0.25]])),
    ]
    for flag, stage, m in cases:
        y = filter_mix(flag)
        assert open("o.wav", "rb").read() == run_yaml(stage), flag
        if m is None:  # select: an exact copy
            assert np.array_equal(y, x[:, [5, 0, 0]]), flag
            continue
        want = x @ m.T
        assert y.shape == want.shape, (flag, y.shape)
        err = np.max(np.abs(y - want))
        assert err < 1e-6, (flag, err)  # a few float32 ulps of sums up to ~2.4


def the_mix_runs_first():
    x = write_pcm16("six.wav", 6, 2)
    # --mix mono, then a low-pass and a resampler: the same as those after a
    # mono file made by --mix alone.
    y = filter_mix("mono", ["--lowpass", "3000", "--resample", "16000"])
    assert y.shape[1] == 1 and y.shape[0] == (FRAMES + 2) // 3, y.shape
    filter_mix("mono")
    os.replace("o.wav", "mono.wav")
    p = sh(["filter", "mono.wav", "o.wav", "--lowpass", "3000", "--resample", "16000",
            "--format", "float", "--backend", "cpu", "-q"])
    assert p.returncode == 0, p.stderr
    assert np.array_equal(read_wav("o.wav")[2].astype(np.float64), y)
    assert abs(np.mean(x, axis=1)).max() > 0  # (the input is not silence)


def bad_mixes_say_so_in_the_flags_words():
    write_pcm16("two.wav", 2, 3)
    cases = [
        ("1,0,1", "the matrix has 3 columns, the input has 2 channels"),
        ("1,0;", "--mix: row 1 is empty"),
        ("1,0;1", "--mix: row 1 has 1 gains, row 0 has 2"),
        ("select:0,2", "select[1] is 2, the input has 2 channels (indices 0..1)"),
        ("select:-1", "--mix: "),
        ("stereo", "--mix: 'stereo' is not a valid preset (expected one of mono | 5.1-stereo)"),
        ("5.1-stereo", "preset 5.1-stereo needs 6 input channels (L R C LFE Ls Rs), the input has 2"),
        ("0.5,loud", "--mix: 'loud' is not a number"),
        ("0.5 0.5", "--mix: '0.5 0.5' is not a number"),  # gains go with ','
        ("1e39,0", "--mix: 1e39 is outside float32's range"),
        ("1e-50,1", "--mix: 1e-50 is outside float32's range"),
        ("2,bad;x", "--mix: 'bad' is not a number"),  # (and row 1's width against row 0's list)
    ]
    for mix, words in cases:
        p = sh(["filter", "two.wav", "o.wav", "--mix", mix, "--backend", "cpu", "-q"])
        assert p.returncode == 2, (mix, p.returncode, p.stderr)
        assert words in p.stderr, (mix, p.stderr)
        for internal in ("stages.", "--set", "mix0"):
            assert internal not in p.stderr, (mix, p.stderr)
        assert not os.path.exists("o.wav"), mix


def an_output_its_container_cannot_hold_is_refused_before_work():
    write_pcm16("two.wav", 2, 4)
    # FLAC holds at most 8 channels: nine made by a select are refused, exit 2, no file.
    p = sh(["filter", "two.wav", "o.flac", "--mix", "select:" + ",".join(["0"] * 9), "-q"])
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "cannot hold 9 channels" in p.stderr and "at most 8" in p.stderr, p.stderr
    assert not os.path.exists("o.flac")
    p = sh(["filter", "two.wav", "o.flac", "--mix", "select:" + ",".join(["1"] * 8), "-q"])
    assert p.returncode == 0, p.stderr


def the_summary_counts_the_outputs_channels():
    write_pcm16("six.wav", 6, 5)
    p = sh(["filter", "six.wav", "o.wav", "--mix", "5.1-stereo", "--backend", "cpu"])
    assert p.returncode == 0, p.stderr
    assert "%d frames x 2 ch" % FRAMES in p.stderr, p.stderr


run_cases([each_spelling_is_its_config_and_the_definition, the_mix_runs_first,
           bad_mixes_say_so_in_the_flags_words, an_output_its_container_cannot_hold_is_refused_before_work,
           the_summary_counts_the_outputs_channels], BIN, "sigstream-mix-cli-")
