"""The driver the script tests share: run each case in a fresh temporary
working folder, print PASS/FAIL/SKIP per case and the closing
"N passed, M failed" line, exit 1 on any failure (77 if the binary is missing).
"""
import os
import subprocess
import sys
import tempfile
import time
import traceback


class Skip(Exception):
    """Raised by a case that cannot run here."""


def describe(p):
    """A finished subprocess for a failure message: its exit code and the tails of its output."""
    return "rc=%d stdout=%r stderr=%r" % (p.returncode, p.stdout[-800:], p.stderr[-1500:])


def expect_rc(p, rc):
    if p.returncode != rc:
        raise AssertionError("expected exit %d, got %s" % (rc, describe(p)))


def expect_in(needle, hay, what="message"):
    if needle.lower() not in hay.lower():
        raise AssertionError("%s does not contain %r: %r" % (what, needle, hay[-1500:]))


def files_under(root):
    """Every file under root, relative to it."""
    out = set()
    for d, _, files in os.walk(root):
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def write_pcm16(path, x, rate=48000):
    """x, a NumPy array (frames, channels) in [-1, 1), as a 16-bit WAV (rounded, clipped)."""
    import wave

    import numpy as np

    with wave.open(path, "wb") as w:
        w.setnchannels(x.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.clip(np.round(x * 32767), -32768, 32767).astype("<i2").tobytes())


def cuda_available(binary):
    """Whether `sigstream devices` lists a CUDA device."""
    r = subprocess.run([binary, "devices"], capture_output=True, text=True)
    return r.stdout.split(":")[0].strip().isdigit()


def run_cases(cases, binary, prefix):
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        print("sigstream binary not found: %s (skipped)" % binary)
        sys.exit(77)
    passed = failed = 0
    old = os.getcwd()
    for fn in cases:
        name = fn.__name__
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            os.chdir(tmp)
            try:
                note = fn()
                passed += 1
                print("PASS %s (%.2fs)%s" % (name, time.monotonic() - t0, ": " + note if note else ""))
            except Skip as e:
                print("SKIP %s: %s" % (name, e))
            except AssertionError as e:
                failed += 1
                print("FAIL %s: %s" % (name, e))
            except Exception:
                failed += 1
                print("FAIL %s: unexpected exception\n%s" % (name, traceback.format_exc()))
            finally:
                os.chdir(old)
        sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
