#!/usr/bin/env python3
"""CAF headers out of libsndfile's bounds (pipeline/io/caf_guard.hpp), at the CLI.

Usage: python3 test_caf_headers.py PATH_TO_sigstream   (standard library only)

A CAF whose 'data' chunk the input ends inside (and the other headers that
sent libsndfile's chunk walk round for ever, or made it allocate gigabytes,
on a stream: fuzz/regressions/audio/caf-stream-*) is refused with exit 1
and one error naming the input, as a file and on standard input, quickly,
leaving no output. CAF files sigstream writes still read, both ways.
"""

import glob
import os
import struct
import subprocess
import sys
import wave

if len(sys.argv) < 2:
    print("usage: test_caf_headers.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("SIGSTREAM_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import describe, expect_in, expect_rc, run_cases  # noqa: E402

TIMEOUT = 60  # each was an out-of-memory (3 GB) or endless loop on a stream


def run(args, stdin_bytes=b""):
    return subprocess.run([BIN] + list(args), input=stdin_bytes, capture_output=True,
                          timeout=TIMEOUT)


def error_line(p):
    lines = [l for l in p.stderr.decode().splitlines() if l.startswith("sigstream: error:")]
    assert len(lines) == 1, "expected one error line: " + describe(p)
    return lines[0]


def cut_off_caf():
    """The first fuzz finding without fuzz_audio's 3 option bytes: a 'data'
    chunk whose 8-byte size the file ends inside, at byte 59."""
    with open(os.path.join(ROOT, "fuzz", "regressions", "audio", "caf-stream-data-size-cut-off"),
              "rb") as f:
        return f.read()[3:]


def test_cut_off_data_chunk_is_refused_as_a_file_and_a_stream():
    data = cut_off_caf()
    assert len(data) == 59
    with open("x.caf", "wb") as f:
        f.write(data)
    why = ("bad CAF header (data chunk at byte 52: the input ends at byte 59, inside its 16 "
           "bytes of header (size, edit count))")
    p = run(["info", "x.caf"])
    expect_rc(p, 1)
    assert error_line(p) == "sigstream: error: x.caf: " + why, describe(p)
    p = run(["info", "-"], data)
    expect_rc(p, 1)
    assert error_line(p) == "sigstream: error: -: " + why, describe(p)
    for src, stdin in (("x.caf", b""), ("-", data)):
        p = run(["filter", src, "out.wav", "--lowpass", "1000"], stdin)
        expect_rc(p, 1)
        expect_in("bad CAF header", error_line(p))
        assert not os.path.exists("out.wav"), "an output was left"


def test_every_caf_regression_input_is_refused_on_a_stream():
    inputs = sorted(glob.glob(os.path.join(ROOT, "fuzz", "regressions", "audio", "caf-stream-*")))
    assert len(inputs) >= 5, inputs
    for path in inputs:
        with open(path, "rb") as f:
            data = f.read()
        assert data[0] & 3 == 1, path  # fuzz_audio: a stream, not raw
        p = run(["info", "-"], data[3:])
        expect_rc(p, 1)
        expect_in("-: bad CAF header (", error_line(p), os.path.basename(path))


def test_caf_written_by_sigstream_reads_as_a_file_and_a_stream():
    with wave.open("in.wav", "wb") as w:
        w.setnchannels(3)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(b"".join(struct.pack("<h", (i * 7919) % 65536 - 32768)
                               for i in range(4801 * 3)))
    p = run(["filter", "in.wav", "out.caf", "--lowpass", "1000", "-q"])
    expect_rc(p, 0)
    with open("out.caf", "rb") as f:
        caf = f.read()
    for args, stdin in ((["info", "out.caf"], b""), (["info", "-"], caf)):
        p = run(args, stdin)
        expect_rc(p, 0)
        text = p.stdout.decode()
        expect_in("channels:    3", text)
        expect_in("frames:      4801", text)
    # To a pipe (data size -1, "unknown") and back in.
    p = run(["filter", "in.wav", "-", "--type", "caf", "--lowpass", "1000", "-q"])
    expect_rc(p, 0)
    p = run(["filter", "-", "back.wav", "--lowpass", "1000", "-q"], p.stdout)
    expect_rc(p, 0)
    with wave.open("back.wav", "rb") as w:
        assert (w.getnchannels(), w.getnframes()) == (3, 4801), (w.getnchannels(), w.getnframes())


run_cases([test_cut_off_data_chunk_is_refused_as_a_file_and_a_stream,
           test_every_caf_regression_input_is_refused_on_a_stream,
           test_caf_written_by_sigstream_reads_as_a_file_and_a_stream], BIN, "sigstream-caf-")
