#!/usr/bin/env python3
"""CLI tests for `sigstream batch` (SPEC §1, §2 batch:, §5).

Usage: python3 test_batch_cli.py PATH_TO_sigstream

Standard library only. Every case runs in a fresh temporary working folder.
One line per case, then "N passed, M failed"; exit 1 on any failure, 77 when
the binary is missing.

The command line assumed (app/main.cpp wiring of pipeline/batch.hpp):
  sigstream batch CONFIG.yaml [INPUT...] [--out-dir DIR] [--keep-going] [--force]
                  [--backend auto|cpu|cuda] [--quiet] [--no-progress] [--stats SUMMARY.json]
Exit codes: 0 all files ok or up to date; 1 a file failed (or cuda without a
device); 2 configuration or usage error (nothing written); 130 interrupted.
Outputs: OUT_DIR/<subfolder>/<stem><sink extension>, <stem>.json and (with
stats.csv in the config) <stem>.csv next to it; OUT_DIR/batch_summary.json
and .csv.
"""

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
import wave

if len(sys.argv) < 2:
    print("usage: test_batch_cli.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
TIMEOUT = 120

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from harness import Skip, run_cases, describe, expect_in, expect_rc, files_under  # noqa: E402


# ---------------------------------------------------------------- helpers


def write_wav(path, frames, channels=2, rate=48000, seed=1):
    """16-bit PCM WAV of random bytes (fast, no per-sample loop)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    rng = random.Random(seed)
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(rng.randbytes(frames * channels * 2))
    return path


def write_text(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def config_text(inputs, out_dir="out", taps=255, keep_going=True, threads=0, sink="x.wav",
                extra=""):
    ex = "execution: {backend: cpu%s}\n" % (", threads: %d" % threads if threads else "")
    return ("version: 1\n"
            "source: {file: placeholder.wav}\n"
            "stages:\n"
            "  - type: fir\n"
            "    name: lp\n"
            "    design: {kind: lowpass, cutoff_hz: 3000, taps: %d, window: hamming}\n"
            "    method: direct\n"
            "  - type: metrics\n"
            "    name: after_lp\n"
            "sink: {file: %s, format: same}\n"
            "stats: {json: placeholder.json, csv: placeholder.csv}\n"
            "%s"
            "batch:\n"
            "  inputs: %s\n"
            "  out_dir: %s\n"
            "  keep_going: %s\n%s") % (taps, sink, ex, json.dumps(inputs), out_dir,
                                       "true" if keep_going else "false", extra)


def run(args, timeout=TIMEOUT, cwd=None):
    return subprocess.run([BIN] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace", timeout=timeout, cwd=cwd)


def temp_files(root):
    return sorted(f for f in files_under(root) if ".sigstream-" in os.path.basename(f))


def outputs(root):
    """Per-file outputs (audio, .json, .csv), the batch summary left out."""
    return {f for f in files_under(root) if not os.path.basename(f).startswith("batch_summary")}


def read(path):
    with open(path, "rb") as f:
        return f.read()


def summary(root="out"):
    with open(os.path.join(root, "batch_summary.json")) as f:
        return json.load(f)


def make_tree(n, seed=11):
    """n small WAVs with mixed rates and channel counts, half in a subfolder."""
    rng = random.Random(seed)
    names = []
    for i in range(n):
        sub = "sub/" if i % 2 else ""
        rate = (48000, 44100, 16000)[i % 3]
        ch = 1 + i % 2
        frames = int(rate * rng.uniform(2.0, 4.0))
        name = "in/%sf%02d.wav" % (sub, i)
        write_wav(name, frames, channels=ch, rate=rate, seed=seed + i)
        names.append(name)
    return names


def expect_same_outputs(got_root, want_root, what, names=None):
    """Audio and per-chunk CSV byte for byte (the JSON holds timings and paths)."""
    got, want = outputs(got_root), outputs(want_root)
    if names is None:
        if got != want:
            raise AssertionError("%s: files differ from the clean run: missing %r, extra %r"
                                 % (what, sorted(want - got)[:8], sorted(got - want)[:8]))
        names = got
    bad = []
    for f in sorted(names):
        if f.endswith(".json"):
            if not os.path.exists(os.path.join(got_root, f)):
                bad.append(f + " (missing)")
            continue
        if read(os.path.join(got_root, f)) != read(os.path.join(want_root, f)):
            bad.append(f)
    if bad:
        raise AssertionError("%s: not byte-identical to the clean run: %r" % (what, bad[:10]))


# ---------------------------------------------------------------- cases

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def interrupted_then_resumed(sig):
    n = 40
    make_tree(n)
    # Two worker threads in all, and long enough filters, so the batch takes
    # a while on any machine; the direct method is bit-exact whatever the split.
    write_text("cfg.yaml", config_text(["in"], taps=4095, threads=2))

    t0 = time.monotonic()
    clean = run(["batch", "cfg.yaml", "--out-dir", "clean", "--no-progress"])
    clean_s = time.monotonic() - t0
    expect_rc(clean, 0)
    if len([f for f in outputs("clean") if f.endswith(".wav")]) != n:
        raise AssertionError("clean run: expected %d outputs, got %r" % (n, sorted(outputs("clean"))))

    proc = subprocess.Popen([BIN, "batch", "cfg.yaml", "--backend", "cpu", "--no-progress"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace")
    # Signal once a few files are complete (their statistics exist).
    deadline = time.monotonic() + 60
    saw_temp = False
    while proc.poll() is None and time.monotonic() < deadline:
        done = [f for f in outputs("out") if f.endswith(".json")] if os.path.isdir("out") else []
        saw_temp = saw_temp or (os.path.isdir("out") and bool(temp_files("out")))
        if len(done) >= 3:
            break
        time.sleep(0.005)
    if proc.poll() is not None:
        out, err = proc.communicate()
        raise AssertionError("batch finished (rc=%d) before the signal (clean run %.2f s); "
                             "make the work longer: %r" % (proc.returncode, clean_s, err[-600:]))
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("did not stop within 60 s of %s" % signal.Signals(sig).name)
    rc = proc.returncode
    killed_temps = len(temp_files("out"))
    if sig == signal.SIGKILL:
        if rc != -signal.SIGKILL:
            raise AssertionError("rc %d after SIGKILL" % rc)
    else:
        if rc not in (130, 128 + sig):
            raise AssertionError("exit code %d after %s (expected 130); stderr=%r"
                                 % (rc, signal.Signals(sig).name, err[-800:]))
        left = temp_files("out")
        if left:
            raise AssertionError("temporary files left after %s: %r" % (signal.Signals(sig).name, left))
        s = summary("out")
        if s.get("interrupted") is not True:
            raise AssertionError("summary does not say interrupted: %r" % {k: s.get(k) for k in
                                                                         ("interrupted", "counts")})
        statuses = {e["status"] for e in s["files"]}
        if not statuses <= {"ok", "interrupted", "not_run"}:
            raise AssertionError("unexpected statuses after %s: %r" % (signal.Signals(sig).name, statuses))
    # What exists is complete: each audio file byte-identical to the clean one.
    partial = outputs("out") - {f for f in temp_files("out")}
    audio_done = sorted(f for f in partial if f.endswith(".wav"))
    if len(audio_done) >= n:
        raise AssertionError("every file was done before the signal: nothing to resume")
    expect_same_outputs("out", "clean", "after %s" % signal.Signals(sig).name,
                        names=[f for f in partial if not os.path.basename(f).startswith(".")])
    complete = [f for f in audio_done if os.path.exists(os.path.join("out", f[:-4] + ".json"))
                and os.path.exists(os.path.join("out", f[:-4] + ".csv"))]
    before = {f: os.stat(os.path.join("out", f)).st_mtime_ns for f in complete}

    resumed = run(["batch", "cfg.yaml", "--backend", "cpu", "--no-progress"])
    expect_rc(resumed, 0)
    s = summary("out")
    if s["counts"]["skipped"] != len(complete) or s["counts"]["ok"] != n - len(complete):
        raise AssertionError("resume: expected %d skipped and %d ok, got %r"
                             % (len(complete), n - len(complete), s["counts"]))
    for f, t in before.items():
        if os.stat(os.path.join("out", f)).st_mtime_ns != t:
            raise AssertionError("resume rewrote %s, which was complete" % f)
    if temp_files("out"):
        raise AssertionError("temporary files left after the resume: %r" % temp_files("out"))
    expect_same_outputs("out", "clean", "resumed run")
    note = "%d of %d done before %s, clean run %.2f s" % (len(complete), n, signal.Signals(sig).name, clean_s)
    if saw_temp:
        note += ", temp files seen while running"
    if killed_temps:
        note += ", %d temp files left by the kill, removed by the resume" % killed_temps
    return note


@case
def sigint_then_resume_matches_clean_run():
    return interrupted_then_resumed(signal.SIGINT)


@case
def sigterm_then_resume_matches_clean_run():
    return interrupted_then_resumed(signal.SIGTERM)


@case
def sigkill_then_resume_matches_clean_run():
    return interrupted_then_resumed(signal.SIGKILL)


@case
def corrupt_file_with_keep_going_exits_1():
    write_wav("in/a.wav", 4800, channels=2, rate=48000, seed=1)
    write_wav("in/b.wav", 8000, channels=1, rate=8000, seed=2)
    write_wav("in/deep/c.wav", 4410, channels=2, rate=44100, seed=3)
    write_text("in/broken.wav", "definitely not a RIFF file\n" * 10)
    write_text("cfg.yaml", config_text(["in/**/*.wav"], keep_going=False))
    p = run(["batch", "cfg.yaml", "--keep-going", "--no-progress"])
    expect_rc(p, 1)
    expect_in("broken.wav", p.stderr, "stderr")
    got = outputs("out")
    want = {"a.wav", "a.json", "a.csv", "b.wav", "b.json", "b.csv",
            "deep/c.wav", "deep/c.json", "deep/c.csv"}
    if got != want:
        raise AssertionError("outputs %r, expected %r" % (sorted(got), sorted(want)))
    s = summary("out")
    if s["counts"] != {"total": 4, "ok": 3, "skipped": 0, "failed": 1, "interrupted": 0, "not_run": 0}:
        raise AssertionError("summary counts %r" % s["counts"])
    if s.get("exit_code") != 1:
        raise AssertionError("summary exit_code %r" % s.get("exit_code"))
    by = {os.path.basename(e["file"]): e for e in s["files"]}
    if by["broken.wav"]["status"] != "failed" or "broken.wav" not in (by["broken.wav"]["error"] or ""):
        raise AssertionError("corrupt file entry %r" % by["broken.wav"])
    c = by["c.wav"]
    if (c["status"], c["channels"], c["sample_rate"], c["frames"]) != ("ok", 2, 44100, 4410):
        raise AssertionError("c.wav entry %r" % c)
    if abs(c["duration_s"] - 0.1) > 1e-9 or len(c["output_rms"]) != 2 or c["wall_s"] <= 0:
        raise AssertionError("c.wav entry %r" % c)
    with open("out/batch_summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for col in ("file", "frames", "duration_s", "status", "error", "wall_s", "frames_per_s"):
        if col not in rows[0]:
            raise AssertionError("summary CSV has no column %r: %r" % (col, list(rows[0])))
    bad = [r for r in rows if r["status"] == "failed"]
    if len(rows) != 4 or len(bad) != 1 or "broken.wav" not in bad[0]["error"]:
        raise AssertionError("summary CSV rows %r" % rows)


@case
def first_failure_stops_without_keep_going():
    for i in range(6):
        write_wav("in/f%d.wav" % i, 4800, seed=i)
    # The largest file is handed out first: make it the corrupt one; one worker.
    write_text("in/zz_broken.wav", "x" * 500000)
    write_text("cfg.yaml", config_text(["in"], keep_going=False, threads=1))
    p = run(["batch", "cfg.yaml", "--no-progress"])
    expect_rc(p, 1)
    if outputs("out"):
        raise AssertionError("outputs after stopping at the first failure: %r" % sorted(outputs("out")))
    if temp_files("out"):
        raise AssertionError("temporary files left: %r" % temp_files("out"))
    s = summary("out")
    if s["counts"]["failed"] != 1 or s["counts"]["not_run"] != 6 or s.get("stopped_at_failure") is not True:
        raise AssertionError("summary %r" % {k: s.get(k) for k in ("counts", "stopped_at_failure")})


@case
def config_errors_exit_2_and_write_nothing():
    write_wav("in/a.wav", 4800)
    write_wav("in/a2.wav", 4800)
    cases = [
        # an unknown key, with its line
        (config_text(["in"]) + "bogus_key: 1\n", ["cfg.yaml", "bogus_key"]),
        # no input matches
        (config_text(["nowhere/*.wav"]), ["nowhere/*.wav"]),
        # a bad type
        (config_text(["in"]).replace("keep_going: true", "keep_going: maybe"), ["keep_going"]),
    ]
    for text, needles in cases:
        write_text("cfg.yaml", text)
        p = run(["batch", "cfg.yaml", "--no-progress"])
        expect_rc(p, 2)
        err = [l for l in p.stderr.splitlines() if l.startswith("sigstream: error:")]
        if not err:
            raise AssertionError("no 'sigstream: error:' line: %s" % describe(p))
        for n in needles:
            expect_in(n, p.stderr, "stderr")
        if os.path.exists("out"):
            raise AssertionError("a config error wrote %r" % sorted(files_under("out")))
    # Two inputs with one output name (a.wav and a.aiff -> out/a.wav).
    with open("in/a.aiff", "wb") as f:
        f.write(b"not really")
    write_text("cfg.yaml", config_text(["in"]))
    p = run(["batch", "cfg.yaml", "--no-progress"])
    expect_rc(p, 2)
    expect_in("a.aiff", p.stderr, "stderr")
    if os.path.exists("out"):
        raise AssertionError("a config error wrote %r" % sorted(files_under("out")))


@case
def command_line_inputs_out_dir_and_resume():
    write_wav("x/one.wav", 4800, seed=1)
    write_wav("y/two.wav", 4800, seed=2)
    write_wav("y/three.wav", 4800, seed=3)
    write_text("cfg.yaml", config_text([]))
    # Plain paths from several folders go straight into out_dir, and stay there when a file of
    # another folder joins (a second run skips them).
    p = run(["batch", "cfg.yaml", "x/one.wav", "y/two.wav", "--out-dir", "o1", "--no-progress"])
    expect_rc(p, 0)
    got = {f for f in outputs("o1") if f.endswith(".wav")}
    if got != {"one.wav", "two.wav"}:
        raise AssertionError("plain paths: outputs %r" % sorted(got))
    write_wav("z/four.wav", 4800, seed=4)
    p = run(["batch", "cfg.yaml", "x/one.wav", "y/two.wav", "z/four.wav", "--out-dir", "o1", "--no-progress"])
    expect_rc(p, 0)
    got = {f for f in outputs("o1") if f.endswith(".wav")}
    if got != {"one.wav", "two.wav", "four.wav"} or summary("o1")["counts"]["skipped"] != 2:
        raise AssertionError("a file joining: outputs %r, counts %r" % (sorted(got), summary("o1")["counts"]))
    # A glob (quoted: sigstream expands it) mirrors below its fixed prefix, y/.
    p = run(["batch", "cfg.yaml", "x/one.wav", "y/*.wav", "--out-dir", "o2", "--no-progress"])
    expect_rc(p, 0)
    got = {f for f in outputs("o2") if f.endswith(".wav")}
    if got != {"one.wav", "two.wav", "three.wav"}:
        raise AssertionError("plain path + glob: outputs %r" % sorted(got))
    if "\r" in p.stderr or "\x1b" in p.stderr:
        raise AssertionError("progress drawn on a non-terminal stderr: %r" % p.stderr[-300:])
    # Up to date: skipped; --force: redone.
    p = run(["batch", "cfg.yaml", "x/one.wav", "y/*.wav", "--out-dir", "o2", "--no-progress"])
    expect_rc(p, 0)
    s = summary("o2")
    if s["counts"]["skipped"] != 3:
        raise AssertionError("second run counts %r" % s["counts"])
    p = run(["batch", "cfg.yaml", "x/one.wav", "y/*.wav", "--out-dir", "o2", "--force", "--quiet"])
    expect_rc(p, 0)
    if summary("o2")["counts"]["ok"] != 3:
        raise AssertionError("--force counts %r" % summary("o2")["counts"])
    if p.stderr.strip():
        raise AssertionError("--quiet printed %r" % p.stderr)
    # The same batch from another working folder (relative paths spelled from there) finds its
    # files up to date: the statistics' record holds each input's absolute path.
    p = run(["batch", "../cfg.yaml", "one.wav", "../y/*.wav", "--out-dir", "../o2", "--no-progress"], cwd="x")
    expect_rc(p, 0)
    if summary("o2")["counts"]["skipped"] != 3:
        raise AssertionError("from another folder: counts %r" % summary("o2")["counts"])


@case
def a_misspelt_scheduler_is_a_usage_error_before_python_starts():
    write_wav("in/a.wav", 4800, seed=1)
    write_text("cfg.yaml", config_text(["in"]))
    env = dict(os.environ, SIGSTREAM_PYTHON="/bin/false")  # never started
    p = subprocess.run([BIN, "batch", "cfg.yaml", "--scheduler", "locale"], env=env, capture_output=True,
                       text=True, timeout=TIMEOUT)
    expect_rc(p, 2)
    expect_in("did you mean 'local'?", p.stderr, "stderr")
    p = subprocess.run([BIN, "batch", "cfg.yaml", "--scheduler", "myhost"], env=env, capture_output=True,
                       text=True, timeout=TIMEOUT)
    expect_rc(p, 2)
    expect_in("tcp://HOST:8786", p.stderr, "stderr")
    if os.path.exists("out"):
        raise AssertionError("a usage error wrote out/")


@case
def no_progress_drawn_when_stderr_is_not_a_terminal():
    # Without --no-progress: stderr is a pipe here, so no progress line either.
    for i in range(8):
        write_wav("in/f%d.wav" % i, 48000, seed=i)
    write_text("cfg.yaml", config_text(["in"], taps=1023, threads=2))
    p = run(["batch", "cfg.yaml"])
    expect_rc(p, 0)
    if "\r" in p.stderr or "\x1b" in p.stderr:
        raise AssertionError("progress drawn on a non-terminal stderr: %r" % p.stderr[-300:])
    expect_in("8 ok", p.stderr, "stderr")


def gain_config(inputs, **kw):
    """config_text with a gain stage at index 1 (0 dB), for --set stages.1.db=..."""
    return config_text(inputs, **kw).replace("  - type: metrics\n",
                                             "  - type: gain\n    db: 0\n  - type: metrics\n", 1)


def record(path):
    """The effective-config fingerprint a file's statistics JSON records (None if absent)."""
    try:
        with open(path) as f:
            return (json.load(f).get("batch") or {}).get("config_fingerprint")
    except (OSError, ValueError):
        return None


@case
def changed_set_without_a_summary_redoes_the_files():
    for i in range(6):
        write_wav("in/f%d.wav" % i, 4800, seed=i)
    write_text("cfg.yaml", gain_config(["in"]))
    expect_rc(run(["batch", "cfg.yaml", "--out-dir", "clean", "--no-progress"]), 0)
    expect_rc(run(["batch", "cfg.yaml", "--no-progress"]), 0)
    os.remove("out/batch_summary.json")
    os.remove("out/batch_summary.csv")
    p = run(["batch", "cfg.yaml", "--set", "stages.1.db=-6", "--no-progress"])
    expect_rc(p, 0)
    if summary("out")["counts"]["ok"] != 6:
        raise AssertionError("--set without a summary: counts %r; %s" % (summary("out")["counts"], describe(p)))
    if any(read("out/f%d.wav" % i) == read("clean/f%d.wav" % i) for i in range(6)):
        raise AssertionError("an output was not redone at -6 dB")
    os.remove("out/batch_summary.json")
    p = run(["batch", "cfg.yaml", "--no-progress"])
    expect_rc(p, 0)
    if summary("out")["counts"]["ok"] != 6:
        raise AssertionError("back to the config: counts %r" % summary("out")["counts"])
    expect_same_outputs("out", "clean", "back to the first config")
    # Unchanged, summary or not: skipped.
    os.remove("out/batch_summary.json")
    expect_rc(run(["batch", "cfg.yaml", "--no-progress"]), 0)
    if summary("out")["counts"]["skipped"] != 6:
        raise AssertionError("unchanged config: counts %r" % summary("out")["counts"])


@case
def changed_resample_or_spectrum_set_redoes_the_files():
    """Every kind's settings are in the fingerprint (StageKind::facts), not only fir's and
    gain's: a --set that changes a resampler's rate or a spectrum's nfft redoes the files."""
    for i in range(4):
        write_wav("in/f%d.wav" % i, 4800, seed=i)
    text = config_text(["in"]).replace(
        "  - type: metrics\n    name: after_lp\n",
        "  - type: resample\n    to_hz: 44100\n  - type: metrics\n    name: after_lp\n"
        "    spectrum: {nfft: 256}\n", 1)
    write_text("cfg.yaml", text)
    expect_rc(run(["batch", "cfg.yaml", "--no-progress"]), 0)
    first = [read("out/f%d.wav" % i) for i in range(4)]
    for sets, what in ((["--set", "stages.1.to_hz=32000"], "the resampler's rate"),
                       (["--set", "stages.2.spectrum.nfft=512"], "the spectrum's nfft")):
        os.remove("out/batch_summary.json")
        p = run(["batch", "cfg.yaml", "--no-progress"] + sets)
        expect_rc(p, 0)
        if summary("out")["counts"]["ok"] != 4:
            raise AssertionError("%s changed by --set: counts %r (files kept as up to date); %s"
                                 % (what, summary("out")["counts"], describe(p)))
    # The last run's rate was the config's again: its outputs equal the first run's.
    if [read("out/f%d.wav" % i) for i in range(4)] != first:
        raise AssertionError("outputs after the spectrum's --set differ from the config's at 44.1 kHz")
    with open("out/f0.json") as f:
        nfft = (json.load(f)["metrics"]["after_lp"].get("spectrum") or {}).get("nfft")
    if nfft != 512:
        raise AssertionError("statistics after --set stages.2.spectrum.nfft=512: spectrum nfft %r" % nfft)


@case
def run_with_other_set_killed_then_resume_redoes_its_files():
    n = 16
    make_tree(n)
    write_text("cfg.yaml", gain_config(["in"], taps=4095, threads=1))
    expect_rc(run(["batch", "cfg.yaml", "--out-dir", "clean", "--no-progress"]), 0)
    expect_rc(run(["batch", "cfg.yaml", "--no-progress"]), 0)
    jsons = sorted(f for f in outputs("out") if f.endswith(".json"))
    base = record(os.path.join("out", jsons[0]))
    if not base:
        raise AssertionError("no config record in %s" % jsons[0])

    # -6 dB, killed once a few files carry its record (the old summary stays).
    proc = subprocess.Popen([BIN, "batch", "cfg.yaml", "--set", "stages.1.db=-6", "--no-progress"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if sum(1 for f in jsons if record(os.path.join("out", f)) not in (None, base)) >= 2:
            break
        time.sleep(0.005)
    if proc.poll() is not None:
        raise AssertionError("the -6 dB batch finished (rc=%d) before the kill" % proc.returncode)
    proc.kill()
    proc.wait()
    kept = [f for f in jsons if record(os.path.join("out", f)) == base]
    if len(kept) == len(jsons):
        raise AssertionError("the killed run remade nothing")
    before = {f: os.stat(os.path.join("out", f[:-5] + ".wav")).st_mtime_ns for f in kept}

    p = run(["batch", "cfg.yaml", "--no-progress"])
    expect_rc(p, 0)
    s = summary("out")
    if s["counts"]["skipped"] != len(kept) or s["counts"]["ok"] != n - len(kept):
        raise AssertionError("expected %d skipped and %d redone, got %r"
                             % (len(kept), n - len(kept), s["counts"]))
    for f, t in before.items():
        if os.stat(os.path.join("out", f[:-5] + ".wav")).st_mtime_ns != t:
            raise AssertionError("%s was redone though its record matched" % f)
    if temp_files("out"):
        raise AssertionError("temporary files left: %r" % temp_files("out"))
    expect_same_outputs("out", "clean", "after the killed -6 dB run")
    return "%d of %d files remade at -6 dB before the kill" % (n - len(kept), n)


@case
def cuda_without_a_device_exits_1():
    if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
        raise Skip("a GPU is present")
    write_wav("in/a.wav", 4800)
    write_text("cfg.yaml", config_text(["in"]))
    p = run(["batch", "cfg.yaml", "--backend", "cuda", "--no-progress"])
    expect_rc(p, 1)
    expect_in("cuda", p.stderr, "stderr")
    if os.path.exists("out"):
        raise AssertionError("wrote %r" % sorted(files_under("out")))
    # auto falls back to the CPU.
    p = run(["batch", "cfg.yaml", "--backend", "auto", "--no-progress"])
    expect_rc(p, 0)


# ---------------------------------------------------------------- driver


def main():
    run_cases(CASES, BIN, "sigstream-batch-cli-")


if __name__ == "__main__":
    main()
