#!/usr/bin/env python3
"""Files libsndfile does not read, decoded by FFmpeg (SPEC §14): AAC and ALAC
in M4A, Opus in WebM and the audio of an MP4 with video, made here by ffmpeg
from random programme, give FFmpeg's own decode (`ffmpeg -i F -map 0:a:0 -f
f32le -`) bit for bit, and `info` names the codec and counts those frames; a
batch's folder walk picks them up, normalize reads them twice; a corrupt M4A
is exit 1 naming the file and FFmpeg's reason; ffmpeg missing is exit 1 with
the install hint; SIGINT during a decode leaves no ffmpeg process behind;
standard input (WebM, an M4A with its index first) decodes as the file does
(noise there is exit 1 with FFmpeg's reason),
and an output pipe closed mid-decode leaves no child.
.m4a outputs are AAC encoded by the same child (--quality sets the bit rate),
equal to the WAV run within AAC's noise, committed whole or not at all (an
encoder that fails, SIGINT during the encode).
The decode child also shows which GPUs sigstream's CUDA driver was left to
see: a filter's one device and a batch's execution.device list cut
CUDA_VISIBLE_DEVICES to the entries up to the highest index (issue P11),
--backend cpu and a batch on every GPU leave it as it was.
Every case skips where ffmpeg is not installed.

Usage: python3 test_ffmpeg_cli.py PATH_TO_sigstream
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

if len(sys.argv) < 2:
    print("usage: test_ffmpeg_cli.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import Skip, expect_in, expect_rc, run_cases, write_pcm16  # noqa: E402

RATE = 48000


def need_ffmpeg() -> None:
    if shutil.which("ffmpeg") is None:
        raise Skip("ffmpeg is not installed")


def sh(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([BIN, *args], capture_output=True, text=True, **kw)


def ffmpeg(*args: str) -> None:
    p = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def has_encoder(name: str) -> bool:
    p = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True)
    return any(line.split()[1:2] == [name] for line in p.stdout.splitlines() if line.startswith(" "))


def programme(seconds: float, seed: int, channels: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE) + 937
    level = np.repeat(10 ** (rng.uniform(-30, -8, size=n // 12000 + 1) / 20), 12000)[:n]
    return (rng.standard_normal((n, channels)) * level[:, None]).clip(-0.99, 0.99)


def ffmpeg_decode(path: str) -> np.ndarray:
    """FFmpeg's own float32 samples of the first audio stream, interleaved."""
    p = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "f32le", "-"],
                       capture_output=True)
    assert p.returncode == 0, p.stderr
    return np.frombuffer(p.stdout, "<f4")


def read_float_wav(path: str) -> tuple[np.ndarray, int, int]:
    """(interleaved float32 samples, rate, channels) of a float WAV sigstream wrote."""
    data = open(path, "rb").read()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", data[:12]
    at, rate, channels, samples = 12, 0, 0, None
    while at < len(data):
        cid, size = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "little")
        body = data[at + 8:at + 8 + size]
        if cid == b"fmt ":
            channels = int.from_bytes(body[2:4], "little")
            rate = int.from_bytes(body[4:8], "little")
        elif cid == b"data":
            samples = np.frombuffer(body, "<f4")
        at += 8 + size + (size & 1)
    assert samples is not None
    return samples, rate, channels


def copy_config(src: str, out: str) -> str:
    """A run that passes the signal through a metrics block (no arithmetic) into a float WAV."""
    with open("copy.yaml", "w") as f:
        f.write("version: 1\nsource: {file: \"%s\"}\nstages:\n  - {type: metrics, name: m}\n"
                "sink: {file: %s, format: float}\nexecution: {backend: cpu}\n" % (src, out))
    return "copy.yaml"


def children_of(pid: int, wait_s: float = 10.0) -> list[str]:
    """The process's children, waiting up to wait_s for one to appear."""
    end = time.time() + wait_s
    while True:
        kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
        if kids or time.time() > end:
            return kids
        time.sleep(0.05)


def gone(pids: list[str]) -> bool:
    """Whether none of these processes is still an ffmpeg (reaped, or the pid reused by another)."""
    for p in pids:
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if b"ffmpeg" in f.read():
                    return False
        except FileNotFoundError:
            pass
    return True


def make_fixtures() -> list[tuple[str, str, int]]:
    """(file, codec, channels) made from random programme at odd lengths."""
    write_pcm16("st.wav", programme(3.3, 1))
    write_pcm16("mono.wav", programme(2.1, 2, channels=1))
    write_pcm16("six.wav", programme(1.7, 3, channels=6))
    made = []
    ffmpeg("-i", "st.wav", "-c:a", "aac", "-b:a", "128k", "aac.m4a")
    made.append(("aac.m4a", "aac", 2))
    ffmpeg("-i", "six.wav", "-c:a", "alac", "alac.m4a")
    made.append(("alac.m4a", "alac", 6))
    if has_encoder("libopus"):
        ffmpeg("-i", "mono.wav", "-c:a", "libopus", "-b:a", "48k", "opus.webm")
        made.append(("opus.webm", "opus", 1))
    # Audio inside a video: the first audio stream, the picture left out.
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=3", "-i", "st.wav", "-map", "0:v",
           "-map", "1:a", "-c:v", "mpeg4", "-c:a", "aac", "-shortest", "video.mp4")
    made.append(("video.mp4", "aac", 2))
    return made


def fixtures_give_ffmpegs_samples():
    """Each fixture through sigstream (a metrics block, float WAV out) equals FFmpeg's decode to the
    bit; info names the codec ("aac via ffmpeg") and counts FFmpeg's frames."""
    need_ffmpeg()
    said = []
    for name, codec, channels in make_fixtures():
        want = ffmpeg_decode(name)
        p = sh(["run", copy_config(name, "out.wav"), "-q"])
        expect_rc(p, 0)
        got, rate, ch = read_float_wav("out.wav")
        assert ch == channels and rate in (44100, 48000), (name, ch, rate)
        assert got.size == want.size, (name, got.size, want.size)
        assert np.array_equal(got.view("<u4"), want.view("<u4")), name
        q = sh(["info", name])
        expect_rc(q, 0)
        expect_in("%s via ffmpeg" % codec, q.stdout, "info of " + name)
        expect_in("frames:      %d" % (want.size // channels), q.stdout, "info of " + name)
        said.append("%s %d frames" % (name, want.size // channels))
    return "; ".join(said)


def batch_walk_and_normalize():
    """A folder walk takes .m4a, .webm and .mp4 beside .wav; normalize runs FFmpeg for each pass."""
    need_ffmpeg()
    os.mkdir("in")
    write_pcm16("in/a.wav", programme(1.2, 5))
    ffmpeg("-i", "in/a.wav", "-c:a", "aac", "in/b.m4a")
    ffmpeg("-i", "in/a.wav", "-c:a", "alac", "in/c.mp4")
    with open("b.yaml", "w") as f:
        f.write("version: 1\nsource: {file: x.wav}\nstages:\n"
                "  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: 63}}\n"
                "sink: {file: x.wav}\n")
    p = sh(["batch", "b.yaml", "in", "--out-dir", "o", "--quiet", "--backend", "cpu"])
    expect_rc(p, 0)
    with open("o/batch_summary.json") as f:
        files = sorted(os.path.basename(e["file"]) for e in json.load(f)["files"])
    assert files == ["a.wav", "b.m4a", "c.mp4"], files
    q = sh(["filter", "in/b.m4a", "n.wav", "--normalize", "peak:-1", "--backend", "cpu", "-q"])
    expect_rc(q, 0)
    got, _, _ = read_float_wav("n.wav")
    peak = 20 * np.log10(np.abs(got).max())
    assert abs(peak + 1.0) < 0.01, peak
    return "batch of %s; normalize peak:-1 of an M4A: %.3f dBFS" % (", ".join(files), peak)


def corrupt_and_missing():
    """A truncated M4A (no moov atom) is exit 1 naming the file and FFmpeg's reason, with no output
    left; SIGSTREAM_FFMPEG naming no program is exit 1 with the install hint."""
    need_ffmpeg()
    write_pcm16("s.wav", programme(1.5, 7))
    ffmpeg("-i", "s.wav", "-c:a", "aac", "good.m4a")
    data = open("good.m4a", "rb").read()
    open("bad.m4a", "wb").write(data[: len(data) // 2])
    p = sh(["filter", "bad.m4a", "out.wav", "--lowpass", "3000", "--backend", "cpu"])
    expect_rc(p, 1)
    expect_in("bad.m4a", p.stderr)
    expect_in("ffmpeg", p.stderr)
    assert not os.path.exists("out.wav") and [f for f in os.listdir(".") if "out" in f] == [], os.listdir(".")
    env = dict(os.environ, SIGSTREAM_FFMPEG="/nonexistent/ffmpeg")
    q = sh(["filter", "good.m4a", "out.wav", "--lowpass", "3000", "--backend", "cpu"], env=env)
    expect_rc(q, 1)
    expect_in("good.m4a: not a format libsndfile reads; install ffmpeg", q.stderr)
    # Named .wav but not audio: said as such, without FFmpeg's "Invalid data" alone; an empty file
    # is said to be empty (FFmpeg is not started for it).
    open("text.wav", "w").write("a text file, not a WAV\n")
    open("empty.wav", "wb").close()
    t = sh(["filter", "text.wav", "o1.wav", "--lowpass", "3000", "--backend", "cpu"])
    expect_rc(t, 1)
    expect_in("text.wav: not an audio file that libsndfile or ffmpeg reads (ffmpeg: exit status", t.stderr)
    e = sh(["filter", "empty.wav", "o2.wav", "--lowpass", "3000", "--backend", "cpu"])
    expect_rc(e, 1)
    expect_in("empty.wav: empty file (0 bytes), not audio", e.stderr)
    assert not [f for f in os.listdir(".") if f.startswith("o1") or f.startswith("o2")], os.listdir(".")
    return "corrupt: %s" % p.stderr.strip().splitlines()[-1][:160]


def sigint_leaves_no_child():
    """SIGINT to sigstream alone while FFmpeg decodes (a wrapper makes it decode in real time): exit
    130, no output, and no ffmpeg process left (sigstream's child while it ran is gone after)."""
    need_ffmpeg()
    write_pcm16("long.wav", programme(20.0, 9))
    name = "sigint-%d.m4a" % os.getpid()
    ffmpeg("-i", "long.wav", "-c:a", "aac", name)
    with open("slow-ffmpeg", "w") as f:
        f.write("#!/bin/sh\nexec ffmpeg -re \"$@\"\n")
    os.chmod("slow-ffmpeg", 0o755)
    env = dict(os.environ, SIGSTREAM_FFMPEG=os.path.abspath("slow-ffmpeg"))
    p = subprocess.Popen([BIN, "filter", name, "out.wav", "--lowpass", "3000", "--backend", "cpu"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    children = children_of(p.pid)
    assert children, "no ffmpeg child seen while decoding"
    time.sleep(0.5)  # into the decode
    assert p.poll() is None, "sigstream ended before the signal"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 130, (p.returncode, err)
    assert gone(children), "ffmpeg left running: %s" % children
    assert not os.path.exists("out.wav")
    return "exit 130; ffmpeg pid %s while decoding, gone after" % ",".join(children)


def m4a_outputs():
    """filter to .m4a: AAC (ffprobe), the rate and channels, the WAV run's samples within AAC's
    noise (over 15 dB SNR on noise at 128 kb/s), --quality 1 a higher bit rate than --quality 0; an encoder
    that fails is exit 1 with its reason and no file; SIGINT mid-encode is exit 130, no file, no
    ffmpeg left."""
    need_ffmpeg()
    write_pcm16("in.wav", programme(3.0, 11))
    expect_rc(sh(["filter", "in.wav", "ref.wav", "--lowpass", "5000", "--format", "float", "-q"]), 0)
    expect_rc(sh(["filter", "in.wav", "o.m4a", "--lowpass", "5000", "-q"]), 0)
    probe = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels",
                            "-of", "default=nw=1", "o.m4a"], capture_output=True, text=True).stdout
    assert "codec_name=aac" in probe and "sample_rate=48000" in probe and "channels=2" in probe, probe
    ref, _, _ = read_float_wav("ref.wav")
    dec = ffmpeg_decode("o.m4a")[: ref.size]
    snr = 10 * np.log10(np.sum(ref.astype(float) ** 2) / np.sum((dec - ref).astype(float) ** 2))
    assert snr > 15, snr  # misaligned or other samples would give ~0 dB
    rates = []
    for q in ("0", "1"):
        expect_rc(sh(["filter", "in.wav", "q%s.m4a" % q, "--lowpass", "5000", "--quality", q, "-q"]), 0)
        rates.append(os.path.getsize("q%s.m4a" % q))
    assert rates[1] > 2 * rates[0], rates
    with open("bad-ffmpeg", "w") as f:
        f.write("#!/bin/sh\necho 'Encoder went away' >&2\nexit 3\n")
    os.chmod("bad-ffmpeg", 0o755)
    p = sh(["filter", "in.wav", "x.m4a", "--lowpass", "5000"], env=dict(os.environ, SIGSTREAM_FFMPEG="./bad-ffmpeg"))
    expect_rc(p, 1)
    expect_in("x.m4a: ffmpeg", p.stderr)
    assert not os.path.exists("x.m4a")
    write_pcm16("long.wav", programme(30.0, 12))
    with open("slow-ffmpeg", "w") as f:
        f.write("#!/bin/sh\nexec ffmpeg -re \"$@\"\n")
    os.chmod("slow-ffmpeg", 0o755)
    r = subprocess.Popen([BIN, "filter", "long.wav", "slow.m4a", "--lowpass", "5000", "--backend", "cpu"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, SIGSTREAM_FFMPEG=os.path.abspath("slow-ffmpeg")))
    children = children_of(r.pid)
    assert children, "no ffmpeg encoding"
    time.sleep(0.5)  # into the encode
    r.send_signal(signal.SIGINT)
    _, err = r.communicate(timeout=20)
    assert r.returncode == 130, (r.returncode, err)
    assert gone(children), "ffmpeg left running: %s" % children
    assert not os.path.exists("slow.m4a") and not [f for f in os.listdir(".") if "slow.m4a" in f]
    return "AAC at %.1f dB SNR; %d / %d bytes at quality 0 / 1; a failed encoder and SIGINT leave nothing" % (
        snr, rates[0], rates[1])


def standard_input_and_a_closed_output():
    """On standard input, from a pipe and from a file: Opus in WebM and an M4A with its index first
    (-movflags +faststart) give FFmpeg's decode of the file bit for bit; bytes that are no audio at
    all: exit 1 with FFmpeg's reason. An output pipe closed by its reader mid-decode ends the run quietly
    (exit 0) with the ffmpeg child gone."""
    need_ffmpeg()
    write_pcm16("st.wav", programme(2.6, 21))
    ffmpeg("-i", "st.wav", "-c:a", "aac", "-movflags", "+faststart", "fast.m4a")
    names = ["fast.m4a"]
    if has_encoder("libopus"):
        ffmpeg("-i", "st.wav", "-c:a", "libopus", "opus.webm")
        names.append("opus.webm")
    for name in names:
        for via in ("pipe", "file"):  # `cat F |` and `< F` (seekable: FFmpeg reads it from its start)
            if via == "pipe":
                p = subprocess.run([BIN, "run", copy_config("-", "out.wav"), "-q"],
                                   input=open(name, "rb").read(), capture_output=True)
            else:
                with open(name, "rb") as f:
                    p = subprocess.run([BIN, "run", copy_config("-", "out.wav"), "-q"], stdin=f,
                                       capture_output=True)
            assert p.returncode == 0, (name, via, p.stderr)
            got, _, _ = read_float_wav("out.wav")
            want = ffmpeg_decode(name)
            assert np.array_equal(got.view("<u4"), want.view("<u4")), (name, via, got.size, want.size)
    noise = np.random.default_rng(23).integers(0, 256, 20000, dtype=np.uint8).tobytes()
    q = subprocess.run([BIN, "run", copy_config("-", "out2.wav"), "-q"], input=b"\x00\x01" + noise,
                       capture_output=True)
    assert q.returncode == 1, q
    err = q.stderr.decode()
    expect_in("ffmpeg", err)
    assert not os.path.exists("out2.wav")
    write_pcm16("long.wav", programme(30.0, 22))
    ffmpeg("-i", "long.wav", "-c:a", "aac", "long.m4a")
    with open("slow-ffmpeg", "w") as f:
        f.write("#!/bin/sh\nexec ffmpeg -re \"$@\"\n")
    os.chmod("slow-ffmpeg", 0o755)
    with open("closed.yaml", "w") as f:  # chunks of 0.1 s: the first goes out at once
        f.write("version: 1\nsource: {file: long.m4a}\nstages:\n  - {type: metrics, name: m}\n"
                "sink: {file: \"-\", type: wav}\nexecution: {backend: cpu, chunk_frames: 4800}\n")
    r = subprocess.Popen([BIN, "run", "closed.yaml", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, SIGSTREAM_FFMPEG=os.path.abspath("slow-ffmpeg")))
    children = children_of(r.pid)
    assert children, "no ffmpeg decoding"
    r.stdout.read(4096)
    r.stdout.close()
    r.wait(timeout=20)
    closed_err = r.stderr.read().decode()
    assert r.returncode == 0, (r.returncode, closed_err)
    assert gone(children), "ffmpeg left running: %s" % children
    return "%s from standard input = the file's decode; noise: %s; closed output: exit 0, child gone" % (
        " and ".join(names), err.strip().splitlines()[-1][:100])


def driver_sees_only_the_devices_used():
    """A wrapper that records CUDA_VISIBLE_DEVICES as the decode child got it: what sigstream set
    before its driver started (the child inherits the environment)."""
    need_ffmpeg()
    write_pcm16("vis.wav", programme(1.5, 21))
    ffmpeg("-i", "vis.wav", "-c:a", "aac", "vis.m4a")
    os.makedirs("visin", exist_ok=True)
    shutil.copy("vis.m4a", "visin/a.m4a")
    with open("env-ffmpeg", "w") as f:
        f.write("#!/bin/sh\necho \"${CUDA_VISIBLE_DEVICES-unset}\" >> seen.txt\nexec ffmpeg \"$@\"\n")
    os.chmod("env-ffmpeg", 0o755)
    base = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    base["SIGSTREAM_FFMPEG"] = os.path.abspath("env-ffmpeg")
    with open("vis.yaml", "w") as f:
        f.write("version: 1\nstages: [{type: gain, db: -2}]\nbatch: {out_dir: visout}\n")
    cases = [
        (["filter", "vis.m4a", "o1.wav", "--lowpass", "3000"], {}, "0"),
        (["filter", "vis.m4a", "o2.wav", "--lowpass", "3000"], {"CUDA_VISIBLE_DEVICES": "3,1,2"}, "3"),
        (["filter", "vis.m4a", "o3.wav", "--lowpass", "3000", "--backend", "cpu"],
         {"CUDA_VISIBLE_DEVICES": "3,1,2"}, "3,1,2"),
        (["filter", "vis.m4a", "o4.wav", "--lowpass", "3000", "--backend", "cpu"], {}, "unset"),
        (["batch", "vis.yaml", "visin", "--force", "--set", "execution.device=[1]"],
         {"CUDA_VISIBLE_DEVICES": "GPU-x,GPU-y,GPU-z"}, "GPU-x,GPU-y"),
        (["batch", "vis.yaml", "visin", "--force", "--set", "execution.device=[0]"],
         {"CUDA_VISIBLE_DEVICES": "GPU-aa,GPU-bb"}, "GPU-aa"),
        (["batch", "vis.yaml", "visin", "--force"], {"CUDA_VISIBLE_DEVICES": "2,0"}, "2,0"),
        (["batch", "vis.yaml", "visin", "--force"], {}, "unset"),
    ]
    for args, extra, want in cases:
        if os.path.exists("seen.txt"):
            os.remove("seen.txt")
        p = sh(args, env=dict(base, **extra))
        assert p.returncode == 0, (args, p.returncode, p.stderr)
        seen = open("seen.txt").read().split()
        assert seen and all(v == want for v in seen), (args, extra, seen, want)
    return "%d commands: the decode child saw the variable cut to the devices used" % len(cases)


run_cases([fixtures_give_ffmpegs_samples, batch_walk_and_normalize, corrupt_and_missing,
           sigint_leaves_no_child, m4a_outputs, standard_input_and_a_closed_output,
           driver_sees_only_the_devices_used], BIN, "sigstream-ffmpeg-")
