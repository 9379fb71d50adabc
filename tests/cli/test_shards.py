#!/usr/bin/env python3
"""CLI tests for the shards of `sigstream batch` (SPEC §10): --shard I/N and
auto, --list-inputs, --inputs-from, per-shard summaries and --merge.

Usage: python3 test_shards.py PATH_TO_sigstream

Standard library only; real processes. Every case runs in a fresh temporary
working folder. One line per case, then "N passed, M failed"; exit 1 on any
failure, 77 when the binary is missing.
"""

import csv
import hashlib
import json
import os
import random
import subprocess
import sys
import wave

if len(sys.argv) < 2:
    print("usage: test_shards.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
TIMEOUT = 120

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from harness import run_cases, describe, expect_in, expect_rc, files_under  # noqa: E402

SLURM_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
              "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT")


# ---------------------------------------------------------------- helpers


def clean_env(**slurm):
    """This environment without any Slurm array variable, plus `slurm`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update({k: str(v) for k, v in slurm.items()})
    return env


def slurm_env(task_id, lo, hi, step, count):
    return clean_env(**dict(zip(SLURM_VARS, (task_id, lo, hi, step, count))))


def write_wav(path, frames, channels, rate, seed):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    rng = random.Random(seed)
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(rng.randbytes(frames * channels * 2))
    return path


def make_inputs(n, seed=26):
    """n small WAVs of odd lengths, a third of them in a subfolder."""
    rng = random.Random(seed)
    names = []
    for i in range(n):
        sub = "deep/" if i % 3 == 2 else ""
        frames = 2 * rng.randrange(800, 6000) + 1
        names.append(write_wav("in/%sclip%02d.wav" % (sub, i), frames, 1 + i % 2,
                               (16000, 22050, 8000)[i % 3], seed + i))
    return names


def write_text(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def config_text(db=-3.0, extra=""):
    return ("version: 1\n"
            "stages:\n"
            "  - type: fir\n"
            "    design: {kind: lowpass, cutoff_hz: 2500, taps: 63}\n"
            "    method: direct\n"
            "  - type: gain\n"
            "    db: %s\n"
            "sink: {file: x.wav}\n"
            "stats: {json: s.json, csv: s.csv}\n"
            "execution: {backend: cpu, threads: 1}\n"
            "batch:\n"
            "  inputs: [in]\n"
            "  out_dir: out\n%s") % (db, extra)


def run(args, env=None, stdin=None, timeout=TIMEOUT, cwd=None):
    return subprocess.run([BIN] + list(args), input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace", timeout=timeout,
                          env=env if env is not None else clean_env(), cwd=cwd,
                          **({} if stdin is not None else {"stdin": subprocess.DEVNULL}))


def outputs(root):
    """Per-file outputs (audio, .json, .csv), the summaries left out."""
    return {f for f in files_under(root) if not os.path.basename(f).startswith("batch_summary")}


def read(path):
    with open(path, "rb") as f:
        return f.read()


def load(path):
    with open(path) as f:
        return json.load(f)


def expect_same_outputs(got_root, want_root, what):
    """Audio and per-chunk CSV byte for byte (the JSON holds timings and paths)."""
    got, want = outputs(got_root), outputs(want_root)
    if got != want:
        raise AssertionError("%s: files differ: missing %r, extra %r"
                             % (what, sorted(want - got)[:8], sorted(got - want)[:8]))
    bad = [f for f in sorted(got) if not f.endswith(".json")
           and read(os.path.join(got_root, f)) != read(os.path.join(want_root, f))]
    if bad:
        raise AssertionError("%s: not byte-identical: %r" % (what, bad[:10]))
    if any(".sigstream-" in f for f in files_under(got_root)):
        raise AssertionError("%s: temporary files left: %r" % (what, sorted(files_under(got_root))))


def entries(summary, root):
    """(input, status, output relative to root) per file, in order."""
    return [(e["file"], e["status"], os.path.relpath(e["output"], root) if e["output"] else None)
            for e in summary["files"]]


def run_shards(n, out, extra=(), env=None):
    """n `--shard i/n` processes at once; returns their results."""
    procs = [subprocess.Popen([BIN, "batch", "cfg.yaml", "--shard", "%d/%d" % (i, n), "--out-dir", out,
                               "--no-progress"] + list(extra),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, errors="replace", env=env or clean_env())
             for i in range(n)]
    results = []
    for i, p in enumerate(procs):
        out_text, err = p.communicate(timeout=TIMEOUT)
        results.append((p.returncode, out_text, err))
    for i, (rc, o, e) in enumerate(results):
        if rc != 0:
            raise AssertionError("shard %d/%d: rc=%d stderr=%r" % (i, n, rc, e[-1500:]))
    return results


# ---------------------------------------------------------------- cases

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


@case
def four_shards_at_once_then_merge_equal_one_batch():
    make_inputs(13)
    write_text("cfg.yaml", config_text())
    expect_rc(run(["batch", "cfg.yaml", "--out-dir", "plain", "--no-progress"]), 0)
    plain = load("plain/batch_summary.json")
    if plain["counts"]["ok"] != 13:
        raise AssertionError("plain batch counts %r" % plain["counts"])

    run_shards(4, "out")
    sizes, shas = [], set()
    for i in range(4):
        s = load("out/batch_summary.%d-of-4.json" % i)
        if not os.path.exists("out/batch_summary.%d-of-4.csv" % i):
            raise AssertionError("no CSV of shard %d" % i)
        sh = s["shard"]
        if (sh["index"], sh["count"], sh["inputs_total"]) != (i, 4, 13):
            raise AssertionError("shard %d record %r" % (i, sh))
        shas.add((sh["inputs_sha256"], sh["config_sha256"]))
        sizes.append(len(s["files"]))
        # Positions i, i+4, ... of the sorted list.
        want = [e["file"] for e in plain["files"]][i::4]
        if [e["file"] for e in s["files"]] != want:
            raise AssertionError("shard %d files %r, expected %r" % (i, [e["file"] for e in s["files"]], want))
    if sizes != [4, 3, 3, 3] or len(shas) != 1:
        raise AssertionError("shard sizes %r, fingerprints %r" % (sizes, shas))
    if os.path.exists("out/batch_summary.json"):
        raise AssertionError("a shard wrote the batch's summary")

    # inputs_sha256 is the SHA-256 of the list --list-inputs prints.
    listed = run(["batch", "cfg.yaml", "--out-dir", "out", "--list-inputs"])
    expect_rc(listed, 0)
    digest = hashlib.sha256(listed.stdout.encode()).hexdigest()
    if digest != next(iter(shas))[0]:
        raise AssertionError("inputs_sha256 %s != sha256 of --list-inputs %s" % (next(iter(shas))[0], digest))

    m = run(["batch", "--merge", "out"])
    expect_rc(m, 0)
    expect_in("merged 4", m.stderr)
    merged = load("out/batch_summary.json")
    if merged.get("shards") != 4 or merged["counts"] != plain["counts"] or merged["exit_code"] != 0:
        raise AssertionError("merged summary %r" % {k: merged.get(k) for k in ("shards", "counts", "exit_code")})
    if entries(merged, "out") != entries(plain, "plain"):
        raise AssertionError("merged files %r\n!= plain %r" % (entries(merged, "out"), entries(plain, "plain")))
    if merged["frames"] != plain["frames"] or merged["bytes"] != plain["bytes"]:
        raise AssertionError("merged totals %r vs %r" % ((merged["frames"], merged["bytes"]),
                                                         (plain["frames"], plain["bytes"])))
    walls = [load("out/batch_summary.%d-of-4.json" % i)["wall_s"] for i in range(4)]
    if merged["wall_s"] != max(walls):
        raise AssertionError("merged wall_s %r, shards %r" % (merged["wall_s"], walls))
    with open("out/batch_summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    if [r["file"] for r in rows] != [e["file"] for e in plain["files"]]:
        raise AssertionError("merged CSV rows %r" % [r["file"] for r in rows])
    expect_same_outputs("out", "plain", "four shards")
    # Merged from another folder: out_dir as the shards wrote it, whose spelling their entries share.
    os.makedirs("elsewhere")
    expect_rc(run(["batch", "--merge", "../out/", "--quiet"], cwd="elsewhere"), 0)
    again = load("out/batch_summary.json")
    if again["out_dir"] != merged["out_dir"] or again["files"] != merged["files"]:
        raise AssertionError("merged from elsewhere: out_dir %r, was %r" % (again["out_dir"], merged["out_dir"]))


@case
def merge_guards_missing_mixed_n_changed_inputs_or_config():
    make_inputs(6)
    write_text("cfg.yaml", config_text())
    run_shards(4, "a")
    # Two shards missing: exit 1, the Slurm list, nothing written.
    os.remove("a/batch_summary.1-of-4.json")
    os.remove("a/batch_summary.3-of-4.json")
    p = run(["batch", "--merge", "a"])
    expect_rc(p, 1)
    if p.stdout.strip() != "--array=1,3":
        raise AssertionError("stdout %r, expected --array=1,3" % p.stdout)
    expect_in("--array=1,3", p.stderr)
    expect_in("no merged summary written", p.stderr)
    if os.path.exists("a/batch_summary.json") or os.path.exists("a/batch_summary.csv"):
        raise AssertionError("a merged summary was written with shards missing")
    # Rerun them: then the merge goes through.
    for i in (1, 3):
        expect_rc(run(["batch", "cfg.yaml", "--shard", "%d/4" % i, "--out-dir", "a", "--no-progress"]), 0)
    expect_rc(run(["batch", "--merge", "a", "--quiet"]), 0)
    if load("a/batch_summary.json")["counts"]["total"] != 6:
        raise AssertionError("merged counts %r" % load("a/batch_summary.json")["counts"])
    # A later merge with a shard missing leaves the earlier merged summary, and says so.
    before = load("a/batch_summary.json")
    os.remove("a/batch_summary.2-of-4.json")
    p = run(["batch", "--merge", "a"])
    expect_rc(p, 1)
    expect_in("is from an earlier run, left as it was", p.stderr)
    if load("a/batch_summary.json") != before:
        raise AssertionError("the earlier merged summary changed")

    # Mixed N.
    expect_rc(run(["batch", "cfg.yaml", "--shard", "0/2", "--out-dir", "b", "--no-progress"]), 0)
    expect_rc(run(["batch", "cfg.yaml", "--shard", "1/3", "--out-dir", "b", "--no-progress"]), 0)
    p = run(["batch", "--merge", "b"])
    expect_rc(p, 2)
    expect_in("disagree on N", p.stderr)
    expect_in("batch_summary.0-of-2.json", p.stderr)
    expect_in("batch_summary.1-of-3.json", p.stderr)
    if os.path.exists("b/batch_summary.json"):
        raise AssertionError("mixed N merged")

    # Changed config between shards (another gain through --set).
    expect_rc(run(["batch", "cfg.yaml", "--shard", "0/2", "--out-dir", "c", "--no-progress"]), 0)
    expect_rc(run(["batch", "cfg.yaml", "--shard", "1/2", "--out-dir", "c", "--no-progress",
                   "--set", "stages.1.db=-9"]), 0)
    p = run(["batch", "--merge", "c"])
    expect_rc(p, 2)
    expect_in("different configs", p.stderr)

    # Changed inputs between shards (a file added).
    expect_rc(run(["batch", "cfg.yaml", "--shard", "0/2", "--out-dir", "d", "--no-progress"]), 0)
    write_wav("in/added.wav", 999, 1, 16000, 5)
    expect_rc(run(["batch", "cfg.yaml", "--shard", "1/2", "--out-dir", "d", "--no-progress"]), 0)
    p = run(["batch", "--merge", "d"])
    expect_rc(p, 2)
    expect_in("different input lists", p.stderr)
    expect_in("batch_summary.1-of-2.json", p.stderr)
    if os.path.exists("d/batch_summary.json"):
        raise AssertionError("changed inputs merged")

    # Usage: --merge takes only DIR; a folder without shard summaries.
    p = run(["batch", "cfg.yaml", "--merge", "a"])
    expect_rc(p, 2)
    expect_in("takes no", p.stderr)
    os.makedirs("empty")
    p = run(["batch", "--merge", "empty"])
    expect_rc(p, 2)
    expect_in("no shard summaries", p.stderr)
    p = run(["batch"])
    expect_rc(p, 2)
    expect_in("CONFIG is required", p.stderr)


@case
def list_inputs_then_inputs_from_round_trip():
    make_inputs(9)
    write_text("cfg.yaml", config_text())
    expect_rc(run(["batch", "cfg.yaml", "--out-dir", "plain", "--no-progress"]), 0)
    p = run(["batch", "cfg.yaml", "--list-inputs"])
    expect_rc(p, 0)
    lines = p.stdout.splitlines()
    want = sorted(e["file"] for e in load("plain/batch_summary.json")["files"])
    if [l.split("\t")[0] for l in lines] != want:
        raise AssertionError("listed inputs %r, expected %r" % (lines, want))
    for l in lines:
        src, dst = l.split("\t")
        rel = os.path.relpath(src, "in")
        if dst != os.path.join("out", os.path.splitext(rel)[0] + ".wav"):
            raise AssertionError("listed output %r for %r" % (dst, src))
    if os.path.exists("out"):
        raise AssertionError("--list-inputs wrote %r" % sorted(files_under("out")))
    # Only the shard's lines with --shard.
    p = run(["batch", "cfg.yaml", "--list-inputs", "--shard", "1/4"])
    expect_rc(p, 0)
    if p.stdout.splitlines() != lines[1::4]:
        raise AssertionError("--shard 1/4 listed %r" % p.stdout.splitlines())

    # The list, with comments and blank lines, in every shard; a file added in
    # between is not taken (the shards see the listed files only).
    write_text("list.txt", "# planned\n\n" + "\n".join(lines) + "\n")
    expect_rc(run(["batch", "cfg.yaml", "--inputs-from", "list.txt", "--shard", "0/2", "--no-progress"]), 0)
    write_wav("in/late.wav", 1001, 1, 16000, 77)
    expect_rc(run(["batch", "cfg.yaml", "--inputs-from", "list.txt", "--shard", "1/2", "--no-progress"]), 0)
    expect_rc(run(["batch", "--merge", "out"]), 0)
    if load("out/batch_summary.json")["counts"]["ok"] != 9 or os.path.exists("out/late.wav"):
        raise AssertionError("listed run: counts %r" % load("out/batch_summary.json")["counts"])
    expect_same_outputs("out", "plain", "--inputs-from with shards")

    # One path a line on standard input; explicit outputs elsewhere.
    paths = "".join(l.split("\t")[0] + "\n" for l in lines[:3])
    p = run(["batch", "cfg.yaml", "--inputs-from", "-", "--out-dir", "o2", "--no-progress"], stdin=paths)
    expect_rc(p, 0)
    if load("o2/batch_summary.json")["counts"]["ok"] != 3:
        raise AssertionError("stdin list: %s" % describe(p))
    write_text("explicit.txt", "%s\telse/where/first.wav\n" % lines[0].split("\t")[0])
    p = run(["batch", "cfg.yaml", "--inputs-from", "explicit.txt", "--out-dir", "o3", "--no-progress"])
    expect_rc(p, 0)
    expect_in("outside --out-dir 'o3'", p.stderr)
    first = os.path.relpath(lines[0].split("\t")[1], "out")
    if read("else/where/first.wav") != read(os.path.join("plain", first)):
        raise AssertionError("explicit output differs from the plain batch's")
    for f in ("else/where/first.json", "else/where/first.csv", "o3/batch_summary.json"):
        if not os.path.exists(f):
            raise AssertionError("missing %s" % f)

    # Refused: INPUT as well; a malformed list (line named); colliding outputs.
    p = run(["batch", "cfg.yaml", "in/clip00.wav", "--inputs-from", "list.txt"])
    expect_rc(p, 2)
    expect_in("--inputs-from", p.stderr)
    write_text("bad.txt", "in/clip00.wav\n\nin/clip01.wav\tx.wav\ty.wav\n")
    p = run(["batch", "cfg.yaml", "--inputs-from", "bad.txt"])
    expect_rc(p, 2)
    expect_in("bad.txt:3:", p.stderr)
    write_text("clash.txt", "in/clip00.wav\tsame.wav\nin/clip01.wav\tsame.wav\n")
    p = run(["batch", "cfg.yaml", "--inputs-from", "clash.txt", "--out-dir", "o4"])
    expect_rc(p, 2)
    expect_in("both map to", p.stderr)
    if os.path.exists("o4") or os.path.exists("same.wav"):
        raise AssertionError("a refused list wrote files")
    p = run(["batch", "cfg.yaml", "--inputs-from", "nowhere.txt"])
    expect_rc(p, 2)
    expect_in("nowhere.txt", p.stderr)


@case
def shard_auto_from_slurm_variables_and_the_warning():
    make_inputs(5)
    write_text("cfg.yaml", config_text())
    full = run(["batch", "cfg.yaml", "--list-inputs"]).stdout.splitlines()
    # (--array, SLURM_ARRAY_TASK_ID, MIN, MAX, STEP, COUNT) -> shard index of 4
    accepted = [("0-3", 2, 0, 3, 1, 4, 2), ("1-4%2", 4, 1, 4, 1, 4, 3), ("1-4%2", 1, 1, 4, 1, 4, 0),
                ("0-6:2", 6, 0, 6, 2, 4, 3), ("0-6:2", 2, 0, 6, 2, 4, 1)]
    for array, tid, lo, hi, step, count, index in accepted:
        p = run(["batch", "cfg.yaml", "--list-inputs", "--shard", "auto"], env=slurm_env(tid, lo, hi, step, count))
        expect_rc(p, 0)
        if p.stdout.splitlines() != full[index::count]:
            raise AssertionError("--array=%s task %d: listed %r, expected shard %d/4 %r"
                                 % (array, tid, p.stdout.splitlines(), index, full[index::4]))
    # A real run: the summary is named after the shard.
    p = run(["batch", "cfg.yaml", "--shard", "auto", "--no-progress"], env=slurm_env(6, 0, 6, 2, 4))
    expect_rc(p, 0)
    if load("out/batch_summary.3-of-4.json")["shard"]["index"] != 3:
        raise AssertionError("auto shard summary %r" % load("out/batch_summary.3-of-4.json")["shard"])
    if "every file" in p.stderr:
        raise AssertionError("warned with --shard: %r" % p.stderr)

    # --array=1,3,7: MIN 1, MAX 7, COUNT 3.
    for step in (1, 2):
        p = run(["batch", "cfg.yaml", "--shard", "auto", "--out-dir", "r"], env=slurm_env(3, 1, 7, step, 3))
        expect_rc(p, 2)
        expect_in("not evenly stepped", p.stderr)
        expect_in("SLURM_ARRAY_TASK_COUNT='3'", p.stderr)
        expect_in("SLURM_ARRAY_TASK_MAX='7'", p.stderr)
    # Outside an array.
    p = run(["batch", "cfg.yaml", "--shard", "auto", "--out-dir", "r"])
    expect_rc(p, 2)
    expect_in("not inside a Slurm job array", p.stderr)
    expect_in("SLURM_ARRAY_TASK_ID", p.stderr)
    if os.path.exists("r"):
        raise AssertionError("a refused shard wrote %r" % sorted(files_under("r")))

    # Inside an array without --shard: a warning, even with --quiet; outside none.
    p = run(["batch", "cfg.yaml", "--out-dir", "w", "--quiet"], env=slurm_env(1, 0, 3, 1, 4))
    expect_rc(p, 0)
    expect_in("every file", p.stderr)
    expect_in("--shard auto", p.stderr)
    p = run(["batch", "cfg.yaml", "--out-dir", "w", "--no-progress"])
    expect_rc(p, 0)
    if "every file" in p.stderr or "SLURM" in p.stderr:
        raise AssertionError("warned outside an array: %r" % p.stderr)


@case
def malformed_shards_exit_2():
    make_inputs(2)
    write_text("cfg.yaml", config_text())
    for text in ("3/2", "-1/4", "a/b", "1/0", "2", "4/4", "1/2/3"):
        for args in (["--shard", text], ["--shard=" + text]):
            p = run(["batch", "cfg.yaml", "--no-progress"] + args)
            expect_rc(p, 2)
            expect_in("--shard", p.stderr)
            expect_in("I/N", p.stderr)
            if os.path.exists("out"):
                raise AssertionError("--shard %s wrote %r" % (text, sorted(files_under("out"))))


@case
def empty_values_are_usage_errors_not_absent_flags():
    # `--shard "$IDX"` with IDX unset must not run every file, nor `--out-dir=`
    # take the next argument as its folder.
    make_inputs(2)
    write_text("cfg.yaml", config_text())
    inputs = sorted(os.path.join("in", f) for f in files_under("in"))
    before = {f: read(f) for f in inputs}
    for flag in ("--shard", "--out-dir", "--inputs-from", "--stats", "--scheduler"):
        p = run(["batch", "cfg.yaml", "--no-progress", flag, ""])
        expect_rc(p, 2)
        expect_in(flag + ": expected", p.stderr)
        expect_in("got ''", p.stderr)
        p = run(["batch", "cfg.yaml", "--no-progress", flag, "--list-inputs"])
        expect_rc(p, 2)
        expect_in(flag + ": expected", p.stderr)
        expect_in("got '--list-inputs'", p.stderr)
        # `--flag=` with nothing after it, whatever comes next (an input, a flag).
        for nxt in ("--list-inputs", "-q", inputs[0]):
            p = run(["batch", "cfg.yaml", "--no-progress", flag + "=", nxt])
            expect_rc(p, 2)
            expect_in(flag + "= has no value after '='", p.stderr)
    p = run(["batch", "--merge", ""])
    expect_rc(p, 2)
    expect_in("--merge: expected", p.stderr)
    if {f: read(f) for f in inputs} != before:
        raise AssertionError("an input changed")
    for stray in ("out", "--list-inputs", "-q", "batch_summary.json"):
        if os.path.exists(stray):
            raise AssertionError("an empty value wrote %r" % stray)
    # A folder whose name starts with "--" is still reachable as ./--name.
    p = run(["batch", "cfg.yaml", "--no-progress", "--out-dir", "./--odd"])
    expect_rc(p, 0)
    if len(files_under("--odd")) < 2:
        raise AssertionError("./--odd holds %r" % sorted(files_under("--odd")))


@case
def the_summary_is_never_written_over_a_file_the_batch_reads_or_writes():
    # SPEC §5: `--stats in/a.wav` had replaced that input with the summary.
    make_inputs(4)
    write_text("cfg.yaml", config_text())
    p = run(["batch", "cfg.yaml", "--out-dir", "out", "--list-inputs"])
    expect_rc(p, 0)
    write_text("list.tsv", p.stdout)
    rows = [line.split("\t") for line in p.stdout.splitlines()]
    kept = {f: read(f) for f in ("cfg.yaml", "list.tsv", *[r[0] for r in rows])}
    cases = [
        ([], rows[1][0], "the input"),
        ([], rows[2][1], "an output of"),
        ([], "cfg.yaml", "the config"),
        ([], os.path.splitext(rows[2][1])[0] + ".summary", "an output of"),  # its CSV is that file's
        (["--shard", "1/2"], rows[0][0], "the input"),  # another shard's input
        (["--shard", "0/2", "--inputs-from", "list.tsv"], "list.tsv", "the input list"),
    ]
    for extra, target, what in cases:
        p = run(["batch", "cfg.yaml", "--no-progress", "--stats", target] + extra)
        expect_rc(p, 2)
        expect_in("would be written over " + what, p.stderr)
    if {f: read(f) for f in kept} != kept:
        raise AssertionError("a file the batch reads changed")
    if os.path.exists("out"):
        raise AssertionError("a refused summary path wrote %r" % sorted(files_under("out")))


@case
def bad_config_fails_a_shard_like_a_plain_batch():
    make_inputs(3)
    bad = [
        config_text(extra="bogus_key: 1\n"),                        # unknown key
        config_text().replace("cutoff_hz: 2500", "cutoff_hz: -5"),  # bad value
        config_text().replace("inputs: [in]", "inputs: [nowhere/*.wav]"),
    ]
    for text in bad:
        write_text("cfg.yaml", text)
        plain = run(["batch", "cfg.yaml", "--no-progress"])
        expect_rc(plain, 2)
        for shard in ("0/4", "3/4"):
            p = run(["batch", "cfg.yaml", "--shard", shard, "--no-progress"])
            expect_rc(p, 2)
            if p.stderr != plain.stderr:
                raise AssertionError("--shard %s said %r, a plain batch %r" % (shard, p.stderr, plain.stderr))
        p = run(["batch", "cfg.yaml", "--shard", "auto", "--no-progress"], env=slurm_env(1, 0, 3, 1, 4))
        expect_rc(p, 2)
        if p.stderr != plain.stderr:
            raise AssertionError("--shard auto said %r, a plain batch %r" % (p.stderr, plain.stderr))
    # Two inputs with one output (a.wav and a.aiff -> out/a.wav), whatever the shard.
    write_text("cfg.yaml", config_text())
    with open("in/clip00.aiff", "wb") as f:
        f.write(b"not really")
    plain = run(["batch", "cfg.yaml", "--no-progress"])
    expect_rc(plain, 2)
    expect_in("clip00.aiff", plain.stderr)
    for shard in ("0/2", "1/2"):
        p = run(["batch", "cfg.yaml", "--shard", shard, "--no-progress"])
        expect_rc(p, 2)
        if p.stderr != plain.stderr:
            raise AssertionError("--shard %s said %r, a plain batch %r" % (shard, p.stderr, plain.stderr))
    if os.path.exists("out"):
        raise AssertionError("a config error wrote %r" % sorted(files_under("out")))


# ---------------------------------------------------------------- driver


def main():
    run_cases(CASES, BIN, "sigstream-shards-cli-")


if __name__ == "__main__":
    main()
