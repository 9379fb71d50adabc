#!/usr/bin/env python3
"""Exactly-once commits under at-least-once execution (SPEC §10, issue 26
point 4), with real processes on a file system without O_TMPFILE (NFS's
case: the fault shim makes open(O_TMPFILE) fail with EOPNOTSUPP, so every
output goes through a named temporary ".NAME.sigstream-HOST-PID-XXXXXX").

- Two `filter` processes race on one input and one output, many times, the
  second started at once or while the first one's temporary is there: both
  exit 0 (neither deleted the other's temporary), the output is one whole
  file equal to a single run's bytes, no temporary is left.
- Two `batch --force` race on the same files: the same.
- A batch is on a long file when another batch commits one of its later
  files: the first skips that file (the other's commit stays in place); a
  bad file is a failed entry.
- A batch killed by SIGKILL leaves its temporaries (named for this host and
  its pid); the next batch removes them and leaves another host's alone.
- A batch stopped right after committing a file's audio (or its CSV) and
  killed there: the next batch completes that file's commits; across both
  runs (commit log of tests/faults/commit_shim.cpp) each of its outputs was
  committed once, no temporary is left, the outputs are a clean run's.
- A fresh batch of 40 files lists its output folder a fixed number of times,
  not once a file (the shim's listing log), with and without O_TMPFILE.

Usage: python3 test_atomic_commits.py PATH_TO_sigstream   (SIGSTREAM_FAULT_SHIM: tests/faults' shim)
"""

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

if len(sys.argv) < 2:
    print("usage: test_atomic_commits.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import Skip, run_cases  # noqa: E402

SHIM = os.environ.get("SIGSTREAM_FAULT_SHIM", "")
COMMIT_SHIM = os.environ.get("SIGSTREAM_COMMIT_SHIM", "")

SYNTH = """version: 1
source: {synth: {sample_rate: 48000, duration_s: %(seconds)s, channels: 2,
         tones: [{freq_hz: 440, amplitude: 0.4}, {freq_hz: 9000, amplitude: 0.3}],
         noise: {kind: gaussian, amplitude: 0.01, seed: %(seed)d}}}
stages:
  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 4000, taps: 511}}
  - {type: metrics, name: out}
sink: {file: %(out)s, format: pcm16}
execution: {backend: cpu}
"""

# One file in flight (threads: 1): files go largest first, one after another.
BATCH = """version: 1
stages:
  - {type: fir, name: lp, design: {kind: lowpass, cutoff_hz: 3000, taps: %(taps)d}, method: direct}
  - {type: metrics, name: out}
sink: {file: x.flac, format: pcm16}
execution: {backend: cpu, threads: %(threads)d}
"""

# Taps that make a 10 s stereo file take a few tenths of a second (direct FIR,
# 2 cores): long enough that a second process starts while the first writes.
SLOW_TAPS = "16383"


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def visible(folder):
    """Every file under `folder`, hidden ones too (a temporary left behind shows here)."""
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(r, f)[len(folder) + 1:] for r, _, fs in os.walk(folder) for f in fs)


def temps(folder):
    return [f for f in visible(folder) if ".sigstream-" in f]


def host_tag():
    """sanitize_host_tag(gethostname()) of pipeline/io/atomic_file.cpp."""
    name = socket.gethostname()
    tag = "".join(c if (c.isascii() and c.isalnum()) or c == "-" else "-" for c in name)
    if not tag:
        return "host"
    if tag == name and len(tag) <= 32:
        return tag
    h = 2166136261
    for b in name.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return "%s-%08x" % (tag[:23], h)


def temp_re(name):
    """A temporary of target `name`: groups host, pid."""
    return re.compile(r"^\.%s\.sigstream-([A-Za-z0-9-]+)-([1-9][0-9]*)-[A-Za-z0-9]{6}$" % re.escape(name))


def no_tmpfile_env():
    if not SHIM or not os.path.exists(SHIM):
        raise Skip("no fault shim (SIGSTREAM_FAULT_SHIM)")
    env = dict(os.environ)
    env["LD_PRELOAD"] = SHIM
    env["SIGSTREAM_FAULT_NO_TMPFILE"] = "1"
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":")
    return env


def shim_env(preload, **extra):
    """This environment with the commit shim preloaded after `preload` (the fault shim, or
    nothing), the fault shim taking O_TMPFILE away where it is there, and `extra` set."""
    env = dict(os.environ)
    env["LD_PRELOAD"] = ":".join(preload + [COMMIT_SHIM])
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":")
    if preload:
        env["SIGSTREAM_FAULT_NO_TMPFILE"] = "1"
    env.update(extra)
    return env


def sh(args, env=None, timeout=120):
    return subprocess.run([BIN, *args], env=env, capture_output=True, timeout=timeout)


def start(args, env):
    return subprocess.Popen([BIN, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(p, timeout=120):
    _, err = p.communicate(timeout=timeout)
    err = err.decode(errors="replace")
    assert "AddressSanitizer" not in err and "runtime error" not in err, err[-3000:]
    return p.returncode, err


def make_input(path, seconds, seed=3):
    open("mk.yaml", "w").write(SYNTH % {"seconds": seconds, "out": path, "seed": seed})
    r = sh(["run", "mk.yaml", "-q"])
    assert r.returncode == 0, r.stderr


def wait_for(predicate, what, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = predicate()
        if got:
            return got
        time.sleep(0.002)
    raise AssertionError("timed out waiting for " + what)


def test_shim_takes_o_tmpfile_away():
    """The precondition of every case below: under the shim, outputs go
    through a named temporary of this host and this pid."""
    env = no_tmpfile_env()
    make_input("in.wav", 10)
    p = start(["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--taps", SLOW_TAPS, "--method", "direct",
               "-q"], env)
    seen = wait_for(lambda: temps("out"), "the temporary of out/o.wav")
    code, err = finish(p)
    assert code == 0, err
    m = temp_re("o.wav").match(seen[0])
    assert m, seen
    assert m.group(1) == host_tag() and int(m.group(2)) == p.pid, (seen, host_tag(), p.pid)
    assert visible("out") == ["o.wav"], visible("out")
    return "%s while it ran" % seen[0]


def test_two_filters_race_on_one_output():
    env = no_tmpfile_env()
    make_input("in.wav", 10)
    args = ["filter", "in.wav", "out/o.wav", "--lowpass", "3000", "--taps", SLOW_TAPS, "--method", "direct", "-q"]
    r = sh([a if a != "out/o.wav" else "ref/o.wav" for a in args])
    assert r.returncode == 0, r.stderr
    want = sha("ref/o.wav")
    overlapped = 0
    rounds = 12
    for i in range(rounds):
        if i % 4 == 0 and os.path.exists("out/o.wav"):
            os.remove("out/o.wav")  # also the case of a free target
        a = start(args, env)
        if i % 2 == 0:
            # B makes its temporary (and sweeps beside the target) while A's is there.
            wait_for(lambda: temps("out"), "A's temporary")
        # Whether B starts while A runs with its temporary there (always meant
        # after the wait; by chance when both start at once).
        overlapped += bool(temps("out")) and a.poll() is None
        b = start(args, env)
        ca, ea = finish(a)
        cb, eb = finish(b)
        assert ca == 0 and cb == 0, "round %d: exits %d, %d: %s | %s" % (i, ca, cb, ea[-500:], eb[-500:])
        assert visible("out") == ["o.wav"], (i, visible("out"))
        assert sha("out/o.wav") == want, "round %d: the output is not a single run's bytes" % i
    assert overlapped >= rounds // 4, "B started while A wrote in only %d of %d rounds" % (overlapped, rounds)
    return "%d rounds, %d with B started while A's temporary was there; both exit 0 each time, " \
        "output = one run's bytes" % (rounds, overlapped)


def test_two_forced_batches_race():
    env = no_tmpfile_env()
    os.makedirs("in", exist_ok=True)
    for i in range(3):
        make_input("in/f%d.wav" % i, 4 + 2 * i, seed=10 + i)
    open("b.yaml", "w").write(BATCH % {"taps": 4095, "threads": 2})
    r = sh(["batch", "b.yaml", "in", "--out-dir", "ref", "-q"])
    assert r.returncode == 0, r.stderr
    want = {f: sha(os.path.join("ref", f)) for f in os.listdir("ref") if f.endswith(".flac")}
    assert len(want) == 3, want
    rounds = 6
    for i in range(rounds):
        args = ["batch", "b.yaml", "in", "--out-dir", "out", "--force", "-q"]
        a = start(args, env)
        if i % 2 == 0:
            wait_for(lambda: temps("out"), "A's temporaries")
        b = start(args, env)
        ca, ea = finish(a)
        cb, eb = finish(b)
        assert ca == 0 and cb == 0, "round %d: exits %d, %d: %s | %s" % (i, ca, cb, ea[-500:], eb[-500:])
        assert temps("out") == [], (i, temps("out"))
        got = {f: sha(os.path.join("out", f)) for f in visible("out") if f.endswith(".flac")}
        assert got == want, "round %d: outputs differ from a single batch's" % i
        for f in visible("out"):
            if f.endswith(".json"):
                with open(os.path.join("out", f)) as j:
                    json.load(j)  # whole, parseable
    return "%d rounds: both exit 0, outputs = a single batch's, every JSON whole, no temporary left" % rounds


def test_a_file_committed_meanwhile_is_skipped():
    env = no_tmpfile_env()
    os.makedirs("in", exist_ok=True)
    make_input("in/big.wav", 20, seed=4)
    make_input("in/small.wav", 1, seed=5)
    with open("in/bad.wav", "w") as f:
        f.write("not audio, only text with a .wav name\n")
    open("b.yaml", "w").write(BATCH % {"taps": 16383, "threads": 1})
    # B: big first (largest first, one in flight), then small, then bad.
    b = start(["batch", "b.yaml", "in", "--out-dir", "out"], env)
    wait_for(lambda: [t for t in temps("out") if t.startswith(".big.")], "B's temporary of big")
    # A: what a retried task is, on small only; it commits while B is on big.
    r = sh(["batch", "b.yaml", "in/small.wav", "--out-dir", "out", "-q"], env=env)
    assert r.returncode == 0, r.stderr
    st = os.stat("out/small.flac")
    assert b.poll() is None, "B finished big before A committed small: make big longer"
    code, err = finish(b)
    assert code == 1, (code, err[-2000:])  # bad.wav failed
    assert "small.wav: up to date now (another process committed it" in err, err[-2000:]
    st2 = os.stat("out/small.flac")
    assert (st2.st_ino, st2.st_mtime_ns) == (st.st_ino, st.st_mtime_ns), "small.flac was committed again"
    with open("out/batch_summary.json") as f:
        summary = json.load(f)
    status = {os.path.basename(e["file"]): e["status"] for e in summary["files"]}
    assert status == {"big.wav": "ok", "small.wav": "skipped", "bad.wav": "failed"}, status
    assert summary["counts"]["skipped"] == 1 and summary["counts"]["ok"] == 1, summary["counts"]
    assert temps("out") == [], temps("out")
    return "small.wav committed once (by the other batch), a skip in this one; bad.wav failed"


def test_killed_batch_leaves_temps_the_next_removes_but_not_another_hosts():
    env = no_tmpfile_env()
    os.makedirs("in", exist_ok=True)
    make_input("in/long.wav", 20, seed=6)
    open("b.yaml", "w").write(BATCH % {"taps": 16383, "threads": 1})
    r = sh(["batch", "b.yaml", "in", "--out-dir", "ref", "-q"])
    assert r.returncode == 0, r.stderr
    want = sha("ref/long.flac")

    p = start(["batch", "b.yaml", "in", "--out-dir", "out", "-q"], env)
    wait_for(lambda: [t for t in temps("out") if t.startswith(".long.flac.")], "the temporary of long.flac")
    p.send_signal(signal.SIGKILL)
    code, _ = finish(p)
    assert code == -9, code
    left = temps("out")
    assert left, "SIGKILL left no temporary (is O_TMPFILE really off?)"
    for t in left:
        m = temp_re(t[1:].split(".sigstream-")[0]).match(t)
        assert m and m.group(1) == host_tag() and int(m.group(2)) == p.pid, (t, host_tag(), p.pid)
    assert "long.flac" not in visible("out")

    other = "elsewhere-node" if host_tag() != "elsewhere-node" else "elsewhere-node-2"
    foreign = [".long.flac.sigstream-%s-%d-Ab12Cd" % (other, p.pid), ".long.json.sigstream-%s-4242-Zz9999" % other]
    for f in foreign:
        with open(os.path.join("out", f), "w") as t:
            t.write("another host's run, maybe still writing")
    r = sh(["batch", "b.yaml", "in", "--out-dir", "out"], env=env)
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 0, err
    assert "removed %d temporary file(s) left by a killed run" % len(left) in err, err
    assert "2 temporary file(s) of other hosts left alone" in err, err
    assert sorted(temps("out")) == sorted(foreign), temps("out")
    assert sha("out/long.flac") == want
    return "killed batch left %s; the next run removed them, kept 2 of host '%s'" % (", ".join(left), other)


def test_killed_between_commits_the_retry_completes_them():
    if not COMMIT_SHIM or not os.path.exists(COMMIT_SHIM):
        raise Skip("no commit shim (SIGSTREAM_COMMIT_SHIM)")
    os.makedirs("in", exist_ok=True)
    make_input("in/a.wav", 2, seed=7)
    make_input("in/b.wav", 1, seed=8)
    open("b.yaml", "w").write(BATCH % {"taps": 255, "threads": 1} + "stats: {json: x.json, csv: x.csv}\n")
    r = sh(["batch", "b.yaml", "in", "--out-dir", "ref", "-q"])
    assert r.returncode == 0, r.stderr
    want = {f: sha("ref/" + f) for f in ("a.flac", "b.flac", "a.csv", "b.csv")}
    outcomes = []
    modes = [("O_TMPFILE", [])]
    if SHIM and os.path.exists(SHIM):
        modes.append(("no O_TMPFILE", [SHIM]))
    for mode, preload in modes:
        for stop_at in ("a.flac", "a.csv"):
            out, log, mark = "out_%d_%s" % (len(preload), stop_at), os.path.abspath("commits_%d_%s.log" % (len(preload), stop_at)), os.path.abspath("mark_%d_%s" % (len(preload), stop_at))
            env = shim_env(preload, SIGSTREAM_COMMIT_LOG=log)
            stall = dict(env, SIGSTREAM_STALL_PATH=stop_at, SIGSTREAM_STALL_ON="commit", SIGSTREAM_STALL_MARK=mark)
            p = start(["batch", "b.yaml", "in", "--out-dir", out, "-q"], stall)
            wait_for(lambda: os.path.exists(mark) and open(mark).read().strip(), "the batch to stop at " + stop_at, 60)
            assert int(open(mark).read()) == p.pid
            p.send_signal(signal.SIGKILL)
            code, _ = finish(p)
            assert code == -9, code
            assert "a.json" not in visible(out), visible(out)
            assert [t for t in temps(out) if t.startswith(".a.json.")], temps(out)

            r = sh(["batch", "b.yaml", "in", "--out-dir", out], env=env)
            err = r.stderr.decode(errors="replace")
            assert r.returncode == 0, err
            assert "completed the commits of 1 file(s)" in err, err
            commits = {}
            for line in open(log):
                pid, _, path = line.rstrip("\n").split("\t")
                commits.setdefault(os.path.basename(path), []).append(int(pid))
            for f in ("a.flac", "a.csv", "a.json", "b.flac", "b.csv", "b.json"):
                assert len(commits.get(f, [])) == 1, (mode, stop_at, f, commits)
            assert commits["a.flac"] == [p.pid], "the audio committed by the killed run only"
            assert temps(out) == [], temps(out)
            for f, h in want.items():
                assert sha(os.path.join(out, f)) == h, f
            with open(os.path.join(out, "a.json")) as f:
                assert json.load(f)["batch"]["commit"]["output"]["ino"] == os.stat(os.path.join(out, "a.flac")).st_ino
            outcomes.append("%s, killed after committing %s: every output committed once" % (mode, stop_at))
    return "; ".join(outcomes)


def test_a_batch_lists_its_output_folder_a_few_times_not_once_a_file():
    """Before each file's work a batch checks for a commit a dead writer left pending. That check
    listed the whole output folder for every file (work growing with the square of the files,
    and a folder lock every worker waited on: stop 44 measured a third of a long batch's rate on
    32 cores), and without O_TMPFILE each output's writer swept the folder again. Now a fresh
    batch lists its output folder a fixed number of times, however many files it writes there
    (the commit shim logs every opendir/fdopendir)."""
    if not COMMIT_SHIM or not os.path.exists(COMMIT_SHIM):
        raise Skip("no commit shim (SIGSTREAM_COMMIT_SHIM)")
    import shutil

    files = 40
    os.makedirs("many", exist_ok=True)
    make_input("many/f00.wav", 0.2, seed=11)
    for i in range(1, files):
        shutil.copy("many/f00.wav", "many/f%02d.wav" % i)
    open("m.yaml", "w").write(BATCH % {"taps": 31, "threads": 2} + "stats: {json: x.json, csv: x.csv}\n")
    modes = [("O_TMPFILE", [])]
    if SHIM and os.path.exists(SHIM):
        modes.append(("no O_TMPFILE", [SHIM]))
    seen = []
    for mode, preload in modes:
        out = os.path.abspath("listed_%d" % len(preload))
        log = os.path.abspath("lists_%d.log" % len(preload))
        env = shim_env(preload, SIGSTREAM_LIST_LOG=log)
        counts = []
        # Fresh (the folder appears with the first output), then forced over the outputs there.
        for extra in ([], ["--force"]):
            if os.path.exists(log):
                os.remove(log)
            r = sh(["batch", "m.yaml", "many", "--out-dir", out, "-q"] + extra, env=env)
            assert r.returncode == 0, r.stderr
            assert len([f for f in os.listdir(out) if f.endswith(".flac")]) == files, os.listdir(out)
            assert temps(out) == [], temps(out)
            lines = [l.rstrip("\n").split("\t") for l in open(log)] if os.path.exists(log) else []
            assert all(len(l) == 3 and l[1] == "list" for l in lines), lines[:3]
            counts.append(len([l for l in lines if os.path.realpath(l[2]) == os.path.realpath(out)]))
        # Fresh: nothing to sweep yet, no listing a file. Forced: the sweep at the start (which
        # shows that the shim sees the listings), and again none a file.
        assert counts[0] <= 2 and 1 <= counts[1] <= 2, (mode, counts, "listings for", files, "files")
        seen.append("%s: %d and %d listing(s) of the output folder for %d files" % (mode, *counts, files))
    return "; ".join(seen)


if __name__ == "__main__":
    run_cases([test_shim_takes_o_tmpfile_away, test_two_filters_race_on_one_output, test_two_forced_batches_race,
               test_a_file_committed_meanwhile_is_skipped,
               test_killed_batch_leaves_temps_the_next_removes_but_not_another_hosts,
               test_killed_between_commits_the_retry_completes_them,
               test_a_batch_lists_its_output_folder_a_few_times_not_once_a_file],
              BIN, "sigstream-commits-")
