"""How a Dask batch's driver cuts the files into tasks as it sends them (``_TaskQueue``), and the
task sizes it chooses by default (sigstream.distributed's module docstring tells how a batch runs).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence
from typing import Optional


def auto_files_per_task(files: int, threads: int) -> int:
    """The most files a task takes by default: a worker thread's share of the files left (guided
    self-scheduling: tasks shrink as the batch goes), 1 to 64.

    A task costs its worker and the driver a few milliseconds whatever it runs (the task's round
    trip, the config parsed and the batch set up again), more than a light file's whole work: 400
    files of 3 s on 2 CPU workers took 2.88-2.89 s at one file a task and 1.46-1.49 s in tasks of
    several; on 4 x H100, 800 light files over one GPU worker of 16 threads, 4.85-5.39 s against
    1.66-1.77 s (bench/RESULTS.md, stop 45). A task costs the driver too, one after another, so
    the fewer the better while every thread has one and they end together. At most 64: a dead
    worker's retry runs its task again (skipping what it committed), and the progress bar moves a
    task at a time.
    """
    return max(1, min(64, -(-int(files) // max(1, int(threads)))))


# The driver's own time for a task (its submission, its result's gather and summary, one task
# after another): 162 tasks of 200 light files on four GPU workers of 16 threads took 0.44-0.54 s,
# 25-50 tasks of the same files 0.15-0.17 s (bench/RESULTS.md, stop 48; Dask 2026.8.0, 4 x H100).
TASK_COST_S = 0.0025


def least_files_per_task(threads: int, file_seconds: float) -> int:
    """The fewest files a task takes by default, so that the driver keeps up with the workers: at
    most half its time goes on tasks while every thread works, each on files of ``file_seconds``
    (a file's estimated seconds on one CPU thread, sigstream's estimate); 1 to 64, 1 where the
    estimate is unknown (0 or less)."""
    if not file_seconds > 0.0:
        return 1
    need = 2.0 * max(1, int(threads)) * TASK_COST_S / file_seconds
    return 64 if not need < 64.0 else max(1, math.ceil(need))


class _TaskQueue:
    """The files not yet sent, largest first, cut into tasks as they are sent.

    With files_per_task N, N files a task. By default each task takes at most a worker thread's
    share of what is left, in files (:func:`auto_files_per_task`) and in bytes:
    tasks shrink towards the end of the batch and a long file goes alone, so the threads end
    together whatever the files' sizes, and threads that join later still find work; but no
    task takes fewer files than the driver needs to keep up (:func:`least_files_per_task`, from
    ``seconds_per_byte``, the largest file's estimated seconds on one CPU thread over its bytes;
    0: unknown), nor more than a thread's share of the whole batch for that. The files
    of a task that failed come back one a task (:meth:`again`), before the rest: only a file that
    kills its worker on every try becomes a failed entry, not the files beside it in its task.
    """

    def __init__(self, sizes: Sequence[int], files_per_task: Optional[int], seconds_per_byte: float = 0.0) -> None:
        self._sizes = list(sizes)
        self._per = files_per_task
        self._seconds_per_byte = seconds_per_byte
        self._order = collections.deque(sorted(range(len(self._sizes)), key=lambda i: -self._sizes[i]))
        self._bytes = sum(self._sizes)
        self._singles: collections.deque[int] = collections.deque()

    def __bool__(self) -> bool:
        return bool(self._order or self._singles)

    def take(self, threads: int) -> list[int]:
        """The next task's files (non-empty; call only while the queue is not empty)."""
        if self._singles:
            return [self._singles.popleft()]
        cap: Optional[float] = None
        if self._per is not None:
            most = self._per
        else:
            # A thread's share of what is left, but at least the least the driver keeps up with,
            # sized on the file at the head (the largest left: a long one still goes alone) and no
            # more than a thread's share of the whole batch, so that every thread gets a task.
            head = self._sizes[self._order[0]]
            least = min(least_files_per_task(threads, self._seconds_per_byte * head),
                        auto_files_per_task(len(self._sizes), threads))
            most = max(auto_files_per_task(len(self._order), threads), least)
            cap = max(self._bytes / max(1, threads), least * head)
        task: list[int] = []
        got = 0
        while self._order and len(task) < most:
            size = self._sizes[self._order[0]]
            if task and cap is not None and got + size > cap:
                break
            task.append(self._order.popleft())
            got += size
        self._bytes -= got
        return task

    def again(self, files: Sequence[int]) -> None:
        """Files of a failed task: each in a task of its own, next."""
        self._singles.extend(files)

    def left(self) -> list[int]:
        """The files never sent."""
        return [*self._singles, *self._order]
