#!/usr/bin/env python3
"""CLI tests for the built sigstream binary (SPEC §1, §4, §5; DESIGN §5).

Usage: python3 test_cli.py PATH_TO_sigstream

Standard library only. Every case runs in a fresh temporary directory used as
the working directory; nothing is written into the source tree. One line is
printed per case, then "N passed, M failed". Exit 1 on any failure, 0
otherwise, 77 when the binary is missing (skipped).

Over 600 lines on purpose: it is the contract of the general commands (run,
filter, design, info, devices, schema: exit codes, messages, no partial
outputs), one case per rule on one set of helpers; batch and streams have
files of their own (test_batch_cli.py, test_streams.py).
"""

import array
import glob
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import wave

if len(sys.argv) < 2:
    print("usage: test_cli.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 60


def source_dir():
    env = os.environ.get("SIGSTREAM_SOURCE_DIR")
    if env and os.path.isdir(env):
        return env
    # tests/cli/test_cli.py -> repository root
    return os.path.abspath(os.path.join(HERE, "..", ".."))


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from harness import Skip, run_cases  # noqa: E402


# ---------------------------------------------------------------- helpers


def write_wav(path, frames, channels=2, rate=48000, seed=1, amp=20000):
    """16-bit PCM WAV with random content from random.Random(seed)."""
    rng = random.Random(seed)
    data = array.array("h", (rng.randint(-amp, amp) for _ in range(frames * channels)))
    if sys.byteorder != "little":
        data.byteswap()
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data.tobytes())
    return path


def write_big_wav(path, seconds, channels=2, rate=48000, seed=7):
    """A large 16-bit WAV generated quickly (random bytes, no per-sample loop)."""
    rng = random.Random(seed)
    nbytes = seconds * rate * channels * 2
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(rng.randbytes(nbytes))
    return path


def run(args, timeout=TIMEOUT, **kw):
    return subprocess.run([BIN] + list(args), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace", timeout=timeout, **kw)


def describe(p):
    return "rc=%d stdout=%r stderr=%r" % (p.returncode, p.stdout[-800:], p.stderr[-800:])


def expect_rc(p, rc):
    if p.returncode != rc:
        raise AssertionError("expected exit %d, got %s" % (rc, describe(p)))


def error_line(p):
    """The one error line ("sigstream: error: ...") that a failing run prints."""
    lines = [l for l in p.stderr.splitlines() if l.startswith("sigstream: error:")]
    if len(lines) != 1:
        raise AssertionError("expected exactly one 'sigstream: error:' line, got %s" % describe(p))
    return lines[0]


def expect_in(needle, hay, what="message"):
    if needle.lower() not in hay.lower():
        raise AssertionError("%s does not contain %r: %r" % (what, needle, hay))


def all_files(root="."):
    out = set()
    for d, dirs, files in os.walk(root):
        for f in files:
            out.add(os.path.normpath(os.path.join(d, f)))
    return out


def temp_files(root="."):
    return sorted(f for f in all_files(root) if ".sigstream-" in os.path.basename(f))


def expect_no_new_files(before, what="failed run"):
    new = sorted(all_files() - before)
    if new:
        raise AssertionError("%s left files behind: %r" % (what, new))


def expect_fail(args, rc, *needles, before=None):
    """Run args; expect exit rc, one error line containing every needle, and
    (since the run failed) no output and no temp file anywhere under cwd."""
    if before is None:
        before = all_files()
    p = run(args)
    expect_rc(p, rc)
    line = error_line(p)
    for n in needles:
        expect_in(n, line)
    expect_no_new_files(before, "failing run %r" % (args,))
    return line


# ---------------------------------------------------------------- cases

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def version():
    p = run(["--version"])
    expect_rc(p, 0)
    if not re.search(r"\d+\.\d+\.\d+", p.stdout):
        raise AssertionError("no version number in %s" % describe(p))
    expect_no_new_files(set(), "--version")


@case
def schema_matches_the_docs():
    """docs/yaml-reference.md is `sigstream schema`'s output: the reference cannot drift from the reader."""
    p = run(["schema"])
    expect_rc(p, 0)
    for key in ("`stages[].to_hz`", "`stages[].half_taps_per_phase`", "| `resample` |", "`execution.latency_ms`"):
        expect_in(key, p.stdout, "sigstream schema")
    with open(os.path.join(source_dir(), "docs", "yaml-reference.md")) as f:
        if f.read() != p.stdout:
            raise AssertionError("docs/yaml-reference.md differs from `sigstream schema`: "
                                 "regenerate it with `sigstream schema > docs/yaml-reference.md`")


@case
def help_top_and_commands():
    p = run(["--help"])
    expect_rc(p, 0)
    for w in ("run", "filter", "design", "info", "devices"):
        expect_in(w, p.stdout, "--help output")
    for cmd, word in (("filter", "--lowpass"), ("run", "--set"), ("design", "--rate"),
                      ("info", "FILE"), ("batch", "CONFIG")):
        p = run([cmd, "--help"])
        expect_rc(p, 0)
        expect_in(word, p.stdout, "%s --help output" % cmd)
    expect_no_new_files(set(), "--help")


@case
def unknown_command():
    write_wav("in.wav", 4801)
    # Must not fall back to running the demo (nothing written).
    expect_fail(["bogus"], 2)
    expect_fail(["filterr", "in.wav", "out/o.wav", "--lowpass", "3000"], 2)


@case
def unknown_flag():
    write_wav("in.wav", 4801)
    expect_fail(["--bogus"], 2)
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--bogus"], 2, "--bogus")
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--mode", "sideways"], 2)


@case
def missing_argument():
    write_wav("in.wav", 4801)
    expect_fail(["filter", "in.wav"], 2, "OUTPUT")
    expect_fail(["filter"], 2)
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass"], 2)
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--taps"], 2)
    expect_fail(["info"], 2)
    expect_fail(["run"], 2)
    expect_fail(["design", "--lowpass", "1000"], 2)


@case
def filter_option_count():
    write_wav("in.wav", 4801)
    expect_fail(["filter", "in.wav", "out/o.wav"], 2)
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--highpass", "100"], 2)
    expect_fail(["filter", "in.wav", "out/o.wav", "--bandpass", "300:3000",
                 "--bandstop", "300:3000"], 2)


@case
def missing_input_file():
    expect_fail(["filter", "nope.wav", "out/o.wav", "--lowpass", "3000"], 1, "nope.wav")
    expect_fail(["info", "nope.wav"], 1, "nope.wav")


@case
def non_audio_input():
    with open("notes.txt", "w") as f:
        f.write("this is not audio\n" * 20)
    expect_fail(["filter", "notes.txt", "out/o.wav", "--lowpass", "3000"], 1, "notes.txt")
    expect_fail(["info", "notes.txt"], 1, "notes.txt")


@case
def zero_frame_wav():
    with wave.open("empty.wav", "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(48000)
        w.writeframes(b"")
    expect_fail(["filter", "empty.wav", "out/o.wav", "--lowpass", "3000"], 1, "empty.wav")


@case
def truncated_wav():
    write_wav("full.wav", 4801)
    data = open("full.wav", "rb").read()
    with open("trunc.wav", "wb") as f:  # header still says 4801 frames
        f.write(data[: 44 + 1000 * 4 + 1])
    os.remove("full.wav")
    expect_fail(["filter", "trunc.wav", "out/o.wav", "--lowpass", "3000"], 1,
                "trunc.wav", "truncated")


@case
def cutoff_out_of_range():
    write_wav("in48.wav", 4801, rate=48000)
    write_wav("in44.wav", 4801, rate=44100)
    for f, nyq in (("in48.wav", "24000"), ("in44.wav", "22050")):
        for opt, val in (("--lowpass", "0"), ("--lowpass", "-5"), ("--lowpass", nyq),
                         ("--lowpass", "30000"), ("--highpass", nyq),
                         ("--bandpass", "300:" + nyq), ("--bandstop", "0:3000")):
            line = expect_fail(["filter", f, "out/o.wav", opt, val, "--stats", "out/s.json"], 2)
            expect_in(nyq, line, "error for %s %s on %s" % (opt, val, f))


@case
def even_taps_highpass():
    write_wav("in.wav", 4801)
    expect_fail(["filter", "in.wav", "out/o.wav", "--highpass", "3000", "--taps", "100"], 2, "100")
    expect_fail(["filter", "in.wav", "out/o.wav", "--bandstop", "300:3000", "--taps", "254"], 2,
                "254")


@case
def bad_window():
    write_wav("in.wav", 4801)
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--window", "foo"], 2,
                "foo")
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--window", "kaiser:abc"],
                2)


@case
def kaiser_without_beta():
    write_wav("in.wav", 4801)
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--window", "kaiser"], 2,
                "kaiser")
    expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--window", "kaiser:"], 2,
                "kaiser")


@case
def backend_cuda_without_gpu():
    if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
        p = run(["devices"])
        if p.returncode == 0 and "none" not in p.stdout.lower():
            raise Skip("a CUDA device is visible here")
    write_wav("in.wav", 4801)
    line = expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--backend",
                        "cuda", "--stats", "out/s.json"], 1)
    if not re.search(r"no cuda device|without cuda|not built|no device|no gpu", line, re.I):
        raise AssertionError("message does not say no CUDA device / not built: %r" % line)


@case
def output_is_input():
    write_wav("in.wav", 4801)
    orig = open("in.wav", "rb").read()
    os.mkdir("sub")
    os.symlink("in.wav", "link.wav")
    os.link("in.wav", "hard.wav")
    for out in ("in.wav", "./in.wav", os.path.abspath("in.wav"), "sub/../in.wav", "link.wav",
                "hard.wav"):
        expect_fail(["filter", "in.wav", out, "--lowpass", "3000"], 2)
        if open("in.wav", "rb").read() != orig:
            raise AssertionError("input changed by `filter in.wav %s`" % out)


@case
def output_folder_created():
    write_wav("in.wav", 4801)
    p = run(["filter", "in.wav", "a/b/c/o.wav", "--lowpass", "3000", "--stats", "s/t/s.json"])
    expect_rc(p, 0)
    for f in ("a/b/c/o.wav", "s/t/s.json"):
        if not os.path.isfile(f):
            raise AssertionError("%s not written; %s" % (f, describe(p)))
    with wave.open("a/b/c/o.wav") as w:
        if (w.getnframes(), w.getnchannels(), w.getframerate()) != (4801, 2, 48000):
            raise AssertionError("output shape %r" % ((w.getnframes(), w.getnchannels(),
                                                       w.getframerate()),))
    if temp_files():
        raise AssertionError("temp files left: %r" % temp_files())


@case
def output_is_a_folder():
    write_wav("in.wav", 4801)
    os.makedirs("out/d")
    before = all_files()
    p = run(["filter", "in.wav", "out/d", "--lowpass", "3000"])
    if p.returncode not in (1, 2):
        raise AssertionError("expected exit 1 or 2, got %s" % describe(p))
    error_line(p)
    expect_no_new_files(before)
    if not os.path.isdir("out/d"):
        raise AssertionError("output folder was replaced")


@case
def failed_stats_write_leaves_no_output():
    # The stats target is a folder, so the run fails (SPEC §5: a failed run
    # leaves no output); the audio file must not be committed either.
    write_wav("in.wav", 4801)
    os.makedirs("out/s.json")
    before = all_files()
    p = run(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--stats", "out/s.json"])
    if p.returncode not in (1, 2):
        raise AssertionError("expected exit 1 or 2, got %s" % describe(p))
    error_line(p)
    expect_no_new_files(before)


@case
def info_prints_fields():
    write_wav("in.wav", 4801, channels=2, rate=44100)
    p = run(["info", "in.wav"])
    expect_rc(p, 0)
    out = p.stdout
    for needle in ("44100", "4801", "pcm16"):
        expect_in(needle, out, "info output")
    if not re.search(r"channels\D*2\b", out, re.I):
        raise AssertionError("info does not show 2 channels: %r" % out)
    m = re.search(r"duration\D*([0-9.]+)", out, re.I)
    if not m or abs(float(m.group(1)) - 4801 / 44100) > 1e-3:
        raise AssertionError("info duration wrong (expected %.6f): %r" % (4801 / 44100, out))
    expect_in("wav", out, "info output")


@case
def devices_none():
    p = run(["devices"])
    expect_rc(p, 0)
    if not (os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl")):
        expect_in("none", p.stdout + p.stderr, "devices output")


def interrupt(sig):
    write_big_wav("big.wav", 180)
    os.mkdir("out")
    before = all_files()
    args = [BIN, "filter", "big.wav", "out/o.wav", "--lowpass", "3000", "--taps", "4095",
            "--backend", "cpu", "--method", "direct", "--stats", "out/s.json", "--no-progress"]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace")
    time.sleep(0.3)
    saw_temp = bool(temp_files("out"))
    if proc.poll() is not None:
        out, err = proc.communicate()
        raise AssertionError("run finished (rc=%d) before the signal; make the input longer: %r"
                             % (proc.returncode, err[-400:]))
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("did not stop within 30 s of %s" % signal.Signals(sig).name)
    rc = proc.returncode
    # Observed: 130 for both SIGINT and SIGTERM ("interrupted by SIGxxx: no output written").
    if rc not in (130, 128 + sig, -sig):
        raise AssertionError("exit code %d after %s (expected 130, %d or %d); stderr=%r"
                             % (rc, signal.Signals(sig).name, 128 + sig, -sig, err[-400:]))
    expect_no_new_files(before, "interrupted run")
    return "rc=%d%s" % (rc, ", temp file seen while running" if saw_temp else "")


@case
def sigint_leaves_nothing():
    return interrupt(signal.SIGINT)


@case
def sigterm_leaves_nothing():
    return interrupt(signal.SIGTERM)


@case
def invalid_configs():
    files = sorted(glob.glob(os.path.join(source_dir(), "configs", "invalid", "*.yaml")))
    if not files:
        raise Skip("no configs/invalid/*.yaml under %s" % source_dir())
    problems = []
    for f in files:
        name = os.path.basename(f)
        text = open(f, encoding="utf-8").read()
        expects = re.findall(r"^#\s*expect:\s*(.*?)\s*$", text, re.M)
        mline = re.search(r"^#\s*line:\s*(\d+)", text, re.M)
        before = all_files()
        p = run(["run", f, "--no-progress"])
        try:
            expect_rc(p, 2)
            line = error_line(p)
            m = re.search(re.escape(name) + r":(\d+)\b", line)
            if not m:
                raise AssertionError("message lacks %s:LINE: %r" % (name, line))
            if mline and m.group(1) != mline.group(1):
                raise AssertionError("line %s, expected %s: %r" % (m.group(1), mline.group(1),
                                                                   line))
            for e in expects:
                expect_in(e, p.stderr)
            expect_no_new_files(before)
        except AssertionError as e:
            problems.append("%s: %s" % (name, e))
    if problems:
        raise AssertionError("%d of %d invalid configs:\n    %s"
                             % (len(problems), len(files), "\n    ".join(problems)))
    return "%d configs" % len(files)


VALID_CONFIG = """\
version: 1
source:
  file: in.wav
stages:
  - type: fir
    name: lp
    design: {kind: lowpass, cutoff_hz: 3000, taps: 63, window: hamming}
sink:
  file: out/o.wav
  format: float
stats:
  json: out/s.json
execution:
  backend: cpu
"""


@case
def run_set_overrides():
    write_wav("in.wav", 4801)
    with open("c.yaml", "w") as f:
        f.write(VALID_CONFIG)
    expect_fail(["run", "c.yaml", "--set", "execution.streams=0"], 2, "execution.streams")
    expect_fail(["run", "c.yaml", "--set", "execution.chunk_frames=0"], 2,
                "execution.chunk_frames")
    expect_fail(["run", "c.yaml", "--set", "nonsense"], 2, "nonsense")
    expect_fail(["run", "c.yaml", "--set", "execution.chunk_frame=5"], 2, "chunk_frames")
    p = run(["run", "c.yaml", "--set", "execution.streams=3", "--quiet"])
    expect_rc(p, 0)
    if not os.path.isfile("out/o.wav") or not os.path.isfile("out/s.json"):
        raise AssertionError("valid run wrote nothing: %s" % describe(p))
    if json.load(open("out/s.json"))["execution"]["streams"] != 3:
        raise AssertionError("--set execution.streams=3 not in stats")


@case
def set_takes_one_value_each():
    """--set before CONFIG (or before batch inputs) takes exactly one value."""
    write_wav("in.wav", 4801)
    with open("c.yaml", "w") as f:
        f.write(VALID_CONFIG)
    p = run(["run", "--set", "execution.streams=2", "c.yaml", "--set", "execution.threads=1",
             "--quiet"])
    expect_rc(p, 0)
    s = json.load(open("out/s.json"))
    if s["execution"]["streams"] != 2 or s["execution"]["threads"] != 1:
        raise AssertionError("--set values not applied: %r" % s["execution"])


@case
def design_errors_name_where():
    """A cutoff beyond Nyquist only known from the file: the config's line and
    key path (run), or the input file and no internal stage name (filter)."""
    write_wav("in.wav", 4801, rate=22050)
    with open("c.yaml", "w") as f:
        f.write(VALID_CONFIG.replace("cutoff_hz: 3000", "cutoff_hz: 12000"))
    line = expect_fail(["run", "c.yaml"], 2, "c.yaml:5:", "stages.0.design", "11025")
    expect_in("in.wav", line)
    line = expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "0"], 2, "in.wav")
    if "fir0" in line:
        raise AssertionError("filter error names an internal stage: %r" % line)


@case
def misspelt_required_key_is_one_line():
    write_wav("in.wav", 4801)
    with open("c.yaml", "w") as f:
        f.write(VALID_CONFIG.replace("cutoff_hz:", "cutof_hz:"))
    p = run(["run", "c.yaml"])
    expect_rc(p, 2)
    expect_in("did you mean 'cutoff_hz'", p.stderr)
    if "missing required key" in p.stderr:
        raise AssertionError("a 'missing required key' line beside the did-you-mean: %r" % p.stderr)


@case
def filter_flags_that_would_be_ignored():
    write_wav("in.wav", 4801)
    with open("t.txt", "w") as f:
        f.write("0.25\n0.5\n0.25\n")
    expect_fail(["filter", "in.wav", "out/o.wav", "--taps-file", "t.txt", "--taps", "101"], 2,
                "--taps")
    expect_fail(["filter", "in.wav", "out/o.wav", "--taps-file", "t.txt", "--window", "hann"], 2,
                "--window")
    for bad in ("nan", "inf", "1000", "loud"):
        expect_fail(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--gain-db", bad], 2,
                    "--gain-db")
    p = run(["filter", "in.wav", "out/o.wav", "--taps-file", "t.txt", "--gain-db", "-6", "-q"])
    expect_rc(p, 0)


@case
def run_missing_source_file():
    with open("c.yaml", "w") as f:
        f.write(VALID_CONFIG)
    expect_fail(["run", "c.yaml"], 1, "in.wav")
    p = run(["run", "missing.yaml"])
    if p.returncode not in (1, 2):
        raise AssertionError("missing config: expected exit 1 or 2, got %s" % describe(p))
    expect_in("missing.yaml", error_line(p))


@case
def demo():
    p = run([])
    expect_rc(p, 0)
    for f in ("out/demo.wav", "out/demo_stats.json", "out/demo_chunks.csv"):
        if not os.path.isfile(f) or os.path.getsize(f) == 0:
            raise AssertionError("demo did not write %s; %s" % (f, describe(p)))
    if temp_files():
        raise AssertionError("temp files left: %r" % temp_files())
    stats = json.load(open("out/demo_stats.json"))
    if stats.get("schema") != 1:
        raise AssertionError("schema is %r" % stats.get("schema"))
    if "output" not in stats.get("metrics", {}):
        raise AssertionError("no metrics.output in demo stats: %r" % list(stats.get("metrics", {})))
    chans = stats["metrics"]["output"]["totals"]["channels"]
    if len(chans) != 2:
        raise AssertionError("demo output has %d channels in stats" % len(chans))
    header = open("out/demo_chunks.csv").readline().strip()
    want = ("stage,chunk,start_frame,frames,channel,energy,rms,peak,mean,dot_input,"
            "correlation_input,nonfinite")
    if header != want:
        raise AssertionError("CSV header %r" % header)
    if "\x1b" in p.stderr or "\r" in p.stderr:
        raise AssertionError("progress-bar escape codes on a non-terminal stderr: %r"
                             % p.stderr[:300])


@case
def no_progress_on_terminal_when_disabled():
    # stderr IS a terminal here; --no-progress and --quiet must still keep it clean.
    try:
        import pty
    except ImportError:
        raise Skip("no pty module")
    write_wav("in.wav", 96001, seed=5)
    for flag in ("--no-progress", "--quiet"):
        master, slave = pty.openpty()
        try:
            p = subprocess.run([BIN, "filter", "in.wav", "out/o.wav", "--lowpass", "3000",
                                "--backend", "cpu", flag], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=slave, timeout=TIMEOUT)
            os.close(slave)
            slave = None
            chunks = []
            while True:
                try:
                    b = os.read(master, 65536)
                except OSError:
                    break
                if not b:
                    break
                chunks.append(b)
            err = b"".join(chunks).decode("utf-8", "replace")
        finally:
            if slave is not None:
                os.close(slave)
            os.close(master)
        if p.returncode != 0:
            raise AssertionError("%s on a terminal: exit %d: %r" % (flag, p.returncode, err))
        if "\x1b" in err or "\r" in err.replace("\r\n", "\n"):
            raise AssertionError("progress drawn on a terminal despite %s: %r" % (flag, err[:300]))
        if flag == "--quiet" and (err.strip() or p.stdout.strip()):
            raise AssertionError("--quiet printed something: %r %r" % (p.stdout, err))


@case
def verify_filter():
    write_wav("in.wav", 24001, seed=3)
    p = run(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--verify", "--stats",
             "out/s.json", "--backend", "cpu"])
    expect_rc(p, 0)
    v = json.load(open("out/s.json")).get("verification")
    if not v or v.get("passed") is not True or not (v.get("rel_l2_error", 1) < 1e-5):
        raise AssertionError("verification block %r" % (v,))
    if "\x1b" in p.stderr:
        raise AssertionError("escape codes on a non-terminal stderr")


# ---------------------------------------------------------------- driver


def main():
    run_cases(CASES, BIN, "sigstream-cli-")


if __name__ == "__main__":
    main()
