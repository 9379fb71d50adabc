#!/usr/bin/env python3
"""Flags are config overrides checked by the schema (issue P12): one rule, one message.

Usage: python3 test_flag_overrides.py PATH_TO_sigstream

A bad value given by a `filter` (or `run`, `info`) flag is refused, exit 2,
with the same words as the same value in a YAML config: the schema's rule,
put in the flag's name instead of the key path ("--mode: 'bogus' is ..."
where the config says "c.yaml:4:20: stages.0.mode: 'bogus' is ..."). The
flag's message names no key path, no "--set" and no internal stage name. A
path that YAML would read as something else (quotes, '#', ': ', bytes that
are not UTF-8) still reaches the run as typed.
"""

import os
import subprocess
import sys
import wave

if len(sys.argv) < 2:
    print("usage: test_flag_overrides.py PATH_TO_sigstream", file=sys.stderr)
    sys.exit(2)

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from harness import run_cases  # noqa: E402

# The config a filter command stands for, with {fir}, {sink} and {execution}
# to fill in.
CONFIG = """version: 1
source: {{file: in.wav}}
stages:
  - {{type: fir, design: {{kind: lowpass, cutoff_hz: 3000}}{fir}}}
  - {{type: resample, to_hz: {to_hz}}}
  - {{type: gain, db: {db}}}
sink: {{file: out/o.wav{sink}}}
execution: {{backend: cpu{execution}}}
"""


def write_wav(path, frames=4801, rate=48000):
    with wave.open(path, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\0" * 4 * frames)


def sh(args, input_bytes=None):
    return subprocess.run([BIN, *args], capture_output=True, input=input_bytes)


def error_lines(p):
    text = p.stderr.decode(errors="replace")
    assert p.returncode == 2, (p.returncode, text)
    assert text.startswith("sigstream: error: "), text
    return text[len("sigstream: error: "):].strip().splitlines()


def config_what(key, **fill):
    """The schema's words for the config's problem at `key`."""
    values = {"fir": "", "to_hz": "16000", "db": "-6", "sink": "", "execution": ""}
    values.update(fill)
    with open("c.yaml", "w") as f:
        f.write(CONFIG.format(**values))
    lines = error_lines(sh(["run", "c.yaml"]))
    for line in lines:
        if (": " + key + ": ") in line:
            return line.split(": " + key + ": ", 1)[1]
    raise AssertionError("no line about %s in %r" % (key, lines))


def flag_what(flag, args):
    lines = error_lines(sh(["filter", "in.wav", "out/o.wav", "--backend", "cpu"] + args))
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith(flag + ": "), (flag, line)
    for word in ("--set", "stages.", "fir0", "gain2", "resample1"):
        assert word not in line, (word, line)
    return line[len(flag) + 2:]


def same_rule(flag, args, key, **fill):
    by_flag = flag_what(flag, args)
    by_config = config_what(key, **fill)
    assert by_flag == by_config, "%s %r says %r, the config's %s says %r" % (
        flag, args, by_flag, key, by_config)
    assert not os.path.exists("out/o.wav"), "an output was left"


def filter_flags_say_what_the_schema_says():
    write_wav("in.wav")
    lp = ["--lowpass", "3000"]
    same_rule("--mode", lp + ["--mode", "bogus"], "stages.0.mode", fir=", mode: bogus")
    same_rule("--method", lp + ["--method", "fastest"], "stages.0.method", fir=", method: fastest")
    same_rule("--format", lp + ["--format", "pcm8"], "sink.format", sink=", format: pcm8")
    same_rule("--type", lp + ["--type", "wave"], "sink.type", sink=", type: wave")
    same_rule("--quality", lp + ["--quality", "2"], "sink.quality", sink=", quality: 2")
    same_rule("--latency", lp + ["--latency", "0"], "execution.latency_ms", execution=", latency_ms: 0")
    same_rule("--resample", lp + ["--resample", "44100.5"], "stages.1.to_hz", to_hz="44100.5")
    same_rule("--resample", lp + ["--resample", "0"], "stages.1.to_hz", to_hz="0")
    same_rule("--gain-db", lp + ["--resample", "16000", "--gain-db", "1000"], "stages.2.db", db="1000")
    same_rule("--gain-db", lp + ["--resample", "16000", "--gain-db", "loud"], "stages.2.db", db="loud")


def design_flags_say_what_the_schema_says():
    write_wav("in.wav")
    design = "{kind: highpass, cutoff_hz: 300, taps: 100}"
    by_flag = flag_what("--taps", ["--highpass", "300", "--taps", "100"])
    with open("c.yaml", "w") as f:
        f.write(CONFIG.format(fir="", to_hz="16000", db="-6", sink="", execution="")
                .replace("design: {kind: lowpass, cutoff_hz: 3000}", "design: " + design))
    lines = error_lines(sh(["run", "c.yaml"]))
    assert any(line.endswith("stages.0.design.taps: " + by_flag) for line in lines), (by_flag, lines)
    by_flag = flag_what("--bandpass", ["--bandpass", "3000:300"])
    assert "not increasing" in by_flag, by_flag
    by_flag = flag_what("--window", ["--lowpass", "3000", "--window", "hamm"])
    assert "'hamm' is not a valid window" in by_flag, by_flag


def a_bad_value_is_not_taken_for_yaml():
    # "[1" and "a: b" are YAML (a list, a mapping), "kaiser:" too: each flag's
    # value stays the text typed.
    write_wav("in.wav")
    what = flag_what("--gain-db", ["--lowpass", "3000", "--gain-db", "[1"])
    assert what.startswith("'[1' is not a number"), what
    what = flag_what("--mode", ["--lowpass", "3000", "--mode", "a: b"])
    assert what.startswith("'a: b' is not a valid mode"), what
    what = flag_what("--window", ["--lowpass", "3000", "--window", "kaiser:"])
    assert "kaiser beta '' is not a number" in what, what


def run_and_info_flags_too():
    write_wav("in.wav")
    with open("c.yaml", "w") as f:
        f.write(CONFIG.format(fir="", to_hz="16000", db="-6", sink="", execution=""))
    lines = error_lines(sh(["run", "c.yaml", "--latency", "0"]))
    assert lines == ["--latency: " + config_what("execution.latency_ms", execution=", latency_ms: 0")], lines
    with open("c.yaml", "w") as f:
        f.write(CONFIG.format(fir="", to_hz="16000", db="-6", sink="", execution=""))
    lines = error_lines(sh(["run", "c.yaml", "--backend", "gpu"]))
    assert lines[0].startswith("--backend: 'gpu' is not a valid backend"), lines
    raw = ["--input-type", "raw", "--rate", "48000", "--channels", "2000", "--encoding", "s16le"]
    for cmd in (["info", "-"], ["filter", "-", "o.wav", "--lowpass", "1000"]):
        lines = error_lines(sh(cmd + raw, b"\0" * 64))
        assert lines == ["--channels: 2000 is out of range (expected an integer from 1 to 1024)"], lines


def paths_reach_the_run_as_typed():
    write_wav("in.wav")
    for name in ('we"ird\\: #.wav', b"a\xffb.wav"):
        path = os.fsdecode(name) if isinstance(name, bytes) else name
        write_wav(path)
        out = "o " + path
        # (--stats with a name that is not UTF-8 fails in the JSON writer, as
        # it did before flags were overrides: not this test's matter.)
        stats = ["--stats", "yes"] if isinstance(name, str) else []
        p = subprocess.run([BIN, "filter", path, out, "--lowpass", "3000", "-q"] + stats,
                           capture_output=True)
        assert p.returncode == 0, p.stderr
        assert os.path.exists(out), os.listdir(".")
        assert not stats or os.path.exists("yes"), os.listdir(".")
        p = subprocess.run([BIN, "info", path], capture_output=True)
        assert p.returncode == 0 and b"frames:      4801" in p.stdout, p


run_cases([filter_flags_say_what_the_schema_says, design_flags_say_what_the_schema_says,
           a_bad_value_is_not_taken_for_yaml, run_and_info_flags_too, paths_reach_the_run_as_typed],
          BIN, "sigstream-flag-overrides-")
