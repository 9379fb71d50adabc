#!/usr/bin/env python3
"""One line from a batch's SIGSTREAM_TRACE=1 log (core/trace.hpp): when the
batch's phases began (ms since the process started), when the files began
("source opened") and were committed ("outputs committed") as quantiles, the
median file's time from its start to its commit, and the mean number of
files in flight while any was.

Usage: bench/p11_trace_summary.py TRACE.txt
"""
from __future__ import annotations

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rates import quantile_index, steady_rate, trace_events  # noqa: E402


def summary(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        events = trace_events(f)
    if not events:
        return "no trace lines"
    first: dict[str, float] = {}
    for t, _, what in events:
        first.setdefault(what, t)
    begun = sorted(t for t, _, w in events if w == "source opened")
    done = sorted(t for t, _, w in events if w == "outputs committed")
    # A file's span: its worker thread's "source opened" to that thread's next commit.
    open_at: dict[int, float] = {}
    spans: list[float] = []
    for t, th, w in events:
        if w == "source opened":
            open_at[th] = t
        elif w == "outputs committed" and th in open_at:
            spans.append(t - open_at.pop(th))

    def q(xs: list[float], p: float) -> str:
        return f"{xs[quantile_index(len(xs), p)]:.0f}" if xs else "-"

    phases = " ".join(f"{k.split(': ', 1)[-1].split()[0]}={first[k]:.0f}"
                      for k in ("batch: inputs listed", "batch: resume checked", "batch: scheduled",
                                "batch: workers joined", "batch: summary written", "exit") if k in first)
    busy = ""
    if begun and done:
        wall = done[-1] - begun[0]
        busy = f" in flight {sum(spans) / wall:.1f}" if wall > 0 else ""
    rate = steady_rate([t / 1000.0 for t in done])
    return (f"{phases} | begun {q(begun, 0)}..{q(begun, 1)} committed 10/50/90/100% "
            f"{q(done, 0.1)}/{q(done, 0.5)}/{q(done, 0.9)}/{q(done, 1)}"
            f"{f' ({rate:.0f} files/s once started)' if rate else ''} | file median "
            f"{statistics.median(spans) if spans else 0:.0f} ms{busy} ({len(done)} files)")


if __name__ == "__main__":
    print(summary(sys.argv[1]))
