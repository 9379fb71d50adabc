#!/usr/bin/env python3
"""Stream tests for the built sigstream binary (over 600 lines as one file on
purpose: every case shares the pipe helpers and one harness call) (SPEC §6, §5): standard input
and output, FIFOs, WAV/AU/CAF headers of unknown length, raw PCM in and out,
byte identity with the file path over random pipe write sizes, a closed
reader, a stalled producer, and killed runs leaving no temporary file.

Usage: python3 test_streams.py PATH_TO_sigstream   (standard library only)

One file on purpose: ctest runs it as one test, and its cases share the
stream helpers below (WAV bytes, fed pipes, data_of); the live-mode cases
sit with the stream cases they extend.
"""

import array
import json
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time
import wave

if len(sys.argv) < 2:
    print("usage: test_streams.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from harness import Skip, run_cases  # noqa: E402

TIMEOUT = 60
ROOT_DIR = os.environ.get("SIGSTREAM_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", ".."))
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


# ---------------------------------------------------------------- helpers


def wav_bytes(frames, channels=2, rate=48000, seed=1, width=2):
    """A PCM WAV (8/16/24-bit) of seeded random samples, as bytes."""
    rng = random.Random(seed)
    import io
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(rng.randbytes(frames * channels * width))
    return buf.getvalue()


def unknown_length(wav):
    """The same WAV with RIFF and data sizes 0xFFFFFFFF, as `ffmpeg -f wav -` writes."""
    b = bytearray(wav)
    b[4:8] = b"\xff\xff\xff\xff"
    at = b.index(b"data")
    b[at + 4:at + 8] = b"\xff\xff\xff\xff"
    return bytes(b)


def data_of(wav):
    """The data chunk's bytes of a WAV (sizes may be placeholders: to the end)."""
    at = wav.index(b"data")
    size = struct.unpack("<I", wav[at + 4:at + 8])[0]
    body = wav[at + 8:]
    return body if size in (0, 0xFFFFFFFF) else body[:size]


def input_and_reference(frames, seed, args, channels=2):
    """Writes in.wav (seeded random samples) and filters it to ref.wav with
    `args`: returns the input's bytes and the file path's output bytes."""
    wav = wav_bytes(frames, channels=channels, seed=seed)
    with open("in.wav", "wb") as f:
        f.write(wav)
    check(run(["filter", "in.wav", "ref.wav"] + args))
    return wav, open("ref.wav", "rb").read()


def run(args, stdin_bytes=None, timeout=TIMEOUT):
    return subprocess.run([BIN] + list(args), input=stdin_bytes if stdin_bytes is not None else b"",
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def run_fed(args, data, sizes, timeout=TIMEOUT):
    """Runs sigstream with `data` written to its stdin in pieces of the given
    sizes (cycled), from a thread, so the reader sees every kind of short read."""
    p = subprocess.Popen([BIN] + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out = {}

    def feed():
        fd = p.stdin.fileno()
        i = at = 0
        try:
            while at < len(data):
                n = sizes[i % len(sizes)]
                os.write(fd, data[at:at + n])
                at += n
                i += 1
        except BrokenPipeError:
            pass
        finally:
            p.stdin.close()

    def drain(name, f):
        out[name] = f.read()

    threads = [threading.Thread(target=feed), threading.Thread(target=drain, args=("out", p.stdout)),
               threading.Thread(target=drain, args=("err", p.stderr))]
    for t in threads:
        t.start()
    try:
        p.wait(timeout)
    finally:
        if p.poll() is None:
            p.kill()
        for t in threads:
            t.join()
    return p.returncode, out["out"], out["err"]


def check(p, rc=0):
    if p.returncode != rc:
        raise AssertionError("expected exit %d, got %d: %s" % (rc, p.returncode, p.stderr.decode()[-800:]))


def error_text(p):
    lines = [l for l in p.stderr.decode().splitlines() if l.startswith("sigstream: error:")]
    if len(lines) != 1:
        raise AssertionError("expected one error line, got %r" % p.stderr.decode())
    return lines[0]


def config(source, sink, stages, extra=""):
    """A run config: `source` and `sink` are YAML flow mappings."""
    return ("version: 1\nsource: %s\nstages:\n%s\nsink: %s\n%s" % (source, stages, sink, extra))


STAGES = {
    "causal": "  - {type: fir, design: {kind: lowpass, cutoff_hz: 3000, taps: 101}, mode: causal, method: %s}",
    "same": "  - {type: fir, design: {kind: bandpass, cutoff_hz: [300, 5000], taps: 63}, mode: same, method: %s}",
    "full": "  - {type: fir, design: {kind: highpass, cutoff_hz: 200, taps: 31}, mode: full, method: %s}\n"
            "  - {type: gain, db: -2}\n  - {type: metrics, name: mid}",
}


# ---------------------------------------------------------------- cases


@case
def stdin_stream_is_byte_identical_to_the_file_every_mode_method_and_chunking():
    rng = random.Random(11)
    wav = wav_bytes(20011, channels=2, seed=3)
    with open("in.wav", "wb") as f:
        f.write(wav)
    for mode, tmpl in STAGES.items():
        for method in ("direct", "fft"):
            stages = tmpl % method
            for chunk in (1024, 997, 20011, 65536):
                with open("c.yaml", "w") as f:
                    f.write(config("{file: in.wav}", "{file: ref.wav}", stages,
                                   "execution: {chunk_frames: %d}\n" % chunk))
                check(run(["run", "c.yaml", "-q"]))
                ref = open("ref.wav", "rb").read()
                # The same samples on stdin, header sizes unknown, in random writes.
                with open("s.yaml", "w") as f:
                    f.write(config('{file: "-"}', "{file: out.wav}", stages,
                                   "execution: {chunk_frames: %d}\n" % chunk))
                sizes = [rng.randint(1, 9000) for _ in range(7)]
                rc, _, err = run_fed(["run", "s.yaml", "-q"], unknown_length(wav), sizes)
                assert rc == 0, err.decode()
                got = open("out.wav", "rb").read()
                assert got == ref, "%s/%s/chunk %d: stream output differs from the file's" % (mode, method, chunk)
                # And out to stdout as raw: the data chunk's bytes.
                with open("r.yaml", "w") as f:
                    f.write(config('{file: "-"}', '{file: "-", type: raw}', stages,
                                   "execution: {chunk_frames: %d}\n" % chunk))
                rc, out, err = run_fed(["run", "r.yaml", "-q"], wav, sizes[::-1])
                assert rc == 0, err.decode()
                assert out == data_of(ref), "%s/%s: raw stdout differs from the file's data" % (mode, method)
    return "3 modes x 2 methods x 4 chunkings, random write sizes"


@case
def one_byte_writes_and_a_fifo():
    wav = wav_bytes(1501, channels=3, seed=5)
    with open("in.wav", "wb") as f:
        f.write(wav)
    args = ["--lowpass", "2000", "--taps", "33", "--mode", "same", "-q"]
    check(run(["filter", "in.wav", "ref.wav"] + args))
    ref = open("ref.wav", "rb").read()
    rc, _, err = run_fed(["filter", "-", "out.wav"] + args, unknown_length(wav), [1])
    assert rc == 0, err.decode()
    assert open("out.wav", "rb").read() == ref, "1-byte writes changed the output"
    os.mkfifo("in.fifo")

    def writer():
        with open("in.fifo", "wb") as f:
            for i in range(0, len(wav), 777):
                f.write(wav[i:i + 777])
                f.flush()

    t = threading.Thread(target=writer)
    t.start()
    p = run(["filter", "in.fifo", "fifo.wav"] + args)
    t.join()
    check(p)
    assert open("fifo.wav", "rb").read() == ref, "a FIFO input changed the output"


@case
def raw_pcm_in_every_encoding_and_raw_out():
    frames, ch, rate = 4099, 2, 44100
    rng = random.Random(8)
    ints = [rng.randint(-32768, 32767) for _ in range(frames * ch)]
    wav = bytearray(wav_bytes(1, ch, rate))  # a header to graft samples into
    pcm16 = array.array("h", ints)
    if sys.byteorder != "little":
        pcm16.byteswap()
    body = pcm16.tobytes()
    at = wav.index(b"data")
    wav = bytes(wav[:at + 4]) + struct.pack("<I", len(body)) + body
    wav = wav[:4] + struct.pack("<I", len(wav) - 8) + wav[8:]
    with open("in.wav", "wb") as f:
        f.write(wav)
    args = ["--lowpass", "5000", "--taps", "41", "-q"]
    check(run(["filter", "in.wav", "ref.wav"] + args))
    ref = open("ref.wav", "rb").read()
    desc = ["--input-type", "raw", "--rate", str(rate), "--channels", str(ch)]
    # s16le and s16be are the same 16-bit samples: the same output bytes.
    be = array.array("h", ints)
    if sys.byteorder == "little":
        be.byteswap()
    for enc, data in (("s16le", body), ("s16be", be.tobytes())):
        p = run(["filter", "-", "out.wav", "--encoding", enc] + desc + args, data)
        check(p)
        assert open("out.wav", "rb").read() == ref, "raw %s input differs from the WAV's output" % enc
        with open("in.raw", "wb") as f:
            f.write(data)
        check(run(["filter", "in.raw", "file.wav", "--encoding", enc] + desc + args))
        assert open("file.wav", "rb").read() == ref, "a raw %s file differs" % enc
    # Every other encoding reads (and a 24-bit stream of the same values gives the same output).
    s24 = b"".join(struct.pack("<i", v << 8)[:3] for v in ints)  # v * 2^8 in 24 bits
    p = run(["filter", "-", "out24.wav", "--encoding", "s24le", "--format", "pcm16"] + desc + args, s24)
    check(p)
    assert open("out24.wav", "rb").read() == ref, "s24le input of 16-bit values differs"
    for enc, width in (("s8", 1), ("u8", 1), ("s32be", 4), ("f32le", 4), ("f64be", 8)):
        p = run(["filter", "-", "-", "--type", "raw", "--format", "float", "--encoding", enc] + desc + args,
                bytes(rng.randrange(256) for _ in range(101 * ch * width)) if enc[0] != "f"
                else struct.pack(("<" if enc.endswith("le") else ">") + ("f" if width == 4 else "d") * (101 * ch),
                                 *[rng.uniform(-1, 1) for _ in range(101 * ch)]))
        check(p)
        assert len(p.stdout) == 101 * ch * 4, "%s: %d bytes of float output" % (enc, len(p.stdout))
    # Raw out: --format picks the encoding; pcm16 is the WAV's data bytes.
    p = run(["filter", "in.wav", "-", "--type", "raw"] + args)
    check(p)
    assert p.stdout == data_of(ref), "raw stdout differs from the WAV's data"
    check(run(["filter", "in.wav", "out.raw"] + args))
    assert open("out.raw", "rb").read() == data_of(ref), "a .raw file output differs"


@case
def raw_errors_are_clear():
    data = bytes(range(256)) * 40 + b"xyz"  # 10243 bytes: not whole 4-byte frames
    desc = ["--input-type", "raw", "--rate", "48000", "--channels", "2", "--encoding", "s16le"]
    p = run(["filter", "-", "o.wav", "--lowpass", "1000", "-q"] + desc, data)
    check(p, 1)
    msg = error_text(p)
    assert "inside frame 2560" in msg and "3 of its 4 bytes" in msg, msg
    assert not os.path.exists("o.wav")
    for missing in ("--rate", "--channels", "--encoding"):
        args = [a for i, a in enumerate(desc) if a != missing and (i == 0 or desc[i - 1] != missing)]
        p = run(["filter", "-", "o.wav", "--lowpass", "1000"] + args, data)
        check(p, 2)
        assert missing in error_text(p), error_text(p)
    p = run(["filter", "-", "o.wav", "--lowpass", "1000", "--rate", "48000"], data)
    check(p, 2)
    assert "--input-type raw" in error_text(p)
    with open("x.raw", "wb") as f:
        f.write(data[:4096])
    p = run(["filter", "x.raw", "o.wav", "--lowpass", "1000"])
    check(p, 2)
    assert "--input-type raw" in error_text(p)
    with open("x.pcm", "wb") as f:
        f.write(data)
    p = run(["filter", "x.pcm", "o.wav", "--lowpass", "1000"] + desc)
    check(p, 1)
    assert "raw file ends inside frame 2560" in error_text(p), error_text(p)
    p = run(["filter", "-", "-", "--lowpass", "1000"] + desc, data[:4096])
    check(p, 2)
    assert "--type" in error_text(p)
    with open("bad.yaml", "w") as f:
        f.write('version: 1\nsource: {file: "-", raw: {sample_rate: 48000, channels: 2}}\nstages: []\n'
                'sink: {file: "-"}\n')
    p = run(["run", "bad.yaml"])
    check(p, 2)
    err = p.stderr.decode()
    assert "bad.yaml:2" in err and "source.raw.encoding" in err and "sink.type" in err, err


@case
def headers_of_unknown_length_and_truncation():
    wav, ref = input_and_reference(3000, 2, ["--lowpass", "1000", "-q"])
    # A file saved from a pipe keeps its placeholder sizes: still read whole.
    with open("saved.wav", "wb") as f:
        f.write(unknown_length(wav))
    check(run(["filter", "saved.wav", "out.wav", "--lowpass", "1000", "-q"]))
    assert open("out.wav", "rb").read() == ref
    p = run(["info", "-"], unknown_length(wav))
    check(p)
    text = p.stdout.decode()
    assert "frames:      3000\n" in text and text.endswith("\n"), text
    # A header of known length whose stream ends early is truncated (exit 1).
    p = run(["filter", "-", "out2.wav", "--lowpass", "1000"], wav[:len(wav) - 1001])
    check(p, 1)
    assert "truncated" in error_text(p), error_text(p)
    assert not os.path.exists("out2.wav")
    p = run(["filter", "-", "out3.wav", "--lowpass", "1000"], b"")
    check(p, 1)
    assert "no audio frames" in error_text(p)
    p = run(["filter", "-", "out3.wav", "--lowpass", "1000"], unknown_length(wav)[:44])
    check(p, 1)
    assert "no audio frames" in error_text(p)


@case
def stdout_containers_read_back_and_mark_unknown_sizes():
    _, ref = input_and_reference(5003, 4, ["--lowpass", "1000", "-q"])
    ref_data = data_of(ref)
    with open("one.txt", "w") as f:
        f.write("1\n")  # an identity filter: what comes back is what was sent
    raw_desc = ["--input-type", "raw", "--rate", "48000", "--channels", "2", "--encoding", "s16le"]
    for t in ("wav", "au", "caf", "flac", "raw"):
        p = run(["filter", "in.wav", "-", "--type", t, "--lowpass", "1000", "-q"])
        check(p)
        out = p.stdout
        if t == "wav":
            assert out[4:8] == b"\xff" * 4 and data_of(out) == ref_data, "wav stdout"
            assert out[out.index(b"data") + 4:out.index(b"data") + 8] == b"\xff" * 4
        if t == "au":
            assert out[8:12] == b"\xff" * 4, "au data size should be 'unknown'"
        back = run(["filter", "-", "-", "--type", "raw", "--taps-file", "one.txt", "-q"] +
                   (raw_desc if t == "raw" else []), out)
        check(back)
        assert back.stdout == ref_data, "%s on stdout does not read back to the same samples" % t


@case
def statistics_and_verify_on_a_stream():
    wav = wav_bytes(7001, channels=1, seed=9)
    with open("c.yaml", "w") as f:
        f.write(config('{file: "-"}', '{file: "-", type: wav}', STAGES["full"] % "direct",
                       "stats: {json: s.json, csv: s.csv}\nexecution: {chunk_frames: 1000}\n"))
    p = run(["run", "c.yaml", "--verify"], unknown_length(wav))
    check(p)
    assert "verify passed" in p.stderr.decode()
    st = json.load(open("s.json"))
    assert st["input"]["frames"] == 7001, st["input"]
    assert st["output"]["frames"] == 7001 + 30, st["output"]
    assert st["input"]["path"] == "-"
    chunks = st["metrics"]["output"]["chunks"]
    assert sum(c["frames"] for c in chunks) == 7031 and len(chunks) == 8
    rows = open("s.csv").read().splitlines()
    assert len(rows) == 1 + 2 * 8, len(rows)
    assert st["verification"]["passed"] is True


@case
def a_closed_reader_stops_the_run_quietly():
    wav = wav_bytes(48000 * 20, channels=2, seed=1)
    with open("big.wav", "wb") as f:
        f.write(wav)
    t0 = time.monotonic()
    p = subprocess.Popen([BIN, "filter", "big.wav", "-", "--type", "raw", "--lowpass", "1000",
                          "--method", "direct", "--taps", "2047"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = p.stdout.read(1000)
    p.stdout.close()
    err = p.stderr.read().decode()
    rc = p.wait(TIMEOUT)
    assert len(head) == 1000
    assert rc == 0, "exit %d: %s" % (rc, err)
    assert "error" not in err.lower(), err
    return "stopped %.2f s after the reader closed" % (time.monotonic() - t0)


@case
def sigint_with_a_stalled_producer_exits_and_sigkill_leaves_no_file():
    wav = unknown_length(wav_bytes(48000, channels=2, seed=6))
    for sig, want in ((signal.SIGINT, 130), (signal.SIGKILL, -9)):
        os.makedirs("outdir", exist_ok=True)
        p = subprocess.Popen([BIN, "filter", "-", "outdir/o.wav", "--lowpass", "1000", "-q"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(wav[:100000])  # and then nothing: the producer stalls
        p.stdin.flush()
        time.sleep(0.5)
        t0 = time.monotonic()
        p.send_signal(sig)
        try:
            rc = p.wait(5)
        finally:
            if p.poll() is None:
                p.kill()
            p.stdin.close()
        assert rc == want, "signal %d: exit %s" % (sig, rc)
        assert time.monotonic() - t0 < 2.0
        left = os.listdir("outdir")
        assert left == [], "a %s run left %r" % (signal.Signals(sig).name, left)


def float_samples(path):
    """A float WAV's samples (32-bit IEEE), as a flat list."""
    data = open(path, "rb").read()
    body = data_of(data)
    return array.array("f", body[:len(body) // 4 * 4]).tolist()


@case
def live_mode_direct_gives_the_files_bytes_in_every_mode_and_cascade():
    wav = wav_bytes(9001, channels=2, seed=12)
    with open("in.wav", "wb") as f:
        f.write(wav)
    cascade = ("  - {type: fir, design: {kind: lowpass, cutoff_hz: 4000, taps: 31}, mode: same, method: direct}\n"
               "  - {type: metrics, name: a}\n"
               "  - {type: fir, design: {kind: highpass, cutoff_hz: 100, taps: 201}, mode: full, method: direct}\n"
               "  - {type: gain, db: 3}\n"
               "  - {type: fir, taps: [0.25, 0.5, 0.25], mode: same, method: direct}")
    chains = [STAGES[m] % "direct" for m in STAGES] + [cascade]
    for i, stages in enumerate(chains):
        with open("f.yaml", "w") as f:
            f.write(config("{file: in.wav}", "{file: ref.wav}", stages, "stats: {json: ref.json}\n"))
        check(run(["run", "f.yaml", "-q"]))
        for latency in ("1", "0.5", "7.3"):
            with open("l.yaml", "w") as f:
                f.write(config('{file: "-"}', '{file: "-", type: raw}', stages,
                               "stats: {json: live.json, csv: live.csv}\nexecution: {latency_ms: %s}\n" % latency))
            rc, out, err = run_fed(["run", "l.yaml", "-q"], unknown_length(wav), [4096, 192, 7])
            assert rc == 0, err.decode()
            assert out == data_of(open("ref.wav", "rb").read()), "chain %d, latency %s: live bytes differ" % (i, latency)
            ref, live = json.load(open("ref.json")), json.load(open("live.json"))
            assert live["output"]["frames"] == ref["output"]["frames"]
            lat = live["latency_ms"]
            assert lat["target"] == float(latency) and lat["chunks"] > 0 and lat["p50"] <= lat["p99"] <= lat["max"]
            for name, block in ref["metrics"].items():
                for a, b in zip(block["totals"]["channels"], live["metrics"][name]["totals"]["channels"]):
                    for key in ("energy", "dot_input", "peak"):
                        assert abs(a[key] - b[key]) <= 1e-9 * max(1.0, abs(a[key])), (name, key, a[key], b[key])
            rows = open("live.csv").read().splitlines()
            assert rows[0].startswith("stage,chunk,start_frame") and len(rows) > 1
    return "%d chains x 3 latencies" % len(chains)


@case
def live_mode_partitioned_long_filters_stay_within_spec():
    wav = wav_bytes(30011, channels=2, seed=13)
    with open("in.wav", "wb") as f:
        f.write(wav)
    # A same stage first, so the partitioned one meets its input off the block grid.
    stages = ("  - {type: fir, design: {kind: lowpass, cutoff_hz: 8000, taps: 45}, mode: same, method: direct}\n"
              "  - {type: fir, design: {kind: lowpass, cutoff_hz: 3000, taps: 4095}, mode: %s, method: %s}")
    for mode in ("causal", "same", "full"):
        with open("f.yaml", "w") as f:
            f.write(config("{file: in.wav}", "{file: ref.wav, format: float}", stages % (mode, "direct")))
        check(run(["run", "f.yaml", "-q"]))
        with open("l.yaml", "w") as f:
            f.write(config("{file: in.wav}", "{file: live.wav, format: float}", stages % (mode, "fft"),
                           "execution: {latency_ms: 1}\nstats: {json: s.json}\n"))
        p = run(["run", "l.yaml"])
        check(p)
        assert "partitioned" in p.stderr.decode(), p.stderr.decode()
        a, b = float_samples("ref.wav"), float_samples("live.wav")
        assert len(a) == len(b), (mode, len(a), len(b))
        err = sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5 / sum(x * x for x in a) ** 0.5
        assert err < 1e-5, "%s: partitioned rel L2 %.3g" % (mode, err)
        assert json.load(open("s.json"))["stages"][1]["method"] == "fft"


def spinning_live_mode(key: str) -> None:
    """A live mode that spins (execution.busy_poll, or .redundant: two lanes
    that both spin): the same bytes as the file path, the same statistics
    shape, a stalled producer or reader still ends at SIGINT, and it is
    refused outside live mode."""
    flag = "--" + key.replace("_", "-")
    marker = {"busy_poll": "busy polling", "redundant": "redundant: two threads"}[key]
    wav = wav_bytes(7919, channels=3, seed=21)
    with open("in.wav", "wb") as f:
        f.write(wav)
    stages = STAGES["causal"] % "direct"
    with open("f.yaml", "w") as f:
        f.write(config("{file: in.wav}", "{file: ref.wav}", stages))
    check(run(["run", "f.yaml", "-q"]))
    with open("l.yaml", "w") as f:
        f.write(config('{file: "-"}', '{file: "-", type: raw}', stages,
                       "stats: {json: live.json}\nexecution: {latency_ms: 0.7, %s: true}\n" % key))
    rc, out, err = run_fed(["run", "l.yaml"], unknown_length(wav), [1, 3001, 64])
    assert rc == 0, err.decode()
    assert marker in err.decode(), err.decode()[-600:]
    assert out == data_of(open("ref.wav", "rb").read()), "%s live bytes differ from the file's" % flag
    lat = json.load(open("live.json"))["latency_ms"]
    assert lat["chunks"] > 0 and lat["p50"] <= lat["p99"] <= lat["max"]
    if key == "redundant":  # every block written once, by one lane or the other
        assert len(lat["lanes"]) == 2 and sum(lane["written"] for lane in lat["lanes"]) == lat["chunks"], lat
    else:
        assert "lanes" not in lat
    # The flag on filter, too. A producer that stalls: the thread spins (CPU time
    # about the wall time of the stall, where a sleeping wait takes almost
    # none) and still stops at SIGINT; then a reader that stalls (a full output pipe).
    for stalled in ("input", "output"):
        p = subprocess.Popen([BIN, "filter", "-", "-", "--type", "raw", "--lowpass", "1000", "--latency", "1",
                              flag, "--no-progress"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        try:
            # The input stalls after 20 kB; or there is more than the output pipe
            # holds, never read (fed from a thread: sigstream stops reading).
            data = unknown_length(wav)[:20000] if stalled == "input" else unknown_length(
                wav_bytes(480000, channels=3, seed=22))

            def feed(data=data):
                try:
                    os.write(p.stdin.fileno(), data)
                except OSError:
                    pass

            threading.Thread(target=feed, daemon=True).start()
            line = b""
            while marker.encode() not in line:
                line = p.stderr.readline()
                assert line, "no '%s' line before the run ended" % marker
            assert b"real-time priority (SCHED_FIFO" not in line
            time.sleep(0.3)  # into the stall
            cpu0 = time.monotonic()
            usage0 = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
            time.sleep(0.6)
            usage1 = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
            wall = time.monotonic() - cpu0
            ticks = os.sysconf("SC_CLK_TCK")
            cpu = sum(int(usage1[i]) - int(usage0[i]) for i in (11, 12)) / ticks  # utime + stime
            assert cpu > 0.2 * wall, "%s stalled: %.2f s of CPU in %.2f s: the wait did not spin" % (stalled, cpu, wall)
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            rc = p.wait(5)
        finally:
            if p.poll() is None:
                p.kill()
            p.stdin.close()
        assert rc == 130, "%s SIGINT with a stalled %s: exit %s" % (flag, stalled, rc)
        assert time.monotonic() - t0 < 2.0
    # Outside live mode it would do nothing: refused, exit 2, by both spellings.
    p = run(["filter", "in.wav", "o.wav", "--lowpass", "1000", flag])
    check(p, 2)
    assert "--latency" in error_text(p) and not os.path.exists("o.wav")
    with open("c.yaml", "w") as f:
        f.write(config("{file: in.wav}", "{file: o.wav}", stages, "execution: {%s: true}\n" % key))
    p = run(["run", "c.yaml"])
    check(p, 2)
    assert key in error_text(p) and not os.path.exists("o.wav")
    with open("c.yaml", "w") as f:
        f.write(config("{file: in.wav}", "{file: o.wav}", stages, "execution: {latency_ms: 1, %s: 3}\n" % key))
    p = run(["run", "c.yaml"])
    check(p, 2)
    assert "execution." + key in p.stderr.decode()
    with open("b.yaml", "w") as f:
        f.write("version: 1\nstages:\n%s\nsink: {file: o.wav}\nbatch: {inputs: [in.wav], out_dir: bout}\n" % stages)
    p = run(["batch", "b.yaml", "--set", "execution.%s=true" % key])
    check(p, 2)
    assert key in error_text(p) and not os.path.exists("bout")


@case
def busy_poll_gives_the_same_bytes_and_still_stops_on_sigint():
    spinning_live_mode("busy_poll")


@case
def redundant_lanes_give_the_same_bytes_and_still_stop_on_sigint():
    spinning_live_mode("redundant")


@case
def live_mode_errors():
    with open("in.wav", "wb") as f:
        f.write(wav_bytes(1000))
    p = run(["filter", "in.wav", "o.wav", "--lowpass", "1000", "--latency", "1", "--verify"])
    check(p, 2)
    assert "--verify" in error_text(p)
    p = run(["filter", "in.wav", "o.wav", "--lowpass", "1000", "--latency", "0"])
    check(p, 2)
    with open("c.yaml", "w") as f:
        f.write(config("{file: in.wav}", "{file: o.wav}", STAGES["causal"] % "direct",
                       "execution: {latency_ms: -3}\n"))
    p = run(["run", "c.yaml"])
    check(p, 2)
    assert "c.yaml:" in p.stderr.decode() and "execution.latency_ms" in p.stderr.decode()
    assert not os.path.exists("o.wav")


@case
def review_regressions_wav_streams_closed_output_short_streams_and_seekable_stdout():
    import select
    wav = wav_bytes(48000, channels=2, seed=21)
    # A WAV of unknown size in live mode: output comes while the producer is
    # still connected (the header parse does not wait for 16 MiB of stream).
    p = subprocess.Popen([BIN, "filter", "-", "-", "--type", "raw", "--lowpass", "1000", "--latency", "10", "-q"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(unknown_length(wav)[:44 + 4 * 9600])
    p.stdin.flush()
    ready, _, _ = select.select([p.stdout], [], [], 3.0)
    got = os.read(p.stdout.fileno(), 65536) if ready else b""
    p.stdin.close()
    p.wait(TIMEOUT)
    assert got, "no live output within 3 s of 0.2 s of WAV input"
    # A data size of 0 (a header written before the length was known) is read to the end.
    z = bytearray(wav)
    at = z.index(b"data")
    z[at + 4:at + 8] = b"\0\0\0\0"
    p = run(["info", "-"], bytes(z))
    check(p)
    assert "frames:      48000\n" in p.stdout.decode(), p.stdout.decode()
    # A closed output with a stalled producer: the run ends at once, quietly.
    with open("c.yaml", "w") as f:
        f.write(config('{file: "-", raw: {sample_rate: 48000, channels: 2, encoding: s16le}}',
                       '{file: "-", type: raw}', STAGES["causal"] % "direct", "execution: {chunk_frames: 4096}\n"))
    p = subprocess.Popen([BIN, "run", "c.yaml", "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    feeder = threading.Thread(target=lambda: (p.stdin.write(bytes(4 * 100_000)), p.stdin.flush()), daemon=True)
    feeder.start()  # and then nothing more: the producer stalls, its end open
    p.stdout.read(1000)
    p.stdout.close()
    t0 = time.monotonic()
    try:
        rc = p.wait(5)
    finally:
        if p.poll() is None:
            p.kill()
    err = p.stderr.read().decode()
    assert rc == 0 and "error" not in err.lower(), (rc, err)
    assert time.monotonic() - t0 < 2.0, "took %.2f s" % (time.monotonic() - t0)
    feeder.join()
    p.stdin.close()
    # A stream shorter than a chunk is planned as its file (auto picks the same method).
    short = wav_bytes(1000, channels=2, seed=22)
    with open("short.wav", "wb") as f:
        f.write(short)
    for taps in ("255", "1023"):
        args = ["--lowpass", "3000", "--taps", taps, "--backend", "cpu", "-q"]
        check(run(["filter", "short.wav", "f.wav"] + args))
        check(run(["filter", "-", "s.wav"] + args, unknown_length(short)))
        assert open("f.wav", "rb").read() == open("s.wav", "rb").read(), "short stream, %s taps" % taps
    # Standard output redirected to a file can seek: true sizes, and CAF reads back.
    for t in ("wav", "caf"):
        with open("o." + t, "wb") as out:
            q = subprocess.run([BIN, "filter", "short.wav", "-", "--type", t, "--lowpass", "3000", "-q"],
                               stdout=out, stderr=subprocess.PIPE, timeout=TIMEOUT)
        check(q)
        info = run(["info", "o." + t])
        check(info)
        assert "frames:      1000\n" in info.stdout.decode(), info.stdout.decode()
    assert open("o.wav", "rb").read()[4:8] != b"\xff" * 4


@case
def wave64_on_a_pipe():
    """Wave64 through a pipe (issue P10): a malformed header used to keep
    libsndfile in its chunk loop for ever (fuzz/regressions/audio); now it is
    an error at once, and a whole Wave64 still reads as its file does."""
    bad = open(os.path.join(ROOT_DIR, "fuzz", "regressions", "audio", "w64-stream-chunk-loop"), "rb").read()[3:]
    t0 = time.monotonic()
    r = run(["info", "-"], bad, timeout=20)
    assert r.returncode == 1 and b"W64" in r.stderr, (r.returncode, r.stderr)
    assert time.monotonic() - t0 < 5
    wav_bytes_ = wav_bytes(30011, channels=2, seed=31)
    with open("in.wav", "wb") as f:
        f.write(wav_bytes_)
    check(run(["filter", "in.wav", "in.w64", "--format", "pcm16", "--lowpass", "20000", "-q"]))
    args = ["--lowpass", "3000", "--backend", "cpu", "-q"]
    check(run(["filter", "in.w64", "f.wav"] + args))
    check(run(["filter", "-", "s.wav"] + args, open("in.w64", "rb").read()))
    assert open("f.wav", "rb").read() == open("s.wav", "rb").read()


if __name__ == "__main__":
    run_cases(CASES, BIN, "sigstream-streams-")
