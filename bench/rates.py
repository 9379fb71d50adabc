"""A batch's rate once started, for the P11 benchmarks (bench/batch_bench.py,
bench/p11_trace_summary.py).

A batch's wall holds a fixed part that more files amortise (a process's start,
the CUDA driver's and the contexts', the exit) and a part that grows with the
files. The rate once started is the files done between the 10th and the 90th
percentile of their completion times over that span: the growing part's
rate, which the fixed part does not touch (nor the first wave's start nor the
last wave's tail). The floor's rate is measured the same way from its
processes' completion times, so the two compare like for like.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# One line of SIGSTREAM_TRACE=1 (core/trace.hpp): "... trace  12.345 ms t3   what".
TRACE_LINE = re.compile(r"trace\s+([0-9.]+) ms t(\d+)\s+(.*)$")


def trace_events(lines: Iterable[str]) -> list[tuple[float, int, str]]:
    """(milliseconds since the process started, thread, event) for each trace line."""
    events: list[tuple[float, int, str]] = []
    for line in lines:
        m = TRACE_LINE.search(line)
        if m:
            events.append((float(m.group(1)), int(m.group(2)), m.group(3).strip()))
    return events


def commit_times(lines: Iterable[str]) -> list[float]:
    """The seconds since the process started at which each file's outputs were
    committed, sorted."""
    return sorted(t / 1000.0 for t, _, what in trace_events(lines) if what == "outputs committed")


def quantile_index(n: int, p: float) -> int:
    """The index of the `p` quantile in `n` sorted values (0 <= p <= 1): the nearest, halves up."""
    return min(n - 1, max(0, int(p * (n - 1) + 0.5)))


def steady_rate(done_s: Sequence[float], lo: float = 0.1, hi: float = 0.9) -> float | None:
    """Files per second between the `lo` and `hi` quantiles of the completion
    times `done_s` (any order): None for fewer than 10 files or a span of no
    time, where there is no rate to tell."""
    if not 0.0 <= lo < hi <= 1.0:
        raise ValueError(f"quantiles {lo}, {hi}: want 0 <= lo < hi <= 1")
    times = sorted(done_s)
    if len(times) < 10:
        return None
    i, j = quantile_index(len(times), lo), quantile_index(len(times), hi)
    span = times[j] - times[i]
    return (j - i) / span if span > 0 else None
